// Which broker acknowledged a record: known only for batches sent once (a
// resent batch may be answered as a duplicate by another leader), per record
// offset, and forgotten once asked for.
import { expect } from 'chai';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { AckTracer } from './ack-tracer.js';

type ProduceReq = Parameters<BrokerConnection['produce']>[0];

/** A connection whose produce answers with `baseOffset` (or `errorCode`) for every partition. */
function fakeConnection(answer: { baseOffset: number; errorCode?: number }): BrokerConnection {
  return {
    produce: async (req: ProduceReq) => ({
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: answer.errorCode ?? 0, errorMessage: null, baseOffset: answer.baseOffset, logStartOffset: 0 })),
      })),
    }),
  } as unknown as BrokerConnection;
}

function request(baseSequence: number, records: number): ProduceReq {
  const batch = encodeRecordBatch({
    records: Array.from({ length: records }, (_, i) => ({ value: Buffer.from(`v${i}`), timestamp: 1 })),
    producerId: 7n, producerEpoch: 0, baseSequence,
  });
  return { acks: -1, timeoutMs: 1000, topics: [{ name: 't', partitions: [{ partition: 0, records: batch }] }] };
}

describe('chaos ack tracer', () => {
  it('names the broker of each record of a batch sent once, once', async () => {
    const tracer = new AckTracer();
    const conn = tracer.wrap(fakeConnection({ baseOffset: 10 }), 2);
    await conn.produce(request(0, 3));
    expect([10, 11, 12].map((o) => tracer.take('t', 0, o))).to.deep.equal([2, 2, 2]);
    expect(tracer.take('t', 0, 11)).to.equal(undefined);
    expect(tracer.take('t', 0, 13)).to.equal(undefined);
  });

  it('names no broker for a resent batch, nor for an error answer', async () => {
    const tracer = new AckTracer();
    const failing = tracer.wrap(fakeConnection({ baseOffset: -1, errorCode: 6 }), 1);
    const other = tracer.wrap(fakeConnection({ baseOffset: 20 }), 3);
    await failing.produce(request(5, 2));
    await other.produce(request(5, 2));
    expect(tracer.take('t', 0, 20)).to.equal(undefined);
    expect(tracer.take('t', 0, 21)).to.equal(undefined);
    // Another batch (next sequence) sent once is attributed again.
    await other.produce(request(7, 1));
    expect(tracer.take('t', 0, 20)).to.equal(3);
  });

  it('wraps a connection once', async () => {
    const tracer = new AckTracer();
    const conn = fakeConnection({ baseOffset: 0 });
    tracer.wrap(conn, 1);
    tracer.wrap(conn, 1);
    await conn.produce(request(0, 1));
    expect(tracer.take('t', 0, 0)).to.equal(1);
  });
});
