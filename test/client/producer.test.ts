// The Producer (with the real Client) against an in-process fake cluster
// (fake-cluster.ts) whose produce path runs the brokers' own idempotence
// rules and lets each test steer failures: batching by size and linger,
// buffer back-pressure, sticky partitioning, sequence numbers, retries after
// a leader change, dropped answers, in-order resends after OUT_OF_ORDER,
// epoch renewal after a hole, compression, timeouts and close. Real-cluster
// behaviour is in test/integration/producer.test.ts.
//
// Tests of timing (linger, deliveryTimeoutMs, maxBlockMs) run the client on a
// ManualClock/ManualScheduler: the test moves time and checks each bound to
// the millisecond, while the sockets underneath stay real.
import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import { Client } from '../../src/client/client.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { murmur2Partition } from '../../src/client/murmur2.js';
import { Producer, type ProducerOptions, type RecordMetadata } from '../../src/client/producer.js';
import { COMPRESSION_CODEC_MASK, CompressionType, RECORD_BATCH_HEADER_BYTES, readBatchHeader } from '../../src/record/batch-header.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors, SluiceError, isSluiceError, type ErrorInfo } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { FakeCluster, type ProduceAction } from './fake-cluster.js';

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets queued callbacks run (no timing involved: every pending microtask and I/O callback gets its turn). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

async function rejection(p: Promise<unknown>): Promise<SluiceError> {
  try {
    await p;
  } catch (err) {
    if (isSluiceError(err)) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

function expectCode(err: SluiceError, info: ErrorInfo): void {
  expect(err.errorName, err.message).to.equal(info.name);
}

/** A 64-byte value: with no key and no headers a record counts as 100 bytes (36 framing + 64). */
const pad = (s: string): string => s.padEnd(64, '.');
const RECORD_BYTES = 100;
/**
 * What one pad()ded record without key or headers takes in a batch as the
 * codec encodes it (batchBytes counts these bytes; the buffer memory counts
 * RECORD_BYTES, the Producer's upper-bound estimate).
 */
const ENCODED_RECORD_BYTES = encodeRecordBatch({ records: [{ value: Buffer.from(pad('m0')) }] }).length - RECORD_BATCH_HEADER_BYTES;
const LOG_OVERHEAD = 12;

describe('client: Producer', function () {
  this.timeout(30_000);
  let cluster: FakeCluster;
  let client: Client;
  let producer: Producer;
  /** The client's timers and clock in the tests of timing (null: real ones). */
  let manual: ManualScheduler | null;

  async function setup(opts: ProducerOptions = {}, topics: Record<string, number> = { t: 1 }, brokers = 1, manualTime = false): Promise<void> {
    cluster = await FakeCluster.start(brokers, topics);
    manual = manualTime ? new ManualScheduler() : null;
    client = new Client({
      bootstrap: cluster.urls, webSocketFactory: nodeWebSocketFactory, requestTimeoutMs: 400,
      retry: { retries: 5, initialRetryTimeMs: 5, maxRetryTimeMs: 50 },
      ...(manual ? { clock: manual.clock, scheduler: manual } : {}),
    });
    producer = new Producer(client, { rng: new SeededRng(11), retryBackoffMs: 5, retryBackoffMaxMs: 20, ackTimeoutMs: 100, ...opts });
  }

  afterEach(async () => {
    client?.close();
    await producer?.close().catch(() => undefined);
    await cluster?.stop();
  });

  /** Moves manual time in `stepMs` steps, letting real I/O run between them, until `cond` holds; returns the manual time then. */
  async function advanceUntil(what: string, cond: () => boolean, stepMs: number): Promise<number> {
    for (let steps = 0; !cond(); steps++) {
      if (steps > 10_000) throw new Error(`manual time ran out waiting for ${what}`);
      manual!.advance(stepMs);
      await settle();
    }
    return manual!.clock.monotonicMs();
  }

  /** A promise's outcome as a value, so a test can look at it without awaiting it. */
  function track<T>(p: Promise<T>): { settled: boolean; error: SluiceError | null } {
    const t = { settled: false, error: null as SluiceError | null };
    p.then(() => { t.settled = true; }, (err: SluiceError) => { t.settled = true; t.error = err; });
    return t;
  }

  const values = (topic: string, partition: number) => cluster.read(topic, partition).map((r) => r.value!.toString());

  it('resolves each record with its partition and offset, in input order; keys go to the murmur2 partition', async () => {
    await setup({}, { t: 6 });
    const msgs = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'].map((key, i) => ({ key, value: `v${i}`, headers: { n: String(i) } }));
    const res = await producer.send({ topic: 't', messages: msgs });
    expect(res).to.have.length(msgs.length);
    res.forEach((r, i) => {
      expect(r.topic).to.equal('t');
      expect(r.partition).to.equal(murmur2Partition(Buffer.from(msgs[i]!.key), 6));
      const stored = cluster.read('t', r.partition).find((x) => x.offset === r.offset)!;
      expect(stored.value!.toString()).to.equal(msgs[i]!.value);
      expect(stored.key!.toString()).to.equal(msgs[i]!.key);
      expect(stored.headers).to.deep.equal([{ key: 'n', value: Buffer.from(String(i)) }]);
    });
    const [explicit] = await producer.send({ topic: 't', messages: [{ key: 'alpha', value: 'x', partition: 5, timestamp: 1234 }] });
    expect(explicit!.partition).to.equal(5);
    expect(cluster.read('t', 5).at(-1)!.timestamp).to.equal(1234);
    const many = await producer.sendBatch({ topicMessages: [{ topic: 't', messages: [{ value: 'a', partition: 0 }] }, { topic: 't', messages: [{ value: 'b', partition: 1 }] }] });
    expect(many.map((r) => r.partition)).to.deep.equal([0, 1]);
    const bad = await rejection(producer.send({ topic: 't', messages: [{ value: 'x', partition: 6 }] }));
    expectCode(bad, Errors.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('fills batches to batchBytes under a long linger; flush sends the rest; sequences advance by record count', async () => {
    await setup({ lingerMs: 60_000, batchBytes: 4 * ENCODED_RECORD_BYTES });
    const sends = Array.from({ length: 10 }, (_, i) => producer.send({ topic: 't', messages: [{ value: pad(`m${i}`) }] }));
    await waitFor('two full batches', () => cluster.events.length >= 2);
    await settle();
    expect(cluster.events.map((e) => e.header.recordCount), 'the open batch waits for linger').to.deep.equal([4, 4]);
    // Full means the records' real encoded bytes reached batchBytes (not an estimate of them).
    expect(cluster.events.map((e) => e.header.batchLength + LOG_OVERHEAD - RECORD_BATCH_HEADER_BYTES)).to.deep.equal([4 * ENCODED_RECORD_BYTES, 4 * ENCODED_RECORD_BYTES]);
    await producer.flush();
    const results = (await Promise.all(sends)).flat();
    expect(cluster.events.map((e) => e.header.recordCount)).to.deep.equal([4, 4, 2]);
    expect(results.map((r) => r.offset)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(values('t', 0)).to.deep.equal(Array.from({ length: 10 }, (_, i) => pad(`m${i}`)));
    const headers = cluster.events.map((e) => e.header);
    expect(headers.map((h) => h.baseSequence)).to.deep.equal([0, 4, 8]);
    expect(new Set(headers.map((h) => `${h.producerId}/${h.producerEpoch}`))).to.deep.equal(new Set(['1000/0']));
    expect(producer.identity).to.deep.equal({ producerId: 1000n, producerEpoch: 0 });
  });

  it('sends a batch once lingerMs passes (to the millisecond, on the client clock), with the records that came meanwhile', async () => {
    await setup({ lingerMs: 500 }, { t: 1 }, 1, true);
    const warmUp = producer.send({ topic: 't', messages: [{ value: 'warm-up' }] });
    await waitFor('the producer id', () => producer.identity !== null);
    await settle();
    manual!.advance(499);
    await settle();
    expect(cluster.events, 'nothing before the linger passes').to.have.length(0);
    manual!.advance(1);
    expect((await warmUp)[0]!.offset).to.equal(0);
    const later = Promise.all([0, 1, 2].map((i) => producer.send({ topic: 't', messages: [{ value: `r${i}` }] })));
    await settle();
    manual!.advance(499);
    await settle();
    expect(cluster.events).to.have.length(1);
    manual!.advance(1);
    expect((await later).flat().map((r) => r.offset)).to.deep.equal([1, 2, 3]);
    expect(cluster.events.map((e) => e.header.recordCount)).to.deep.equal([1, 3]);
  });

  it('wakes its sender per batch, not per record: one timer for a batch\'s linger, however many records join it', async () => {
    await setup({ lingerMs: 500 }, { t: 1 }, 1, true);
    const warmUp = producer.send({ topic: 't', messages: [{ value: 'warm-up' }] });
    await waitFor('the producer id', () => producer.identity !== null);
    await settle();
    manual!.advance(500);
    await warmUp;
    await settle();
    let scheduled = 0;
    const schedule = manual!.schedule.bind(manual!);
    manual!.schedule = (delayMs, fn) => {
      scheduled++;
      return schedule(delayMs, fn);
    };
    const sends = Array.from({ length: 50 }, (_, i) => producer.send({ topic: 't', messages: [{ value: `r${i}` }] }));
    await settle();
    expect(scheduled, 'the new batch\'s linger timer, armed once').to.equal(1);
    manual!.advance(500);
    expect((await Promise.all(sends)).flat().map((r) => r.offset)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(cluster.events.map((e) => e.header.recordCount)).to.deep.equal([1, 50]);
  });

  it('keeps call order when a one-record send() follows calls still appending (metadata, several records)', async () => {
    await setup({ lingerMs: 0 }, { t: 1, u: 1 });
    // 'u' has no metadata yet, and a two-record call goes through the append chain: the one-record
    // calls behind them must not overtake them on the synchronous path.
    const first = producer.send({ topic: 'u', messages: [{ value: 'u0' }] });
    const pair = producer.send({ topic: 'u', messages: [{ value: 'u1' }, { value: 'u2' }] });
    const single = producer.send({ topic: 'u', messages: [{ value: 'u3' }] });
    await Promise.all([first, pair, single]);
    const more = [producer.send({ topic: 'u', messages: [{ value: 'u4' }, { value: 'u5' }] }), producer.send({ topic: 'u', messages: [{ value: 'u6' }] })];
    await Promise.all(more);
    expect(values('u', 0)).to.deep.equal(['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6']);
    expect((await single)[0]!.offset).to.equal(3);
  });

  it('fails a one-record send() on the fast path with the error of the general one, and returns its memory', async () => {
    await setup({ requestBytesMax: 200 });
    await producer.send({ topic: 't', messages: [{ value: 'metadata first' }] });
    expectCode(await rejection(producer.send({ topic: 't', messages: [{ value: 'x'.repeat(300) }] })), Errors.MESSAGE_TOO_LARGE);
    expectCode(await rejection(producer.send({ topic: 't', messages: [{ value: 'x', partition: -1 }] })), Errors.INVALID_PARTITIONS);
    expectCode(await rejection(producer.send({ topic: 't', messages: [{ value: 5 as unknown as string }] })), Errors.INVALID_REQUEST);
    expect(producer.bufferedBytes).to.equal(0);
  });

  it('stamps records with whole milliseconds of the client clock, even when that clock reads fractions (a simulated or offset clock)', async () => {
    await setup({ lingerMs: 0 }, { t: 1 }, 1, true);
    manual!.clock.set(1_767_225_608_268.6328);
    await producer.send({ topic: 't', messages: [{ value: 'now' }, { value: 'then', timestamp: 1234 }] });
    expect(cluster.read('t', 0).map((r) => r.timestamp)).to.deep.equal([1_767_225_608_268, 1234]);
  });

  it('with lingerMs 0, keeps filling the ready batch while every request slot is busy (as Kafka does)', async () => {
    await setup({ lingerMs: 0, maxInFlightRequestsPerConnection: 1 });
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    cluster.onProduce = () => ({ kind: 'delay', until: gate });
    const first = producer.send({ topic: 't', messages: [{ value: 'r0' }] });
    await waitFor('the first batch at the broker', () => cluster.events.length === 1);
    const later: Array<Promise<RecordMetadata[]>> = [];
    for (let i = 1; i <= 5; i++) {
      later.push(producer.send({ topic: 't', messages: [{ value: `r${i}` }] }));
      await settle(); // each send gets its own drain passes: the batch is ready, but no slot is free
    }
    expect(cluster.events).to.have.length(1);
    open();
    const offsets = [...(await first), ...(await Promise.all(later)).flat()].map((r) => r.offset);
    expect(offsets).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(cluster.events.map((e) => e.header.recordCount), 'one batch of what waited, not five of one').to.deep.equal([1, 5]);
    expect(values('t', 0)).to.deep.equal(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('fails a ready batch still waiting for a request slot once deliveryTimeoutMs passes', async () => {
    await setup({ lingerMs: 0, maxInFlightRequestsPerConnection: 1, deliveryTimeoutMs: 300, ackTimeoutMs: 100 }, { t: 1 }, 1, true);
    cluster.onProduce = () => ({ kind: 'delay', until: new Promise<void>(() => undefined) });
    const stuck = producer.send({ topic: 't', messages: [{ value: 'r0' }] });
    await waitFor('the first batch at the broker', () => cluster.events.length === 1);
    const waiting = track(producer.send({ topic: 't', messages: [{ value: 'r1' }] }));
    await settle();
    manual!.advance(299);
    await settle();
    expect(waiting.settled, 'still within deliveryTimeoutMs').to.equal(false);
    manual!.advance(1);
    await waitFor('the waiting batch to fail', () => waiting.settled);
    expectCode(waiting.error!, Errors.REQUEST_TIMED_OUT);
    expect(waiting.error!.message).to.match(/deliveryTimeoutMs 300/);
    // The one in flight fails when its request times out (the link's timer, on the client's injected scheduler too),
    // its delivery time being over.
    const inFlight = track(stuck);
    await settle();
    expect(inFlight.settled, 'the request in flight waits for its own timeout').to.equal(false);
    manual!.advance(60_000);
    await waitFor('the request in flight to time out', () => inFlight.settled);
    expectCode(inFlight.error!, Errors.REQUEST_TIMED_OUT);
  });

  it('makes send() wait while the buffer is full, and fails it after maxBlockMs', async () => {
    await setup({ bufferBytesMax: 3 * RECORD_BYTES, batchBytes: RECORD_BYTES, lingerMs: 0 }, { t: 1 }, 1, true);
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    cluster.onProduce = () => ({ kind: 'delay', until: gate });
    const first = [0, 1, 2].map((i) => producer.send({ topic: 't', messages: [{ value: pad(`a${i}`) }] }));
    await waitFor('three batches at the broker', () => cluster.events.length === 3);
    let fourthDone = false;
    const fourth = producer.send({ topic: 't', messages: [{ value: pad('a3') }] }).then((r) => { fourthDone = true; return r; });
    await settle();
    expect(producer.bufferedBytes).to.equal(3 * RECORD_BYTES);
    expect(fourthDone).to.equal(false);
    expect(cluster.events).to.have.length(3);
    open();
    await Promise.all(first);
    expect((await fourth)[0]!.offset).to.equal(3);
    await waitFor('memory given back', () => producer.bufferedBytes === 0);

    const blocked = new Producer(client, { bufferBytesMax: 2 * RECORD_BYTES, batchBytes: RECORD_BYTES, lingerMs: 0, maxBlockMs: 200 });
    cluster.onProduce = () => ({ kind: 'delay', until: new Promise(() => {}) });
    const atBroker = cluster.events.length;
    void blocked.send({ topic: 't', messages: [{ value: pad('b0') }, { value: pad('b1') }] }).catch(() => undefined);
    await waitFor('both batches at the broker', () => cluster.events.length === atBroker + 2);
    const third = track(blocked.send({ topic: 't', messages: [{ value: pad('b2') }] }));
    await settle();
    manual!.advance(199);
    await settle();
    expect(third.settled, 'still within maxBlockMs').to.equal(false);
    manual!.advance(1);
    await waitFor('the blocked send to fail', () => third.settled);
    const err = third.error!;
    expectCode(err, Errors.REQUEST_TIMED_OUT);
    expect(err.message).to.match(/buffer full/);
    expectCode(await rejection(blocked.send({ topic: 't', messages: [{ value: 'x'.repeat(3 * RECORD_BYTES) }] })), Errors.MESSAGE_TOO_LARGE);
  });

  it('sticks keyless records to one partition until its batch is full, then moves on', async () => {
    await setup({ lingerMs: 60_000, batchBytes: 4 * ENCODED_RECORD_BYTES }, { t: 6 });
    const sends = Array.from({ length: 12 }, (_, i) => producer.send({ topic: 't', messages: [{ value: pad(`k${i}`) }] }));
    const res = (await Promise.all(sends)).flat();
    expect(cluster.events.map((e) => e.header.recordCount)).to.deep.equal([4, 4, 4]);
    const parts = cluster.events.map((e) => e.partition);
    expect(parts[0]).to.not.equal(parts[1]);
    expect(parts[1]).to.not.equal(parts[2]);
    for (let i = 0; i < 12; i++) expect(res[i]!.partition).to.equal(parts[Math.floor(i / 4)]);
  });

  it('retries at the new leader after NOT_LEADER_OR_FOLLOWER, resending the same sequence', async () => {
    await setup({}, { t: 1 }, 2);
    await producer.send({ topic: 't', messages: [{ value: 'one' }] });
    cluster.setLeader('t', 0, 2);
    const [r] = await producer.send({ topic: 't', messages: [{ value: 'two' }] });
    expect(r!.offset).to.equal(1);
    const tries = cluster.events.slice(1).map((e) => ({ broker: e.brokerId, seq: e.header.baseSequence, code: e.errorCode }));
    expect(tries[0]).to.deep.equal({ broker: 1, seq: 1, code: Errors.NOT_LEADER_OR_FOLLOWER.code });
    expect(tries.at(-1)).to.deep.equal({ broker: 2, seq: 1, code: 0 });
    expect(values('t', 0)).to.deep.equal(['one', 'two']);
  });

  it('writes a batch once when its answer is lost: the retry is a duplicate answered with the original offset', async () => {
    await setup();
    cluster.onProduce = (e) => (e.attempt === 1 ? { kind: 'drop' } : undefined);
    const res = await producer.send({ topic: 't', messages: [{ value: 'a' }, { value: 'b' }] });
    expect(res.map((r) => r.offset)).to.deep.equal([0, 1]);
    expect(values('t', 0)).to.deep.equal(['a', 'b']);
    expect(cluster.events.map((e) => [e.header.baseSequence, e.duplicate, e.action])).to.deep.equal([[0, false, 'drop'], [0, true, 'none']]);
  });

  it('resends in order: batches behind a refused one come back OUT_OF_ORDER and follow it', async () => {
    await setup({ batchBytes: 1, lingerMs: 0 });
    await producer.send({ topic: 't', messages: [{ value: 'm0' }] });
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    cluster.onProduce = (e) => (e.header.baseSequence === 1 && e.attempt === 1 ? { kind: 'error', code: Errors.NOT_ENOUGH_REPLICAS.code, until: gate } : undefined);
    const sends = Array.from({ length: 5 }, (_, i) => producer.send({ topic: 't', messages: [{ value: `m${i + 1}` }] }));
    await waitFor('five more batches tried', () => cluster.events.length >= 6);
    expect(cluster.events.slice(2, 6).map((e) => e.errorCode)).to.deep.equal(Array(4).fill(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code));
    open();
    const res = (await Promise.all(sends)).flat();
    expect(res.map((r) => r.offset)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(values('t', 0)).to.deep.equal(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    const appended = cluster.events.filter((e) => e.errorCode === 0).map((e) => e.header.baseSequence);
    expect(appended).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(cluster.initCalls, 'no epoch renewal was needed').to.have.length(1);
  });

  it('waits for its first batch when the leader does not know the producer yet (UNKNOWN_PRODUCER_ID behind it)', async () => {
    await setup({ batchBytes: 1, lingerMs: 0 });
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    cluster.onProduce = (e) => (e.header.baseSequence === 0 && e.attempt === 1 ? { kind: 'error', code: Errors.NOT_ENOUGH_REPLICAS.code, until: gate } : undefined);
    const sends = Array.from({ length: 3 }, (_, i) => producer.send({ topic: 't', messages: [{ value: `m${i}` }] }));
    await waitFor('three batches tried', () => cluster.events.length >= 3);
    expect(cluster.events.slice(1, 3).map((e) => e.errorCode)).to.deep.equal(Array(2).fill(Errors.UNKNOWN_PRODUCER_ID.code));
    open();
    expect((await Promise.all(sends)).flat().map((r) => r.offset)).to.deep.equal([0, 1, 2]);
    expect(values('t', 0)).to.deep.equal(['m0', 'm1', 'm2']);
    expect(cluster.initCalls).to.have.length(1);
  });

  it('fails only the refused send on a non-retriable error; later batches go on under a new epoch', async () => {
    await setup({ batchBytes: 1, lingerMs: 0 });
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    cluster.onProduce = (e) => (e.header.baseSequence === 0 && e.header.producerEpoch === 0 && e.attempt === 1
      ? { kind: 'error', code: Errors.MESSAGE_TOO_LARGE.code, until: gate } : undefined);
    const sends = Array.from({ length: 4 }, (_, i) => producer.send({ topic: 't', messages: [{ value: `m${i}` }] }));
    await waitFor('four batches tried', () => cluster.events.length >= 4);
    open();
    expectCode(await rejection(sends[0]!), Errors.MESSAGE_TOO_LARGE);
    const rest = (await Promise.all(sends.slice(1))).flat();
    expect(values('t', 0)).to.deep.equal(['m1', 'm2', 'm3']);
    expect(rest.map((r) => r.offset)).to.deep.equal([0, 1, 2]);
    expect(cluster.initCalls).to.deep.equal([{ producerId: -1, producerEpoch: -1 }, { producerId: 1000, producerEpoch: 0 }]);
    const appended = cluster.events.filter((e) => e.errorCode === 0).map((e) => [e.header.producerEpoch, e.header.baseSequence]);
    expect(appended).to.deep.equal([[1, 0], [1, 1], [1, 2]]);
  });

  it('splits a batch the topic refuses as too large (records in order, same epoch, sequences kept), and sends that topic smaller batches from then on', async () => {
    await setup({ lingerMs: 60_000, batchBytes: 8 * ENCODED_RECORD_BYTES });
    // The topic takes at most 3 records' bytes per batch, as max.message.bytes would.
    const limit = RECORD_BATCH_HEADER_BYTES + 3 * ENCODED_RECORD_BYTES;
    cluster.onProduce = (e) => (e.header.batchLength + LOG_OVERHEAD > limit ? { kind: 'error', code: Errors.MESSAGE_TOO_LARGE.code } : undefined);
    const sends = Array.from({ length: 20 }, (_, i) => producer.send({ topic: 't', messages: [{ value: pad(`m${i}`) }] }));
    await producer.flush();
    const results = (await Promise.all(sends)).flat();
    expect(results.map((r) => r.offset)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    expect(values('t', 0)).to.deep.equal(Array.from({ length: 20 }, (_, i) => pad(`m${i}`)));
    const refused = cluster.events.filter((e) => e.errorCode === Errors.MESSAGE_TOO_LARGE.code);
    const appended = cluster.events.filter((e) => e.errorCode === 0);
    // Full batches of 8 are refused and split in halves of 4, refused again and split into 2s, which pass.
    expect(refused.length).to.be.within(3, 12);
    expect(refused.every((e) => e.header.recordCount > 3), 'only batches above the limit are refused').to.equal(true);
    expect(appended.every((e) => e.header.recordCount <= 3)).to.equal(true);
    expect(appended.map((e) => e.header.baseSequence)).to.deep.equal(appended.map((_, i) => appended.slice(0, i).reduce((n, e) => n + e.header.recordCount, 0)));
    expect(new Set(cluster.events.map((e) => e.header.producerEpoch)), 'no epoch bump: the split leaves no hole').to.deep.equal(new Set([0]));
    expect(cluster.initCalls).to.have.length(1);
    expect(producer.bufferedBytes).to.equal(0);
    // Learned: the next batches to the topic are small enough at once.
    const before = cluster.events.length;
    const more = Array.from({ length: 10 }, (_, i) => producer.send({ topic: 't', messages: [{ value: pad(`n${i}`) }] }));
    await producer.flush();
    expect((await Promise.all(more)).flat().map((r) => r.offset)).to.deep.equal(Array.from({ length: 10 }, (_, i) => 20 + i));
    expect(cluster.events.slice(before).map((e) => e.errorCode)).to.deep.equal(cluster.events.slice(before).map(() => 0));
  });

  it('fails a one-record batch the topic refuses as too large (nothing to split)', async () => {
    await setup({ lingerMs: 0 });
    cluster.onProduce = (e) => (e.header.recordCount === 1 && e.header.baseSequence === 0 ? { kind: 'error', code: Errors.MESSAGE_TOO_LARGE.code } : undefined);
    expectCode(await rejection(producer.send({ topic: 't', messages: [{ value: 'alone' }] })), Errors.MESSAGE_TOO_LARGE);
  });

  it('re-encodes under a new epoch when the leader lost the producer state (UNKNOWN_PRODUCER_ID)', async () => {
    await setup();
    await producer.send({ topic: 't', messages: [{ value: 'before' }] });
    cluster.forgetProducers('t', 0);
    const [r] = await producer.send({ topic: 't', messages: [{ value: 'after' }] });
    expect(r!.offset).to.equal(1);
    expect(values('t', 0)).to.deep.equal(['before', 'after']);
    expect(cluster.events.map((e) => e.errorCode)).to.deep.equal([0, Errors.UNKNOWN_PRODUCER_ID.code, 0]);
    expect(cluster.events.at(-1)!.header).to.include({ producerEpoch: 1, baseSequence: 0 });
  });

  it('checks acks against idempotence; without it, batches carry no producer id and acks=0 has no offsets', async () => {
    await setup();
    expect(() => new Producer(client, { acks: 1 })).to.throw(SluiceError).with.property('code', Errors.INVALID_CONFIG.code);
    expect(() => new Producer(client, { maxInFlightRequestsPerConnection: 6 })).to.throw(/at most 5/);
    expect(() => new Producer(client, { compression: 'brotli' as never })).to.throw(/compression/);
    expect(() => new Producer(client, { lingerMs: -1 })).to.throw(/lingerMs/);
    expectCode(await rejection(producer.send({ topic: 't', acks: 1, messages: [{ value: 'x' }] })), Errors.INVALID_CONFIG);

    const plain = new Producer(client, { idempotent: false, acks: 1, lingerMs: 0 });
    const [one] = await plain.send({ topic: 't', messages: [{ value: 'acks-1' }] });
    expect(one!.offset).to.equal(0);
    const [zero] = await plain.send({ topic: 't', acks: 0, messages: [{ value: 'acks-0' }] });
    expect(zero!.offset).to.equal(-1);
    await waitFor('the acks=0 record', () => cluster.read('t', 0).length === 2);
    expect(cluster.events.map((e) => [e.header.producerId, e.header.baseSequence])).to.deep.equal([[-1n, -1], [-1n, -1]]);
    await plain.close();
  });

  it('refuses malformed messages, and fails a send to an unknown topic after maxBlockMs', async () => {
    await setup({ maxBlockMs: 200 }, { t: 1 }, 1, true);
    const bad = [
      { value: 42 as unknown as string },
      { value: 'v', key: {} as unknown as string },
      { value: 'v', headers: { h: 7 as unknown as string } },
      { value: 'v', headers: [{ key: 1 as unknown as string, value: 'x' }] },
      { value: 'v', timestamp: 1.5 },
    ];
    for (const m of bad) {
      const err = await rejection(producer.send({ topic: 't', messages: [m] }));
      expect(['INVALID_REQUEST', 'INVALID_TIMESTAMP'], JSON.stringify(m)).to.include(err.errorName);
    }
    expectCode(await rejection(producer.send({ topic: '', messages: [{ value: 'v' }] })), Errors.INVALID_TOPIC);
    const unknown = track(producer.send({ topic: 'nope', messages: [{ value: 'v' }] }));
    const failedAtMs = await advanceUntil('the send to an unknown topic to fail', () => unknown.settled, 5);
    expectCode(unknown.error!, Errors.UNKNOWN_TOPIC_OR_PARTITION);
    expect(failedAtMs, 'retried (with backoff) until maxBlockMs, not longer').to.be.within(200, 220);
    expect(await producer.send({ topic: 't', messages: [] })).to.deep.equal([]);
    expect(producer.bufferedBytes).to.equal(0);
    const fine = producer.send({ topic: 't', messages: [{ value: 'fine' }] });
    await settle();
    manual!.advance(5); // the default linger
    expect((await fine)[0]!.offset, 'the producer still works').to.equal(0);
  });

  for (const [name, codec] of [['gzip', CompressionType.Gzip], ['lz4', CompressionType.Lz4]] as const) {
    it(`compresses batches with ${name}`, async () => {
      await setup({ compression: name, lingerMs: 60_000 });
      const msgs = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `value ${i} `.repeat(20) }));
      const sent = producer.send({ topic: 't', messages: msgs });
      await producer.flush();
      await sent;
      const [batch] = cluster.batchesOf('t', 0);
      expect(readBatchHeader(batch!).attributes & COMPRESSION_CODEC_MASK).to.equal(codec);
      expect(batch!.length).to.be.lessThan(msgs.reduce((n, m) => n + m.value.length, 0) / 4);
      expect(values('t', 0)).to.deep.equal(msgs.map((m) => m.value));
    });
  }

  it('fails records that cannot be delivered within deliveryTimeoutMs', async () => {
    await setup({ deliveryTimeoutMs: 300 }, { t: 1 }, 1, true);
    cluster.setLeader('t', 0, -1);
    const lost = track(producer.send({ topic: 't', messages: [{ value: 'lost' }] }));
    const failedAtMs = await advanceUntil('the undeliverable record to fail', () => lost.settled, 10);
    const err = lost.error!;
    expectCode(err, Errors.REQUEST_TIMED_OUT);
    expect(err.message).to.match(/deliveryTimeoutMs/);
    expect(failedAtMs, 'at the delivery deadline').to.be.within(300, 310);
    expect(producer.bufferedBytes).to.equal(0);
  });

  it('close() sends what is buffered, then refuses new records', async () => {
    await setup({ lingerMs: 60_000 });
    const pending = producer.send({ topic: 't', messages: [{ value: 'last words' }] });
    await producer.close();
    expect((await pending)[0]!.offset).to.equal(0);
    expectCode(await rejection(producer.send({ topic: 't', messages: [{ value: 'too late' }] })), Errors.NETWORK_EXCEPTION);
  });

  it('under random faults (refusals, lost and late answers) writes every record exactly once, in order, per partition', async () => {
    await setup({ lingerMs: 2, batchBytes: 3 * RECORD_BYTES }, { t: 3 });
    const rng = new SeededRng(2024);
    const firstTries = [0, 0, 0];
    cluster.onProduce = (e): ProduceAction | undefined => {
      // Certain faults on each partition's 2nd and 4th batch (so the checks below always have something to check), then random ones.
      const nth = e.attempt === 1 ? ++firstTries[e.partition]! : 0;
      if (nth === 2) return { kind: 'drop' };
      if (nth === 4) return { kind: 'error', code: Errors.NOT_ENOUGH_REPLICAS.code };
      const roll = rng.next();
      if (roll < 0.03) return { kind: 'drop' };
      if (roll < 0.12) return { kind: 'error', code: Errors.NOT_ENOUGH_REPLICAS.code };
      if (roll < 0.2) return { kind: 'delay', until: new Promise((r) => setTimeout(r, rng.range(1, 30))) };
      return undefined;
    };
    const sends: Array<Promise<RecordMetadata[]>> = [];
    const expected: string[][] = [[], [], []];
    for (let i = 0; i < 150; i++) {
      const partition = i % 3;
      const value = pad(`p${partition}-${i}`);
      expected[partition]!.push(value);
      sends.push(producer.send({ topic: 't', messages: [{ value, partition }] }));
      if (i % 10 === 9) await settle();
    }
    const res = (await Promise.all(sends)).flat();
    for (let p = 0; p < 3; p++) {
      expect(values('t', p), `partition ${p}`).to.deep.equal(expected[p]);
      const offsets = res.filter((r) => r.partition === p).map((r) => r.offset);
      expect(offsets).to.deep.equal(expected[p]!.map((_, i) => i));
    }
    expect(cluster.events.filter((e) => e.duplicate).length, 'lost answers were retried').to.be.at.least(3);
    expect(cluster.events.filter((e) => e.errorCode === Errors.NOT_ENOUGH_REPLICAS.code).length, 'refusals were retried').to.be.at.least(3);
  });
});
