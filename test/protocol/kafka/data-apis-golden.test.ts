// Golden frames of Produce (v3-11), Fetch (v4-17), ListOffsets (v1-10) and
// OffsetForLeaderEpoch (v2-4): every served version's request and response
// decodes from its fixture and re-encodes byte-identically, with field values
// checked; a few frames are also built here byte by byte from the spec,
// without the codec, and must equal their fixture.

import { expect } from 'chai';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import { produceHandler } from '../../../src/server/kafka/produce.js';
import { fetchHandler } from '../../../src/server/kafka/fetch.js';
import { listOffsetsHandler } from '../../../src/server/kafka/list-offsets.js';
import { offsetForLeaderEpochHandler } from '../../../src/server/kafka/offset-for-leader-epoch.js';
import { checkGolden, loadGolden } from './golden.js';
import { BATCH, DATA_APIS } from './data-fixtures.js';

const handlers = new Map([[0, produceHandler], [1, fetchHandler], [2, listOffsetsHandler], [23, offsetForLeaderEpochHandler]]);

const int16 = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b; };
const int32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
const int64 = (n: number): Buffer => { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(n)); return b; };
const str = (s: string): Buffer => Buffer.concat([int16(s.length), Buffer.from(s)]);
const compactStr = (s: string): Buffer => Buffer.concat([Buffer.from([s.length + 1]), Buffer.from(s)]);

describe('Kafka data APIs: golden frames', () => {
  for (const api of DATA_APIS) {
    const handler = handlers.get(api.spec.apiKey)!;
    it(`${api.spec.name}: fixtures exist for exactly the served versions ${handler.minVersion}-${handler.maxVersion}`, () => {
      expect(api.versions).to.deep.equal(Array.from({ length: handler.maxVersion - handler.minVersion + 1 }, (_, i) => handler.minVersion + i));
    });
    for (const v of api.versions) {
      it(`${api.spec.name} v${v}: request and response round-trip byte-identically`, () => {
        const req = checkGolden(api.spec, api.dir, v, 'request');
        const res = checkGolden(api.spec, api.dir, v, 'response');
        checkFields(api.spec.apiKey, v, req, res);
      });
    }
  }

  it('Produce v3 request, built by hand: nullable transactionalId, int16 acks, records as int32-sized bytes', () => {
    const expected = Buffer.concat([
      int16(-1), int16(-1), int32(30_000),
      int32(1), str('orders'), int32(1), int32(2), int32(BATCH.length), BATCH,
    ]);
    expect(loadGolden('produce', 3, 'request').toString('hex')).to.equal(expected.toString('hex'));
  });

  it('Produce v9 request, built by hand: compact forms and empty tag sections', () => {
    const expected = Buffer.concat([
      Buffer.from([0]), int16(-1), int32(30_000),
      Buffer.from([2]), compactStr('orders'), Buffer.from([2]), int32(2), Buffer.from([BATCH.length + 1]), BATCH,
      Buffer.from([0, 0, 0]),
    ]);
    expect(loadGolden('produce', 9, 'request').toString('hex')).to.equal(expected.toString('hex'));
  });

  it('ListOffsets v1 response, built by hand: no throttle time, timestamp then offset', () => {
    const expected = Buffer.concat([
      int32(1), str('orders'), int32(2),
      int32(2), int16(0), int64(1_700_000_000_000), int64(41),
      int32(3), int16(6), int64(-1), int64(-1),
    ]);
    expect(loadGolden('list-offsets', 1, 'response').toString('hex')).to.equal(expected.toString('hex'));
  });

  it('OffsetForLeaderEpoch v4 request, built by hand: replicaId -2, compact arrays', () => {
    const expected = Buffer.concat([
      int32(-2), Buffer.from([2]), compactStr('orders'), Buffer.from([2]), int32(2), int32(5), int32(3), Buffer.from([0, 0, 0]),
    ]);
    expect(loadGolden('offset-for-leader-epoch', 4, 'request').toString('hex')).to.equal(expected.toString('hex'));
  });

  it('Fetch v4 request, built by hand: replicaId, maxWait, minBytes, maxBytes, isolation level', () => {
    const expected = Buffer.concat([
      int32(-1), int32(500), int32(1), int32(52_428_800), Buffer.from([1]),
      int32(1), str('orders'), int32(1), int32(2), int64(41), int32(1_048_576),
    ]);
    expect(loadGolden('fetch', 4, 'request').toString('hex')).to.equal(expected.toString('hex'));
  });
});

function checkFields(apiKey: number, v: number, req: Struct, res: Struct): void {
  const first = <T>(x: unknown): T => (x as T[])[0]!;
  switch (apiKey) {
    case 0: {
      expect(req.acks).to.equal(-1);
      const p = first<Struct>(first<Struct>(req.topicData).partitionData);
      expect(Buffer.from(p.records as Buffer).equals(BATCH)).to.equal(true);
      const parts = first<Struct>(res.responses).partitionResponses as Struct[];
      expect(parts[0]!.baseOffset).to.equal(41);
      expect(parts[0]!.logStartOffset).to.equal(v >= 5 ? 7 : -1);
      expect(parts[1]!.errorMessage).to.equal(v >= 8 ? 'not the leader' : null);
      if (v >= 10) expect(parts[1]!.currentLeader).to.deep.equal({ leaderId: 2, leaderEpoch: 5 });
      break;
    }
    case 1: {
      const t = first<Struct>(req.topics);
      if (v >= 13) expect(t.topicId).to.equal('0123456789abcdef0123456789abcdef');
      else expect(t.topic).to.equal('orders');
      expect(first<Struct>(t.partitions).currentLeaderEpoch).to.equal(v >= 9 ? 4 : -1);
      expect(req.rackId).to.equal(v >= 11 ? 'r1' : '');
      const parts = first<Struct>(res.responses).partitions as Struct[];
      expect(parts[0]!.highWatermark).to.equal(42);
      expect(Buffer.from(parts[0]!.records as Buffer).equals(BATCH)).to.equal(true);
      expect(parts[1]!.errorCode).to.equal(74);
      if (v >= 16) expect(first<Struct>(res.nodeEndpoints).host).to.equal('b2');
      break;
    }
    case 2: {
      const p = first<Struct>(first<Struct>(req.topics).partitions);
      expect(p.timestamp).to.equal(v >= 7 ? -3 : -1);
      expect(req.timeoutMs).to.equal(v >= 10 ? 5_000 : 0);
      const r = first<Struct>(first<Struct>(res.topics).partitions);
      expect([r.offset, r.leaderEpoch]).to.deep.equal([41, v >= 4 ? 4 : -1]);
      break;
    }
    default: {
      expect(req.replicaId, 'v2 has no replicaId: the default -2').to.equal(-2);
      const r = first<Struct>(first<Struct>(res.topics).partitions);
      expect([r.leaderEpoch, r.endOffset]).to.deep.equal([3, 40]);
    }
  }
}
