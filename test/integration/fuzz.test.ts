// Fuzzing a live 3-node cluster of combined `sluice server` processes (issue
// 5, "Bad input"): at least 10,000 seeded random and mutated frames
// (fuzz-frames.ts) over several connections to every broker, then checks that
//   - every broker process is alive and did exactly what the oracle says for
//     each frame: closed the connection for an undecodable one (1007, text
//     1003), answered a decodable one (a decodable response; never
//     UNKNOWN_SERVER_ERROR), stayed silent only for a produce with acks=0;
//   - a well-behaved client still produces and consumes on every partition;
//   - the topic written before the fuzzing (which the fuzzer only reads) is
//     byte for byte what it was, followed by exactly the new records;
//   - the topic the fuzzer produces to holds only batches that a produce the
//     broker accepted (errorCode 0, at its baseOffset) or left unanswered
//     (acks=0, connection closed first, timed out) sent, byte for byte; every
//     accepted produce is there; nothing from a rejected one is;
//   - every batch the broker accepted decodes.
// Replay: SLUICE_FUZZ_SEED=<seed> (the seed is in the suite's title);
// SLUICE_FUZZ_FRAMES=<n> changes the frame count.
import { expect } from 'chai';
import { type ProcessCluster } from './harness.js';
import {
  Connections, brokerUrls, connect, createTopic, openRaw, produceOk, readPartition, startBrokerCluster, waitForFullIsr,
  type PartitionContent, type RawSocket,
} from './broker-kit.js';
import { FrameGenerator, type FuzzFrame, type FuzzTargets, type ProduceEntry } from './fuzz-frames.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { decodeResponse } from '../../src/protocol/envelope.js';
import { LATEST_TIMESTAMP } from '../../src/protocol/apis/offsets.js';
import { decodeRecordBatch } from '../../src/record/record-batch.js';
import { batchSizeAt, baseOffsetOf, lastOffsetOf } from '../../src/record/batch-header.js';
import { Errors } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';

const SEED = Number(process.env.SLUICE_FUZZ_SEED ?? 0x5eed);
const FRAMES = Number(process.env.SLUICE_FUZZ_FRAMES ?? 12_000);
const FRAMES_MIN = Math.min(FRAMES, 10_000);
/** The fuzzing stops here even if frames are left (and then fails if fewer than FRAMES_MIN went out). */
const FUZZ_TIME_MS = 70_000;
const LANES = 6;
/** Frames awaiting an answer per connection. */
const WINDOW = 16;
const RESPONSE_PATIENCE_MS = 15_000;
const CLOSE_PATIENCE_MS = 5_000;
/** Past this many long polls waiting on one connection, it is replaced (the broker bounds requests in flight). */
const LONG_POLLS_PER_SOCKET_MAX = 32;

const KNOWN = 'fuzz-known';
const TARGET = 'fuzz-target';
const PARTITIONS = 2;

type Status = 'accepted' | 'rejected' | 'unknown';
interface TrackedEntry extends ProduceEntry {
  status: Status;
  baseOffset: number;
  readonly frame: number;
}

/** Everything the lanes learned: produce outcomes, oddities, counts. */
class Ledger {
  readonly entries: TrackedEntry[] = [];
  readonly anomalies: string[] = [];
  readonly counts = new Map<string, number>();

  count(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }

  anomaly(frame: FuzzFrame | null, what: string): void {
    const about = frame ? ` [frame ${frame.index}: ${frame.recipe.slice(0, 200)}]` : '';
    if (this.anomalies.length < 50) this.anomalies.push(`${what}${about}`);
    this.count('anomalies');
  }

  track(frame: FuzzFrame, produce: readonly (readonly ProduceEntry[])[]): TrackedEntry[][] {
    return produce.map((t) => t.map((e) => {
      const tracked: TrackedEntry = { ...e, status: 'unknown', baseOffset: -1, frame: frame.index };
      this.entries.push(tracked);
      return tracked;
    }));
  }
}

interface Waiting {
  readonly frame: FuzzFrame;
  readonly entries: TrackedEntry[][] | null;
  readonly timer: ReturnType<typeof setTimeout>;
  /** Holds a window slot (long polls do not). */
  readonly windowed: boolean;
}

/** Error codes after which a produce may still have been appended. */
function maybeAppended(code: number, message: unknown): boolean {
  if (code === Errors.REQUEST_TIMED_OUT.code || code === Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code) return true;
  return code === Errors.NOT_LEADER_OR_FOLLOWER.code && typeof message === 'string' && message.includes('while waiting');
}

function hasErrorCode(v: unknown, code: number, depth = 0): boolean {
  if (depth > 6 || typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return v.some((x) => hasErrorCode(x, code, depth + 1));
  const m = v as Record<string, unknown>;
  return m.errorCode === code || Object.values(m).some((x) => hasErrorCode(x, code, depth + 1));
}

/** One connection's worth of fuzzing: sends its frames in order, reconnecting whenever the broker closes. */
class Lane {
  private sock: RawSocket | null = null;
  private pending = new Map<number, Waiting>();
  private sentIds = new Set<number>();
  private windowUsed = 0;
  private longPolls = 0;
  private closeExpected = false;
  private wakeUp: (() => void) | null = null;
  /** Where the lane is, for a stalled run's report. */
  state = 'idle';

  constructor(private readonly url: string, private readonly ledger: Ledger) {}

  async run(frames: readonly FuzzFrame[], deadline: number): Promise<number> {
    let sent = 0;
    for (const frame of frames) {
      if (performance.now() > deadline) break;
      this.state = `frame ${frame.index} (${frame.expect.kind}; window ${this.windowUsed}, long polls ${this.longPolls})`;
      await this.send(frame);
      sent++;
    }
    this.state = `draining ${this.pending.size}`;
    await this.drain();
    this.state = 'closing';
    await this.closeSocket();
    this.state = 'done';
    return sent;
  }

  private async send(frame: FuzzFrame): Promise<void> {
    const ex = frame.expect;
    const id = ex.kind === 'close' ? null : ex.correlationId;
    if (this.sock && ((id !== null && this.sentIds.has(id)) || this.longPolls >= LONG_POLLS_PER_SOCKET_MAX)) await this.closeSocket();
    while (this.windowUsed >= WINDOW) await this.wait();
    const sock = this.sock ?? await this.open();
    if (ex.kind === 'close') return this.sendExpectingClose(sock, frame, ex.code);
    this.sentIds.add(ex.correlationId);
    const entries = ex.kind !== 'longPoll' && ex.produce ? this.ledger.track(frame, ex.produce) : null;
    if (ex.kind === 'none') {
      this.ledger.count('unanswered by design (acks=0)');
      sock.ws.send(frame.data, { binary: true });
      return;
    }
    const windowed = ex.kind === 'response';
    const patienceMs = RESPONSE_PATIENCE_MS + (ex.kind === 'longPoll' ? ex.waitMs : 0);
    const timer = setTimeout(() => {
      if (this.pending.get(ex.correlationId)?.frame !== frame) return;
      this.settle(ex.correlationId);
      this.ledger.anomaly(frame, `no response within ${patienceMs} ms`);
    }, patienceMs);
    this.pending.set(ex.correlationId, { frame, entries, timer, windowed });
    if (windowed) this.windowUsed++;
    else this.longPolls++;
    sock.ws.send(frame.data, { binary: typeof frame.data !== 'string' });
  }

  private async sendExpectingClose(sock: RawSocket, frame: FuzzFrame, code: number): Promise<void> {
    this.closeExpected = true;
    sock.ws.send(frame.data, { binary: typeof frame.data !== 'string' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const got = await Promise.race([sock.closed, new Promise<null>((r) => { timer = setTimeout(() => r(null), CLOSE_PATIENCE_MS); })]);
    clearTimeout(timer);
    this.ledger.count(`closed ${code}`);
    if (got === null) {
      this.ledger.anomaly(frame, `connection still open ${CLOSE_PATIENCE_MS} ms after a frame that does not decode`);
      await this.closeSocket();
    } else if (got !== code) {
      this.ledger.anomaly(frame, `closed with ${got}, expected ${code}`);
    }
  }

  private async open(): Promise<RawSocket> {
    const sock = await openRaw(this.url);
    this.sock = sock;
    this.sentIds = new Set();
    this.closeExpected = false;
    this.ledger.count('connections');
    sock.ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (this.sock === sock) this.onMessage(data, isBinary);
    });
    void sock.closed.then((code) => this.onClose(sock, code));
    return sock;
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    const decoded = decodeResponse(data);
    if (!isBinary || !decoded.ok) {
      this.ledger.anomaly(null, `undecodable response: ${decoded.ok ? 'a text frame' : decoded.reason}`);
      return;
    }
    const { correlationId, body } = decoded.value;
    const w = this.settle(correlationId);
    if (!w) {
      if (!this.sentIds.has(correlationId)) this.ledger.anomaly(null, `response to correlation id ${correlationId}, never sent on this connection`);
      return;
    }
    this.ledger.count('responses');
    if (hasErrorCode(body, Errors.UNKNOWN_SERVER_ERROR.code)) this.ledger.anomaly(w.frame, `UNKNOWN_SERVER_ERROR in ${JSON.stringify(body).slice(0, 300)}`);
    if (w.entries) this.settleProduce(w, body as Record<string, unknown>);
  }

  private settleProduce(w: Waiting, body: Record<string, unknown>): void {
    const entries = w.entries!;
    if (typeof body.errorCode === 'number' && body.errorCode !== 0) {
      for (const e of entries.flat()) e.status = 'rejected';
      return;
    }
    const topics = body.topics as Array<{ partitions?: Array<Record<string, unknown>> }> | undefined;
    entries.forEach((t, i) => t.forEach((e, j) => {
      const p = topics?.[i]?.partitions?.[j];
      if (!p || typeof p.errorCode !== 'number') {
        this.ledger.anomaly(w.frame, `produce response without partition ${i}/${j}: ${JSON.stringify(body).slice(0, 300)}`);
        return;
      }
      if (p.errorCode === 0) {
        e.status = 'accepted';
        e.baseOffset = p.baseOffset as number;
        this.ledger.count('produce entries accepted');
      } else if (!maybeAppended(p.errorCode, p.errorMessage)) {
        e.status = 'rejected';
      }
    }));
  }

  private settle(correlationId: number): Waiting | undefined {
    const w = this.pending.get(correlationId);
    if (!w) return undefined;
    this.pending.delete(correlationId);
    clearTimeout(w.timer);
    if (w.windowed) this.windowUsed--;
    else this.longPolls--;
    this.wake();
    return w;
  }

  private onClose(sock: RawSocket, code: number): void {
    if (this.sock !== sock) return;
    this.sock = null;
    if (!this.closeExpected) this.ledger.anomaly(null, `connection to ${this.url} closed (${code}) with no malformed frame sent`);
    // Unanswered produces stay 'unknown': the broker may have appended them before the close.
    for (const id of [...this.pending.keys()]) this.settle(id);
    this.wake();
  }

  private async closeSocket(): Promise<void> {
    const sock = this.sock;
    if (!sock) return;
    this.closeExpected = true;
    sock.ws.close(1000, 'lane done');
    await sock.closed;
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0) await this.wait();
  }

  private wait(): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = resolve;
    });
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }
}

/** The batches of a read partition whose base offset is at or after `offset`. */
function batchesFrom(content: PartitionContent, offset: number): Buffer[] {
  return content.batches.filter((b) => baseOffsetOf(b) >= offset);
}

/** Same batch as sent, ignoring what the leader stamps (base offset, partition leader epoch). */
function sameBatch(stored: Buffer, sent: Buffer): boolean {
  return stored.length === sent.length && stored.subarray(8, 12).equals(sent.subarray(8, 12)) && stored.subarray(16).equals(sent.subarray(16));
}

function splitBatches(records: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let pos = 0; pos + 12 <= records.length;) {
    const size = batchSizeAt(records, pos);
    if (size < 12 || pos + size > records.length) break;
    out.push(records.subarray(pos, pos + size));
    pos += size;
  }
  return out;
}

/**
 * Explains every batch the fuzzer's produces left in one partition (offsets
 * [from, until)) by an accepted produce at its baseOffset or an unanswered
 * one; returns the problems.
 */
function accountFor(topic: string, partition: number, content: PartitionContent, from: number, until: number, entries: readonly TrackedEntry[]): string[] {
  const problems: string[] = [];
  const mine = entries.filter((e) => e.topic === topic && e.partition === partition);
  const accepted = new Map(mine.filter((e) => e.status === 'accepted').map((e) => [e.baseOffset, e] as const));
  const unknown = mine.filter((e) => e.status === 'unknown');
  const used = new Set<TrackedEntry>();
  const log = batchesFrom(content, from).filter((b) => baseOffsetOf(b) < until);
  for (let i = 0; i < log.length;) {
    const at = baseOffsetOf(log[i]!);
    const fits = (e: TrackedEntry) => {
      const sent = splitBatches(e.records);
      return sent.length > 0 && sent.every((s, k) => log[i + k] !== undefined && sameBatch(log[i + k]!, s)) ? sent.length : 0;
    };
    const a = accepted.get(at);
    const e = a ?? unknown.find((u) => !used.has(u) && fits(u) > 0);
    const n = e ? fits(e) : 0;
    if (!e || n === 0) {
      problems.push(`${topic}-${partition}: batch at offset ${at} matches no accepted or unanswered produce${a ? ` (accepted frame ${a.frame} sent other bytes)` : ''}`);
      i++;
      continue;
    }
    used.add(e);
    i += n;
  }
  for (const [offset, e] of accepted) if (!used.has(e)) problems.push(`${topic}-${partition}: accepted produce of frame ${e.frame} at ${offset} is not in the log`);
  return problems;
}

describe(`fuzzing a live 3-node cluster with ${FRAMES} frames (seed ${SEED}; replay: SLUICE_FUZZ_SEED=${SEED})`, function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let bootstrap: BrokerConnection;
  const conns = new Connections();
  const ledger = new Ledger();
  const initial = new Map<string, PartitionContent>();
  const knownValues = (p: number, i: number) => `known ${p}/${i}`;

  const leaderConn = async (topic: string, partition: number): Promise<BrokerConnection> => {
    const leader = (await bootstrap.metadata([topic])).topics[0]!.partitions[partition]!.leader;
    return conns.get((await brokerUrls(bootstrap)).get(leader)!);
  };

  before(async () => {
    cluster = await startBrokerCluster(3);
    bootstrap = await connect(cluster.node(1).brokerUrl);
    await createTopic(bootstrap, KNOWN, PARTITIONS, 3);
    await createTopic(bootstrap, TARGET, PARTITIONS, 3);
    const rng = new SeededRng(SEED ^ 0x51ce);
    for (let p = 0; p < PARTITIONS; p++) {
      for (let i = 0; i < 40;) {
        const n = rng.range(1, 4);
        await produceOk(conns, bootstrap, KNOWN, p, Array.from({ length: n }, (_, k) => ({ key: `k${i + k}`, value: knownValues(p, i + k) })));
        i += n;
      }
      await produceOk(conns, bootstrap, TARGET, p, [{ value: `seed of ${TARGET}-${p}` }]);
      for (const topic of [KNOWN, TARGET]) initial.set(`${topic}-${p}`, await readPartition(await leaderConn(topic, p), topic, p));
    }
  });

  after(async () => {
    conns.closeAll();
    bootstrap?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`--- last output of the nodes ---\n${cluster.dumpLogs()}`);
  });

  it(`sends ${FRAMES} random and mutated frames; each is answered or its connection closed as the protocol says`, async () => {
    const meta = await bootstrap.metadata([KNOWN, TARGET]);
    const targets: FuzzTargets = {
      topics: meta.topics.map((t) => ({
        name: t.name, partitions: t.partitions.length,
        leaderEpochs: t.partitions.map((p) => p.leaderEpoch),
        logEnds: t.partitions.map((p) => initial.get(`${t.name}-${p.partition}`)!.highWatermark),
      })),
      produceTopic: TARGET,
      brokerIds: meta.brokers.map((b) => b.nodeId),
    };
    if (process.env.SLUICE_FUZZ_DEBUG) console.log(`      targets: ${JSON.stringify(targets)}`);
    const gen = new FrameGenerator(new SeededRng(SEED), targets, {});
    const frames = Array.from({ length: FRAMES }, () => gen.next());
    const urls = cluster.brokerUrls;
    const lanes = Array.from({ length: LANES }, (_, i) => new Lane(urls[i % urls.length]!, ledger));
    const started = performance.now();
    const progress = process.env.SLUICE_FUZZ_DEBUG ? setInterval(() => console.log(lanes.map((l, i) => `lane ${i}: ${l.state}`).join('\n')), 5_000) : undefined;
    const sent = await Promise.all(lanes.map((lane, i) => lane.run(frames.filter((f) => f.index % LANES === i), started + FUZZ_TIME_MS)));
    clearInterval(progress);
    const total = sent.reduce((a, b) => a + b, 0);
    const tally = [...ledger.counts].map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`      fuzz: ${total} frames in ${Math.round(performance.now() - started)} ms; ${tally}`);
    for (const n of cluster.nodes) expect(n.running, `node ${n.id} is alive`).to.equal(true);
    const anomalies = ledger.counts.get('anomalies') ?? 0;
    expect(anomalies, `frames the broker did not handle as the protocol says (first ${ledger.anomalies.length}):\n${ledger.anomalies.join('\n')}\n`).to.equal(0);
    expect(total, 'frames sent before the time bound').to.be.at.least(FRAMES_MIN);
  });

  it('then a well-behaved client produces and reads back; the known topic is intact byte for byte', async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      await waitForFullIsr(bootstrap, KNOWN, PARTITIONS);
      const next = initial.get(`${KNOWN}-${p}`)!.highWatermark;
      const base = await produceOk(conns, bootstrap, KNOWN, p, [{ value: knownValues(p, next) }, { value: knownValues(p, next + 1) }]);
      expect(base, `nothing was appended to ${KNOWN}-${p} by the fuzzer`).to.equal(next);
      const now = await readPartition(await leaderConn(KNOWN, p), KNOWN, p);
      const was = initial.get(`${KNOWN}-${p}`)!;
      expect(Buffer.concat(now.batches.slice(0, was.batches.length)).equals(Buffer.concat(was.batches)), `bytes of ${KNOWN}-${p}`).to.equal(true);
      expect(now.records.map((r) => r.value?.toString()), `records of ${KNOWN}-${p}`)
        .to.deep.equal(Array.from({ length: next + 2 }, (_, i) => knownValues(p, i)));
      expect(now.records.map((r) => r.offset)).to.deep.equal(Array.from({ length: next + 2 }, (_, i) => i));
    }
  });

  it('the topic the fuzzer produced to holds exactly what accepted or unanswered produces sent, then the new records', async () => {
    const problems: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      await waitForFullIsr(bootstrap, TARGET, PARTITIONS);
      const leader = await leaderConn(TARGET, p);
      const last = await produceOk(conns, bootstrap, TARGET, p, [{ value: `after the fuzzing ${p}` }]);
      const leo = await leader.listOffsets({ replicaId: 0, topics: [{ name: TARGET, partitions: [{ partition: p, timestamp: LATEST_TIMESTAMP }] }] });
      expect(leo.topics[0]!.partitions[0]!.offset, `LEO of ${TARGET}-${p}`).to.equal(last + 1);
      const now = await readPartition(leader, TARGET, p, { decode: false });
      const was = initial.get(`${TARGET}-${p}`)!;
      expect(Buffer.concat(now.batches.slice(0, was.batches.length)).equals(Buffer.concat(was.batches)), `seed bytes of ${TARGET}-${p}`).to.equal(true);
      const tail = now.batches.at(-1)!;
      expect(baseOffsetOf(tail)).to.equal(last);
      expect(decodeRecordBatch(tail).records.map((r) => r.value?.toString())).to.deep.equal([`after the fuzzing ${p}`]);
      problems.push(...accountFor(TARGET, p, now, was.highWatermark, last, ledger.entries));
      const gaps = now.batches.slice(1).filter((b, i) => baseOffsetOf(b) !== lastOffsetOf(now.batches[i]!) + 1);
      expect(gaps.map((b) => baseOffsetOf(b)), `offsets of ${TARGET}-${p} are contiguous`).to.deep.equal([]);
    }
    const tally = ['accepted', 'rejected', 'unknown'].map((s) => `${s} ${ledger.entries.filter((e) => e.status === s).length}`).join(', ');
    console.log(`      produce entries of the fuzzer: ${tally}`);
    expect(problems).to.deep.equal([]);
  });

  // This check found that batches whose CRC matched but whose codec or records were invalid were
  // stored (appends checked headers and the CRC only); leaders now check records before appending.
  it('every batch the broker accepted from the fuzzer decodes (no batch a consumer cannot read)', async () => {
    const bad: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const now = await readPartition(await leaderConn(TARGET, p), TARGET, p, { decode: false });
      for (const b of now.batches) {
        try {
          decodeRecordBatch(b);
        } catch (err) {
          bad.push(`${TARGET}-${p}@${baseOffsetOf(b)}: ${(err as Error).message}`);
        }
      }
    }
    expect(bad).to.deep.equal([]);
  });
});
