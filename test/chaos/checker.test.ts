// The chaos checker must be able to fail: a clean history passes, and each
// hand-made history with exactly one fault yields exactly that anomaly. A
// property test builds histories from random correct logs (no anomaly may be
// found) and then breaks one acknowledged record (it must be found). The
// history file's writer and reader are tested on a temp dir.
import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, errorName, INDEFINITE_ERRORS, isDefiniteFailure, type CheckResult } from './checker.js';
import { HistoryWriter, parseHistory, readHistory, summarize } from './history-file.js';
import { failed, uncheckedReason, type RoundResult } from './run.js';
import type {
  AssignOp, CommitOp, ControllerTerm, FinalPartition, FinalState, HistoryEntry, Outcome, ReadOp, SeekOp, SendOp, StoredRecord,
} from './history.js';

const OK: Outcome = { type: 'ok' };
const T = 'orders';

let now = 0;
function tick(): { invokeMs: number; completeMs: number } {
  now += 2;
  return { invokeMs: now - 2, completeMs: now - 1 };
}

function send(value: string, seq: number, offset: number | undefined, extra: Partial<SendOp> = {}): SendOp {
  return { kind: 'send', ...tick(), producer: 'p1', topic: T, partition: 0, seq, value, outcome: OK, offset, broker: 1, ...extra };
}

function read(offsets: number[], values: string[], extra: Partial<ReadOp> = {}): ReadOp {
  return {
    kind: 'read', ...tick(), session: 's1', group: 'g1', generation: 1, topic: T, partition: 0,
    records: offsets.map((offset, i) => ({ offset, value: values[i]! })), ...extra,
  };
}

function seek(offset: number, extra: Partial<SeekOp> = {}): SeekOp {
  return { kind: 'seek', ...tick(), session: 's1', group: 'g1', topic: T, partition: 0, offset, ...extra };
}

function commit(offset: number, extra: Partial<CommitOp> = {}): CommitOp {
  return { kind: 'commit', ...tick(), session: 's1', group: 'g1', generation: 1, topic: T, partition: 0, offset, outcome: OK, ...extra };
}

/** A settled partition holding `values` from `logStart` on, all replicas equal. */
function part(values: string[], extra: Partial<FinalPartition> & { epochs?: number[]; logStart?: number } = {}): FinalPartition {
  const logStart = extra.logStart ?? 0;
  const records: StoredRecord[] = values.map((value, i) => ({ offset: logStart + i, value, leaderEpoch: extra.epochs?.[i] ?? 1 }));
  return {
    topic: T, partition: 0, leader: 1, isr: [1, 2, 3], highWatermark: logStart + values.length, logStartOffset: logStart, records,
    replicaDigests: [1, 2, 3].map((nodeId) => ({ nodeId, digest: 'abc' })),
    ...extra,
  };
}

function finalOf(partitions: FinalPartition[], controllerTerms: ControllerTerm[] = [{ nodeId: 1, term: 1 }]): FinalState {
  return { partitions, controllerTerms };
}

const V = ['v0', 'v1', 'v2', 'v3', 'v4', 'v5'];

/** Six values acked at 0..5 by producer p1. */
function acked(values = V): SendOp[] {
  return values.map((v, i) => send(v, i, i));
}

function types(r: CheckResult): string[] {
  return r.anomalies.map((a) => a.type);
}

describe('chaos checker', () => {
  it('passes a clean history with every kind of operation', () => {
    const history: HistoryEntry[] = [
      { kind: 'admin', ...tick(), op: 'create', topic: T, outcome: OK },
      { kind: 'fault', ...tick(), fault: 'kill', detail: 'node 2' },
      ...acked(),
      send('u1', 6, undefined, { outcome: { type: 'unknown', error: 'REQUEST_TIMED_OUT' } }),
      send('u2', 7, undefined, { outcome: { type: 'unknown', error: 'NETWORK_EXCEPTION' } }),
      send('f1', 8, undefined, { outcome: { type: 'fail', error: 'MESSAGE_TOO_LARGE: too big' } }),
      send('n1', 9, undefined, { outcome: { type: 'fail', error: 'NOT_ENOUGH_REPLICAS_AFTER_APPEND: shrank' } }),
      send('w0', 0, 0, { producer: 'p2', partition: 1, broker: 2 }),
      read([0, 1, 2], ['v0', 'v1', 'v2']),
      commit(3),
      read([3, 4, 5], ['v3', 'v4', 'v5']),
      commit(6),
      seek(1),
      read([1, 2], ['v1', 'v2']),
      read([0, 1], ['v0', 'v1'], { session: 's2', generation: 2 }),
      commit(6, { session: 's2', generation: 2 }),
    ];
    const final = finalOf([part([...V, 'u1', 'n1']), part(['w0'], { partition: 1, leader: 2, epochs: [3] })],
      [{ nodeId: 1, term: 1 }, { nodeId: 2, term: 2 }, { nodeId: 2, term: 2 }]);
    const r = check(history, final);
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats).to.include({
      sendsOk: 7, sendsFailed: 1, sendsUnknown: 3, sendsFailedIndefinite: 1, unknownPresent: 2, acksChecked: 7,
      reads: 4, recordsRead: 10, seeks: 1, commits: 3, partitions: 2, finalRecords: 9, foreignValues: 0,
    });
  });

  it('finds an acknowledged write whose offset holds another value', () => {
    const r = check(acked(), finalOf([part(['v0', 'v1', 'v2', 'v3', 'v4', 'other'])]));
    expect(types(r)).to.deep.equal(['lost-write']);
    expect(r.anomalies[0]!.detail).to.include('orders-0@5').and.include('"v5"').and.include('"other"');
  });

  it('finds an acknowledged write whose value now sits only at another offset (lost there, written again)', () => {
    // v5 was acked at 5; the final log holds another value there and v5 one later (a resend appended after a truncation).
    const r = check(acked(), finalOf([part(['v0', 'v1', 'v2', 'v3', 'v4', 'x', 'v5'])]));
    expect(types(r)).to.include('lost-write');
    const lost = r.anomalies.find((a) => a.type === 'lost-write')!;
    expect(lost.detail).to.include('orders-0@5').and.include('"x"').and.include('orders-0@6');
    expect(r.stats.acksChecked).to.equal(5);
  });

  it('finds an acknowledged write beyond the end of a shorter final log', () => {
    const r = check(acked(), finalOf([part(V.slice(0, 5))]));
    expect(types(r)).to.deep.equal(['lost-write']);
    expect(r.anomalies[0]!.detail).to.match(/offset 5.*no record there/);
  });

  it('finds an acknowledged write to a partition missing from the final state, unless its topic was deleted', () => {
    expect(types(check(acked(), finalOf([])))).to.have.length(6).and.satisfy((t: string[]) => t.every((x) => x === 'lost-write'));
    const deleted = [...acked(), { kind: 'admin', ...tick(), op: 'deleteTopic', topic: T, outcome: OK } as const];
    const r = check(deleted, finalOf([]));
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats.sendsToDeletedTopics).to.equal(6);
  });

  it('counts acks below the log start offset instead of checking them', () => {
    const r = check(acked(), finalOf([part(V.slice(4), { logStart: 4 })]));
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats).to.include({ acksBelowLogStart: 4, acksChecked: 2 });
  });

  it('finds a duplicate, within a partition and across partitions', () => {
    const r = check(acked(), finalOf([part([...V, 'v2'])]));
    expect(types(r)).to.deep.equal(['duplicate']);
    expect(r.anomalies[0]!.detail).to.include('"v2"').and.include('orders-0@2, orders-0@6');
    const across = check(acked(), finalOf([part(V), part(['v4'], { partition: 1 })]));
    expect(types(across)).to.deep.equal(['duplicate']);
    expect(across.anomalies[0]!.detail).to.include('orders-1@0');
  });

  it('finds one producer\'s records out of send order', () => {
    const history = [send('a', 0, 0), send('b', 1, undefined, { outcome: { type: 'unknown', error: 'REQUEST_TIMED_OUT' } }), send('c', 2, 1)];
    expect(check(history, finalOf([part(['a', 'c'])])).anomalies).to.deep.equal([]);
    // The unknown send, if stored at all, must come before its producer's later records.
    expect(types(check(history, finalOf([part(['a', 'c', 'b'])])))).to.deep.equal(['reorder']);
    const swapped = [send('a', 0, 0), send('b', 1, 2), send('c', 2, 1)];
    const r = check(swapped, finalOf([part(['a', 'c', 'b'])]));
    expect(types(r)).to.deep.equal(['reorder']);
    expect(r.anomalies[0]!.detail).to.include('seq 1 "b" is at offset 2').and.include('seq 2 "c" is at offset 1');
  });

  it('finds an offset whose read value changed, between reads and against the final log', () => {
    const history = [...acked(), read([0, 1, 2], ['v0', 'v1', 'v2']), read([2], ['x2'], { session: 's2' })];
    const r = check(history, finalOf([part(V)]));
    expect(types(r)).to.deep.equal(['inconsistent-offset', 'inconsistent-offset']);
    expect(r.anomalies[0]!.detail).to.include('orders-0@2 was read as "v2" by session s1 and as "x2" by session s2');
    expect(r.anomalies[1]!.detail).to.include('the final log holds "v2"');
  });

  it('finds a read value stored at another offset, even below the log start', () => {
    const history = [read([3], ['v3'])];
    expect(types(check(history, finalOf([part(['v0', 'v3', 'v4'])])))).to.deep.equal(['inconsistent-offset']);
    expect(types(check(history, finalOf([part(['v5', 'v6'], { logStart: 5 })])))).to.deep.equal([]);
    expect(types(check(history, finalOf([part(['v3', 'v6'], { logStart: 5 })])))).to.deep.equal(['inconsistent-offset']);
    expect(types(check([read([4], ['v4'])], finalOf([part(['v0', 'v1'])])))).to.deep.equal(['inconsistent-offset']);
  });

  it('finds a read going backwards without a seek, and accepts it after a seek or in a new generation', () => {
    const back = [read([0, 1, 2], ['v0', 'v1', 'v2']), read([1, 2], ['v1', 'v2'])];
    const r = check(back, finalOf([part(V)]));
    expect(types(r)).to.deep.equal(['non-monotonic-read']);
    expect(r.anomalies[0]!.detail).to.include('session s1 generation 1 read offset 1').and.include('after offset 2');
    expect(types(check([read([0, 2, 1], ['v0', 'v2', 'v1'])], finalOf([part(V)])))).to.deep.equal(['non-monotonic-read']);
    const sought = [read([0, 1, 2], ['v0', 'v1', 'v2']), seek(1), read([1, 2], ['v1', 'v2'])];
    expect(check(sought, finalOf([part(V)])).anomalies).to.deep.equal([]);
    const rebalanced = [read([0, 1, 2], ['v0', 'v1', 'v2']), read([1, 2], ['v1', 'v2'], { generation: 2 })];
    expect(check(rebalanced, finalOf([part(V)])).anomalies).to.deep.equal([]);
    const belowSeek = [seek(3), read([2], ['v2'])];
    const below = check(belowSeek, finalOf([part(V)]));
    expect(types(below)).to.deep.equal(['non-monotonic-read']);
    expect(below.anomalies[0]!.detail).to.include('read offset 2 ("v2") below its seek to 3');
  });

  it('finds a committed offset going backwards, across sessions and generations', () => {
    expect(types(check([commit(10), commit(5)], finalOf([])))).to.deep.equal(['commit-regress']);
    const r = check([commit(10), commit(5, { session: 's2', generation: 2 })], finalOf([]));
    expect(types(r)).to.deep.equal(['commit-regress']);
    expect(r.anomalies[0]!.detail).to.include('commit of 5').and.include('after commit of 10');
    // Overlapping commits of two sessions have no order; failed commits do not count; groups are separate.
    const overlap: CommitOp[] = [
      { ...commit(10), invokeMs: 100, completeMs: 110 },
      { ...commit(5, { session: 's2' }), invokeMs: 105, completeMs: 108 },
    ];
    expect(check(overlap, finalOf([])).anomalies).to.deep.equal([]);
    expect(check([commit(10, { outcome: { type: 'fail', error: 'ILLEGAL_GENERATION' } }), commit(5)], finalOf([])).anomalies).to.deep.equal([]);
    expect(check([commit(10), commit(5, { group: 'g2' })], finalOf([])).anomalies).to.deep.equal([]);
  });

  it('finds ISR replicas whose digests differ from the leader\'s', () => {
    const digests = [{ nodeId: 1, digest: 'abc' }, { nodeId: 2, digest: 'abc' }, { nodeId: 3, digest: 'xyz' }];
    const r = check(acked(), finalOf([part(V, { replicaDigests: digests })]));
    expect(types(r)).to.deep.equal(['divergence']);
    expect(r.anomalies[0]!.detail).to.include('orders-0').and.include('3=xyz');
    // A replica out of the ISR may lag; a missing digest is counted.
    const outOfIsr = check(acked(), finalOf([part(V, { replicaDigests: digests, isr: [1, 2] })]));
    expect(outOfIsr.anomalies).to.deep.equal([]);
    const missing = check(acked(), finalOf([part(V, { replicaDigests: digests.slice(0, 2) })]));
    expect(missing.anomalies).to.deep.equal([]);
    expect(missing.stats.digestsMissing).to.equal(1);
  });

  it('finds two brokers acknowledging writes in one leader epoch', () => {
    const history = [send('a', 0, 0, { broker: 1 }), send('b', 1, 1, { broker: 2 })];
    const r = check(history, finalOf([part(['a', 'b'], { epochs: [4, 4] })]));
    expect(types(r)).to.deep.equal(['split-leadership']);
    expect(r.anomalies[0]!.detail).to.include('leader epoch 4').and.include('broker 1 acked "a" at offset 0')
      .and.include('broker 2 acked "b" at offset 1');
    expect(check(history, finalOf([part(['a', 'b'], { epochs: [4, 5] })])).anomalies).to.deep.equal([]);
  });

  it('finds two controllers in one term', () => {
    const r = check([], finalOf([], [{ nodeId: 1, term: 3 }, { nodeId: 2, term: 4 }, { nodeId: 3, term: 4 }]));
    expect(types(r)).to.deep.equal(['split-controller']);
    expect(r.anomalies[0]!.detail).to.include('term 4').and.include('nodes 2, 3');
  });

  it('finds a definitely failed write that is present; an indefinite failure may be present', () => {
    const failed = send('f', 0, undefined, { outcome: { type: 'fail', error: 'INVALID_REQUEST: bad header' } });
    const r = check([failed], finalOf([part(['f'])]));
    expect(types(r)).to.deep.equal(['failed-write-present']);
    expect(r.anomalies[0]!.detail).to.include('"f"').and.include('INVALID_REQUEST').and.include('orders-0@0');
    const afterAppend = send('f', 0, undefined, { outcome: { type: 'fail', error: 'NOT_ENOUGH_REPLICAS_AFTER_APPEND' } });
    expect(check([afterAppend], finalOf([part(['f'])])).anomalies).to.deep.equal([]);
    // With a producer that never retries, a caller may narrow the list.
    const once = send('f', 0, undefined, { outcome: { type: 'fail', error: 'NOT_ENOUGH_REPLICAS' } });
    expect(check([once], finalOf([part(['f'])])).anomalies).to.deep.equal([]);
    expect(types(check([once], finalOf([part(['f'])]), { indefiniteErrors: ['NOT_ENOUGH_REPLICAS_AFTER_APPEND'] })))
      .to.deep.equal(['failed-write-present']);
  });

  it('accepts an unknown write present once and finds it present twice', () => {
    const unknown = send('u', 0, undefined, { outcome: { type: 'unknown', error: 'REQUEST_TIMED_OUT' } });
    expect(check([unknown], finalOf([part(['u'])])).anomalies).to.deep.equal([]);
    expect(check([unknown], finalOf([part([])])).anomalies).to.deep.equal([]);
    const r = check([unknown], finalOf([part(['u', 'u'])]));
    expect(types(r)).to.deep.equal(['unknown-twice']);
    expect(r.anomalies[0]!.detail).to.include('"u"').and.include('orders-0@0, orders-0@1');
  });

  it('reads error names and sorts failures into definite and indefinite', () => {
    expect(errorName('NOT_ENOUGH_REPLICAS_AFTER_APPEND: the ISR shrank')).to.equal('NOT_ENOUGH_REPLICAS_AFTER_APPEND');
    expect(errorName('REQUEST_TIMED_OUT')).to.equal('REQUEST_TIMED_OUT');
    expect(INDEFINITE_ERRORS).to.include.members(['NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'REQUEST_TIMED_OUT', 'NETWORK_EXCEPTION', 'NOT_LEADER_OR_FOLLOWER']);
    expect(isDefiniteFailure({ type: 'fail', error: 'MESSAGE_TOO_LARGE: 2 MB' })).to.equal(true);
    expect(isDefiniteFailure({ type: 'fail', error: 'NETWORK_EXCEPTION: socket hang up' })).to.equal(false);
    expect(isDefiniteFailure({ type: 'fail', error: 'Error: ECONNRESET' })).to.equal(false);
    expect(isDefiniteFailure({ type: 'unknown', error: 'MESSAGE_TOO_LARGE' })).to.equal(false);
    expect(isDefiniteFailure(OK)).to.equal(false);
  });

  it('is deterministic and refuses a history that reuses a value', () => {
    const history = [...acked(), read([1, 0], ['v1', 'v0']), commit(4), commit(2)];
    const final = finalOf([part(['v0', 'v1', 'x', 'v3', 'v3'])]);
    expect(check(history, final)).to.deep.equal(check(history, final));
    expect(check(history, final).anomalies.length).to.be.greaterThan(3);
    expect(() => check([send('a', 0, 0), send('a', 1, 1)], finalOf([]))).to.throw(/two sends of value "a"/);
    expect(() => check([send('a', 0, 0), send('b', 0, undefined)], finalOf([]))).to.throw(/reuses a seq/);
  });
});

// ---- property: histories of correct runs -----------------------------------------------

interface Plan {
  readonly sends: ReadonlyArray<{ producer: number; partition: number; fate: 'ok' | 'unknownIn' | 'unknownOut' | 'failed'; newLeader: boolean }>;
  readonly logStarts: readonly number[];
  readonly chunks: readonly number[];
  readonly seekBack: readonly number[];
}

const planArb: fc.Arbitrary<Plan> = fc.record({
  sends: fc.array(fc.record({
    producer: fc.nat(2),
    partition: fc.nat(2),
    fate: fc.constantFrom('ok', 'ok', 'ok', 'unknownIn', 'unknownOut', 'failed') as fc.Arbitrary<'ok' | 'unknownIn' | 'unknownOut' | 'failed'>,
    newLeader: fc.nat(4).map((n) => n === 0),
  }), { maxLength: 60, size: 'medium' }),
  logStarts: fc.array(fc.nat(6), { minLength: 3, maxLength: 3 }),
  chunks: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 10 }),
  seekBack: fc.array(fc.nat(3), { minLength: 1, maxLength: 10 }),
});

/** A correct run: sends appended in order, acked at their true offsets, reads that are prefixes. */
function correctRun(plan: Plan): { history: HistoryEntry[]; final: FinalState } {
  const logs: StoredRecord[][] = [[], [], []];
  const leaders = [{ broker: 1, epoch: 0 }, { broker: 1, epoch: 0 }, { broker: 1, epoch: 0 }];
  const seqs = new Map<string, number>();
  const history: HistoryEntry[] = [];
  const terms: ControllerTerm[] = [];
  plan.sends.forEach((s, i) => {
    const l = leaders[s.partition]!;
    if (s.newLeader) {
      l.epoch++;
      l.broker = (l.epoch % 3) + 1;
      terms.push({ nodeId: l.broker, term: terms.length + 1 });
    }
    const key = `${s.producer}/${s.partition}`;
    const seq = seqs.get(key) ?? 0;
    seqs.set(key, seq + 1);
    const log = logs[s.partition]!;
    const value = `p${s.producer}-${i}`;
    const stored = s.fate === 'ok' || s.fate === 'unknownIn';
    if (stored) log.push({ offset: log.length, value, leaderEpoch: l.epoch });
    const outcome: Outcome = s.fate === 'ok' ? OK : s.fate === 'failed' ? { type: 'fail', error: 'INVALID_REQUEST' } : { type: 'unknown', error: 'REQUEST_TIMED_OUT' };
    history.push({
      kind: 'send', invokeMs: i, completeMs: i, producer: `p${s.producer}`, topic: T, partition: s.partition, seq, value, outcome,
      ...(s.fate === 'ok' ? { offset: log.length - 1, broker: l.broker, leaderEpoch: l.epoch } : {}),
    });
  });
  logs.forEach((log, p) => history.push(...consume(plan, p, log)));
  const partitions = logs.map((log, p) => {
    const start = Math.min(plan.logStarts[p]!, log.length);
    return part(log.slice(start).map((r) => r.value), { partition: p, logStart: start, epochs: log.slice(start).map((r) => r.leaderEpoch) });
  });
  return { history, final: finalOf(partitions, terms) };
}

/** One session reads partition `p` in chunks, sometimes seeking back, committing as it goes. */
function consume(plan: Plan, p: number, log: readonly StoredRecord[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  const base = { session: `s${p}`, group: 'g', topic: T, partition: p };
  let pos = 0;
  let committed = 0;
  for (let i = 0; pos < log.length && i < 50; i++) {
    const n = plan.chunks[i % plan.chunks.length]!;
    const chunk = log.slice(pos, pos + n);
    out.push({ kind: 'read', invokeMs: 1000 + i, completeMs: 1000 + i, ...base, generation: 1, records: chunk.map((r) => ({ offset: r.offset, value: r.value })) });
    pos += chunk.length;
    if (pos > committed) {
      committed = pos;
      out.push({ kind: 'commit', invokeMs: 1000 + i, completeMs: 1000 + i, ...base, generation: 1, offset: pos, outcome: OK });
    }
    const back = plan.seekBack[i % plan.seekBack.length]!;
    if (back > 0 && back <= pos) {
      pos -= back;
      out.push({ kind: 'seek', invokeMs: 1000 + i, completeMs: 1000 + i, ...base, offset: pos });
    }
  }
  return out;
}

describe('chaos checker: property', () => {
  it('finds no anomaly in the history of a random correct run', () => {
    fc.assert(fc.property(planArb, (plan) => {
      const { history, final } = correctRun(plan);
      const r = check(history, final);
      expect(r.anomalies, summarize(r).join('\n')).to.deep.equal([]);
    }), { numRuns: 300, seed: 9 });
  });

  it('finds a lost write when one acknowledged record above the log start is replaced', () => {
    fc.assert(fc.property(planArb, fc.nat(), (plan, pick) => {
      const { history, final } = correctRun(plan);
      const candidates = final.partitions.flatMap((fp) => fp.records.map((rec) => ({ fp, rec })))
        .filter(({ rec }) => history.some((e) => e.kind === 'send' && e.value === rec.value && e.outcome.type === 'ok'));
      fc.pre(candidates.length > 0);
      const { fp, rec } = candidates[pick % candidates.length]!;
      const broken = final.partitions.map((x) => x !== fp ? x
        : { ...x, records: x.records.map((r) => (r === rec ? { ...r, value: 'intruder' } : r)) });
      expect(types(check(history, { ...final, partitions: broken }))).to.include('lost-write');
    }), { numRuns: 200, seed: 10 });
  });
});

// ---- history files ------------------------------------------------------------------------

describe('chaos history file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-history-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes entries as JSON lines and reads them back', async () => {
    const path = join(dir, 'h.jsonl');
    const entries: HistoryEntry[] = [...acked(), read([0], ['v0']), commit(1), seek(0)];
    const w = new HistoryWriter(path);
    for (const e of entries) w.record(e);
    await w.close();
    expect(w.entries).to.equal(entries.length);
    expect(readHistory(path)).to.deep.equal(entries);
    expect(() => w.record(commit(2))).to.throw(/closed/);
  });

  it('reports a file that cannot be written when closed', async () => {
    const w = new HistoryWriter(join(dir, 'missing', 'h.jsonl'));
    w.record(commit(1));
    const err = await w.close().then(() => null, (e: unknown) => e as Error);
    expect(err?.message).to.match(/KAFKA_STORAGE_ERROR: history .*ENOENT/);
    expect(() => w.record(commit(2))).to.throw(/ENOENT/);
  });

  it('drops a torn last line and refuses a bad line elsewhere', () => {
    const path = join(dir, 'h.jsonl');
    const lines = acked().slice(0, 2).map((e) => JSON.stringify(e));
    writeFileSync(path, `${lines.join('\n')}\n`);
    appendFileSync(path, '{"kind":"send","invo');
    expect(readHistory(path)).to.have.length(2);
    expect(parseHistory(`${lines[0]}\n{"kind":"se`).tornTail).to.equal('{"kind":"se');
    expect(parseHistory(`${lines[0]}\n${lines[1]}`).entries).to.have.length(2);
    expect(() => parseHistory(`${lines[0]}\n{"kind":"se\n${lines[1]}\n`, 'h')).to.throw(/h line 2: not JSON/);
    expect(() => parseHistory('{"kind":"nope","invokeMs":1,"completeMs":2}\n')).to.throw(/unknown kind "nope"/);
    expect(() => parseHistory('{"kind":"send","invokeMs":1,"completeMs":2}\n')).to.throw(/lacks string field producer/);
    expect(() => parseHistory(`${JSON.stringify({ ...acked()[0], outcome: { type: 'fail' } })}\n`)).to.throw(/bad outcome/);
  });

  it('summarizes counts and anomalies by type', () => {
    const clean = summarize(check(acked(), finalOf([part(V)])));
    expect(clean.join('\n')).to.include('6 ok (6 checked').and.include('anomalies: none');
    const dirty = summarize(check(acked(), finalOf([part(['v0', 'v0'])], [{ nodeId: 1, term: 1 }, { nodeId: 2, term: 1 }])));
    const text = dirty.join('\n');
    expect(text).to.include('anomalies: 7 (lost-write 5, duplicate 1, split-controller 1)');
    expect(text).to.include('  lost-write (5):').and.include('  split-controller (1):');
    expect(dirty.length).to.be.lessThan(20);
  });
});

describe('chaos checker: compacted partitions', () => {
  /** Keys a, b written twice each at offsets 0..3; a compacted final log keeps the last of each (offsets 2 and 3). */
  const sends = (): SendOp[] => [
    send('a1', 0, 0, { key: 'a' }), send('b1', 1, 1, { key: 'b' }), send('a2', 2, 2, { key: 'a' }), send('b2', 3, 3, { key: 'b' }),
  ];
  const compactedPart = (records: StoredRecord[]): FinalPartition => ({
    topic: T, partition: 0, leader: 1, isr: [1, 2, 3], highWatermark: 4, logStartOffset: 0, records, compacted: true,
    replicaDigests: [1, 2, 3].map((nodeId) => ({ nodeId, digest: 'keys' })),
  });
  const rec = (offset: number, key: string, value: string): StoredRecord => ({ offset, key, value, leaderEpoch: 1 });

  it('passes when each key ends with its last acknowledged write, though superseded values are gone', () => {
    const r = check([...sends(), read([0, 1], ['a1', 'b1'])], finalOf([compactedPart([rec(2, 'a', 'a2'), rec(3, 'b', 'b2')])]));
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats.compactedKeysChecked).to.equal(2);
    expect(r.stats.compactedAcksRemoved).to.equal(2);
  });

  it('finds a key whose final value is an older write (compaction kept the wrong one)', () => {
    const r = check(sends(), finalOf([compactedPart([rec(0, 'a', 'a1'), rec(3, 'b', 'b2')])]));
    expect(types(r)).to.deep.equal(['compacted-value']);
  });

  it('finds a key that compaction lost altogether', () => {
    const r = check(sends(), finalOf([compactedPart([rec(2, 'a', 'a2')])]));
    expect(types(r)).to.deep.equal(['compacted-value']);
  });

  it('accepts a later write of the key whose outcome was unknown, but not one that definitely failed', () => {
    const later = send('a3', 4, undefined, { key: 'a', outcome: { type: 'unknown', error: 'REQUEST_TIMED_OUT' } });
    const final = finalOf([{ ...compactedPart([rec(3, 'b', 'b2'), rec(4, 'a', 'a3')]), highWatermark: 5 }]);
    expect(check([...sends(), later], final).anomalies).to.deep.equal([]);
    const failed = { ...later, outcome: { type: 'fail' as const, error: 'MESSAGE_TOO_LARGE' } };
    expect(types(check([...sends(), failed], final))).to.include('compacted-value');
  });
});

describe('chaos checker: group assignments', () => {
  function assign(member: string, generation: number, partitions: number[], extra: Partial<AssignOp> = {}): AssignOp {
    return {
      kind: 'assign', ...tick(), session: `${member}/j1`, group: 'g1', generation, member,
      partitions: partitions.map((partition) => ({ topic: T, partition })), ...extra,
    };
  }

  it('accepts disjoint assignments, a rejoin under the same id, and a partition moving in a new generation', () => {
    const r = check([assign('m1', 1, [0, 1]), assign('m2', 1, [2]), assign('m1', 1, [0, 1], { session: 'm1/j2' }), assign('m2', 2, [0, 1, 2])], finalOf([]));
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats.assignments).to.equal(4);
  });

  it('finds one partition assigned to two members in one generation (and not across groups)', () => {
    const r = check([assign('m1', 3, [0, 1]), assign('m2', 3, [1])], finalOf([]));
    expect(types(r)).to.deep.equal(['double-assignment']);
    expect(r.anomalies[0]!.detail).to.include('generation 3').and.include('orders-1').and.include('m1').and.include('m2');
    expect(check([assign('m1', 3, [1]), assign('m2', 3, [1], { group: 'g2' })], finalOf([])).anomalies).to.deep.equal([]);
  });

  it('round-trips an assignment through the history file format', () => {
    const e = assign('m1', 1, [0]);
    expect(parseHistory(`${JSON.stringify(e)}\n`, 'x').entries).to.deep.equal([e]);
  });
});

describe('chaos runner: what counts as a pass', () => {
  const base = { anomalies: [], error: null, crashes: [] } as const;
  const stats = (acksChecked: number, sendsOk = acksChecked): RoundResult['stats'] =>
    ({ ...check([], finalOf([])).stats, acksChecked, sendsOk });

  it('fails a round whose checker checked no acknowledged write', () => {
    expect(failed({ ...base, stats: stats(0) })).to.equal(true);
    expect(uncheckedReason({ ...base, stats: stats(0, 12) })).to.match(/no acknowledged write \(12 sends ok\)/);
    expect(failed({ ...base, stats: stats(3) })).to.equal(false);
  });

  it('fails an unchecked round for its error, not for its missing stats', () => {
    expect(failed({ ...base, error: 'did not settle', stats: null })).to.equal(true);
    expect(uncheckedReason({ error: 'did not settle', stats: null })).to.equal(null);
  });
});
