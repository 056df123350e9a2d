// The tail cache (storage/tail-cache.ts) alone, and under a PartitionLog: it
// serves the newest appended bytes as views of the appended buffers, copies
// only when a read spans appends, stays within its byte budget across logs
// (oldest appends out first), forgets a log's tail when the file may no
// longer hold those bytes — and a log with it answers every read exactly as
// a log without it does (a seeded model check over appends, reads,
// truncations and rolls).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { TailCache } from '../../src/storage/tail-cache.js';
import { ManualClock } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { makeBatch, removeDir, tempDir } from './log-test-helpers.js';

const bytes = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

describe('TailCache', () => {
  it('serves a range within one append as a view of it, and a range across appends as one copy', () => {
    const cache = new TailCache(1 << 20);
    const tail = cache.tail();
    const a = bytes(100, 1);
    const b = bytes(50, 2);
    tail.appended(1000, a);
    tail.appended(1100, b);
    const view = tail.read(1010, 40)!;
    expect(view.buffer, 'no copy').to.equal(a.buffer);
    expect(view.equals(a.subarray(10, 50))).to.equal(true);
    const across = tail.read(1090, 30)!;
    expect(across.buffer).to.not.equal(a.buffer);
    expect(across.equals(Buffer.concat([a.subarray(90), b.subarray(0, 20)]))).to.equal(true);
    expect(tail.read(999, 10), 'before the tail').to.equal(null);
    expect(tail.read(1140, 20), 'past the end').to.equal(null);
    expect(cache.bytes).to.equal(150);
  });

  it('keeps all logs within its budget, dropping the oldest appends first, whichever log they belong to', () => {
    const cache = new TailCache(300);
    const [x, y] = [cache.tail(), cache.tail()];
    x.appended(0, bytes(100, 1));
    y.appended(0, bytes(100, 2));
    x.appended(100, bytes(100, 3));
    y.appended(100, bytes(100, 4)); // 400 > 300: x's first append goes
    expect(cache.bytes).to.equal(300);
    expect(x.read(0, 10)).to.equal(null);
    expect(x.read(100, 10)!.equals(bytes(10, 3))).to.equal(true);
    expect(y.read(0, 200)!.equals(Buffer.concat([bytes(100, 2), bytes(100, 4)]))).to.equal(true);
    y.appended(200, bytes(250, 5)); // drops y@0, x@100, y@100
    expect([x.bytes, y.bytes, cache.bytes]).to.deep.equal([0, 250, 250]);
    expect(y.read(200, 250)!.equals(bytes(250, 5))).to.equal(true);
    expect(y.read(150, 100)).to.equal(null);
  });

  it('forgets a tail on clear and after a gap; never holds more than it counts by much', () => {
    const cache = new TailCache(1 << 20);
    const tail = cache.tail();
    tail.appended(0, bytes(10, 1));
    tail.clear();
    expect([tail.bytes, cache.bytes, tail.read(0, 10)]).to.deep.equal([0, 0, null]);
    tail.appended(0, bytes(10, 1));
    tail.appended(20, bytes(10, 2)); // not where the last one ended: the file's bytes in between are not held
    expect(tail.read(0, 10)).to.equal(null);
    expect(tail.read(20, 10)!.equals(bytes(10, 2))).to.equal(true);
    const big = Buffer.alloc(4096, 9);
    const small = big.subarray(100, 200);
    tail.appended(30, small);
    expect(tail.read(30, 100)!.buffer, 'a small view of a big buffer is copied').to.not.equal(big.buffer);
    expect(tail.read(30, 100)!.equals(small)).to.equal(true);
    tail.appended(130, bytes(2 << 20, 3)); // larger than the whole budget: not held, and the tail before it is gone
    expect([tail.read(130, 10), tail.read(30, 10)]).to.deep.equal([null, null]);
  });

  it('lets go of the bytes of every chunk it drops: large appends and tails cleared on every append stay within the budget', () => {
    const budget = 4 << 20;
    const cache = new TailCache(budget);
    const [busy, gappy] = [cache.tail(), cache.tail()];
    let pos = 0;
    for (let i = 0; i < 3000; i++) {
      busy.appended(pos, bytes(1 << 20, i & 0xff)); // 1 MiB batches: all but the last four are evicted
      pos += 1 << 20;
      gappy.appended(i * 100, bytes(10, 1)); // never where the last one ended: cleared every time
      expect(cache.referencedBytes, `append ${i}`).to.be.at.most(budget);
    }
    expect(cache.bytes).to.equal(3 * (1 << 20) + 10);
    expect(cache.slots, 'passed and dropped slots are compacted away').to.be.at.most(2 * 1024 + 2);
    expect(busy.read(pos - 10, 10)!.equals(bytes(10, 2999 & 0xff))).to.equal(true);
  });
});

describe('PartitionLog with a tail cache', () => {
  let dir: string;
  let plainDir: string;
  beforeEach(() => {
    dir = tempDir('sluice-tail-');
    plainDir = tempDir('sluice-tail-plain-');
  });
  afterEach(() => {
    removeDir(dir);
    removeDir(plainDir);
  });

  it('serves what was just appended without reading the file', () => {
    const cache = new TailCache(1 << 20);
    const log = PartitionLog.open({ dir, clock: new ManualClock(), tailCache: cache });
    const batch = makeBatch({ records: 3, fill: 4 });
    log.append(batch, { leaderEpoch: 0 });
    // Overwrite the file's copy behind the log's back: a read from memory does not see it.
    const file = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.log'))!);
    fs.writeFileSync(file, Buffer.alloc(batch.length, 0));
    const read = log.read(0, 1 << 20);
    expect(read.records.buffer, 'the appended buffer itself').to.equal(batch.buffer);
    expect(read.records.equals(batch)).to.equal(true);
    log.truncateTo(0);
    expect(cache.bytes, 'a truncation forgets the tail').to.equal(0);
    log.close();
  });

  it('answers every read exactly as a log without it (seeded model check)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rng = new SeededRng(seed);
      removeDir(dir);
      removeDir(plainDir);
      fs.mkdirSync(dir);
      fs.mkdirSync(plainDir);
      const clock = new ManualClock();
      const config = { segmentBytes: 2048 + rng.int(4096) };
      const cache = new TailCache(rng.int(2) === 0 ? 600 : 1 << 20);
      const cached = PartitionLog.open({ dir, clock, config, tailCache: cache });
      const plain = PartitionLog.open({ dir: plainDir, clock, config });
      const trace: string[] = [];
      for (let step = 0; step < 300; step++) {
        const op = rng.int(10);
        if (op < 5) {
          const spec = { records: 1 + rng.int(5), valueBytes: 1 + rng.int(80), fill: rng.int(256) };
          const n = 1 + rng.int(2);
          const mk = (): Buffer => Buffer.concat(Array.from({ length: n }, () => makeBatch(spec)));
          cached.append(mk(), { leaderEpoch: 0 });
          plain.append(mk(), { leaderEpoch: 0 });
          trace.push(`append ${n}x${spec.records}`);
        } else if (op < 9) {
          const from = cached.logStartOffset + rng.int(cached.logEndOffset - cached.logStartOffset + 1);
          const max = 1 + rng.int(1500);
          trace.push(`read ${from} ${max}`);
          const a = cached.read(from, max);
          const b = plain.read(from, max);
          expect(a.records.equals(b.records), `seed ${seed}: ${trace.slice(-12).join('; ')}`).to.equal(true);
          expect([a.firstOffset, a.nextOffset]).to.deep.equal([b.firstOffset, b.nextOffset]);
        } else if (cached.logEndOffset > 0) {
          const to = rng.int(cached.logEndOffset);
          cached.truncateTo(to);
          plain.truncateTo(to);
          trace.push(`truncate ${to}`);
        }
      }
      expect(cache.bytes).to.be.at.most(cache.bytesMax);
      cached.close();
      plain.close();
    }
  });
});
