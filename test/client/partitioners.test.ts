// murmur2 against published vectors of the Java client's Utils.murmur2 (so
// keys land where Kafka puts them), and the default partitioner's rules:
// murmur2 for keys, sticky partitions for keyless records (KIP-480).
import { expect } from 'chai';
import { murmur2, murmur2Partition, toPositive } from '../../src/client/murmur2.js';
import { DefaultPartitioner } from '../../src/client/partitioners.js';
import { SeededRng } from '../../src/util/rng.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

// Kafka's clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java (testMurmur2).
const KAFKA_VECTORS: Record<string, number> = {
  '21': -973932308,
  'foobar': -790332482,
  'a-little-bit-long-string': -985981536,
  'a-little-bit-longer-string': -1486304829,
  'lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8': -58897971,
  'abc': 479470107,
};

// librdkafka's src/rdmurmur2.c unit test (its Java-compatible murmur2), as signed int32.
const LIBRDKAFKA_VECTORS: Record<string, number> = {
  'kafka': 0xd067cf64 | 0,
  'giberish123456789': 0x8f552b0c | 0,
  '1234': 0x9fc97b14 | 0,
  '234': 0xe7c009ca | 0,
  '34': 0x873930da | 0,
  '4': 0x5a4b5ca1 | 0,
  'PreAmbleWillBeRemoved,ThePrePartThatIs': 0x78424f1c | 0,
  'reAmbleWillBeRemoved,ThePrePartThatIs': 0x4a62b377 | 0,
  'eAmbleWillBeRemoved,ThePrePartThatIs': 0xe0e4e09e | 0,
  'AmbleWillBeRemoved,ThePrePartThatIs': 0x62b8b43f | 0,
  '': 0x106e08d9 | 0,
};

describe('client: murmur2 and partitioners', () => {
  describe('murmur2 (Java-client compatible)', () => {
    for (const [source, vectors] of [['Kafka UtilsTest', KAFKA_VECTORS], ['librdkafka', LIBRDKAFKA_VECTORS]] as const) {
      it(`matches ${source}'s vectors`, () => {
        for (const [key, hash] of Object.entries(vectors)) expect(murmur2(utf8(key)), JSON.stringify(key)).to.equal(hash);
      });
    }

    it('covers every tail length and non-ASCII bytes', () => {
      // Each tail length (0-3 bytes past a multiple of 4) takes its own branch; the vectors above include all four.
      const tails = new Set(Object.keys({ ...KAFKA_VECTORS, ...LIBRDKAFKA_VECTORS }).map((k) => utf8(k).length % 4));
      expect([...tails].sort()).to.deep.equal([0, 1, 2, 3]);
      // Bytes >= 0x80 must be read unsigned (Java masks them with 0xff): a sign-extension bug changes this hash.
      const high = Buffer.from([0xff, 0x80, 0x90, 0xa0, 0xfe]);
      expect(murmur2(high)).to.equal(murmur2(Uint8Array.from(high)));
      expect(murmur2(high)).to.not.equal(murmur2(Buffer.from([0x7f, 0x00, 0x10, 0x20, 0x7e])));
    });

    it('maps to partitions as toPositive(hash) % n', () => {
      expect(toPositive(-1)).to.equal(0x7fffffff);
      expect(toPositive(-2147483648)).to.equal(0);
      expect(toPositive(5)).to.equal(5);
      // 'foobar' hashes to -790332482 → positive 1357151166.
      expect(murmur2Partition(utf8('foobar'), 6)).to.equal(1357151166 % 6);
      expect(murmur2Partition(utf8('21'), 10)).to.equal((-973932308 & 0x7fffffff) % 10);
      for (const [key, hash] of Object.entries(LIBRDKAFKA_VECTORS)) {
        const p = murmur2Partition(utf8(key), 7);
        expect(p).to.be.within(0, 6);
        expect(p).to.equal((hash & 0x7fffffff) % 7);
      }
    });
  });

  describe('DefaultPartitioner', () => {
    const input = (key: Buffer | null, available = [0, 1, 2, 3, 4, 5]) => ({ topic: 't', key, partitionCount: 6, availablePartitions: available });

    it('puts keyed records on the murmur2 partition, whatever the stickiness', () => {
      const p = new DefaultPartitioner(new SeededRng(1));
      for (const key of ['a', 'b', 'foobar', 'order-17']) {
        expect(p.partition(input(utf8(key)))).to.equal(murmur2Partition(utf8(key), 6));
        p.onBatchClosed('t', murmur2Partition(utf8(key), 6));
        expect(p.partition(input(utf8(key)))).to.equal(murmur2Partition(utf8(key), 6));
      }
    });

    it('sticks keyless records to one partition until its batch closes, then moves to another', () => {
      const p = new DefaultPartitioner(new SeededRng(7));
      const seen: number[] = [];
      for (let batch = 0; batch < 30; batch++) {
        const first = p.partition(input(null));
        for (let i = 0; i < 5; i++) expect(p.partition(input(null))).to.equal(first);
        p.onBatchClosed('t', (first + 1) % 6); // another partition's batch closing changes nothing
        expect(p.partition(input(null))).to.equal(first);
        p.onBatchClosed('t', first);
        const next = p.partition(input(null));
        expect(next, 'switches to a different partition').to.not.equal(first);
        seen.push(next);
      }
      expect(new Set(seen).size, 'spreads over the partitions').to.be.greaterThan(3);
    });

    it('keeps stickiness per topic and prefers partitions with a leader', () => {
      const p = new DefaultPartitioner(new SeededRng(3));
      for (let i = 0; i < 20; i++) {
        const chosen = p.partition({ topic: `t${i}`, key: null, partitionCount: 6, availablePartitions: [2, 4] });
        expect([2, 4]).to.include(chosen);
      }
      const a = p.partition({ topic: 'x', key: null, partitionCount: 6, availablePartitions: [] });
      expect(a).to.be.within(0, 5);
      expect(p.stickyPartition('x')).to.equal(a);
      expect(p.stickyPartition('y')).to.equal(undefined);
    });

    it('with one partition, stays on it', () => {
      const p = new DefaultPartitioner(new SeededRng(5));
      const one = { topic: 't', key: null, partitionCount: 1, availablePartitions: [0] };
      expect(p.partition(one)).to.equal(0);
      p.onBatchClosed('t', 0);
      expect(p.partition(one)).to.equal(0);
    });
  });
});
