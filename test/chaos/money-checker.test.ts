// The tx_money checker on hand-made histories: a clean one passes, and each
// broken one — one per invariant, the shape the bug it stands for would leave
// in a real run — fails with its anomaly.
import { expect } from 'chai';
import { checkMoney } from './money-checker.js';
import {
  encodeAudit, encodeLeg, type MoneyEntry, type MoneyFinalPartition, type MoneyFinalState, type RawMarker, type RawRecord, type TxnOp,
} from './money-history.js';

const TOPIC = 'money';
const AUDIT = 'audit';
const PARTITIONS = 2;

interface Log {
  raw: RawRecord[];
  markers: RawMarker[];
  next: number;
}

/** Builds a history and the final state the cluster should then hold. */
class World {
  readonly history: MoneyEntry[] = [{
    kind: 'money-setup', invokeMs: 0, completeMs: 0, topic: TOPIC, partitions: PARTITIONS, accounts: 4, initialBalance: 100,
    auditTopic: AUDIT, auditGroup: 'audit-g',
  }];
  readonly logs = new Map<string, Log>();
  auditOffsets: Array<{ topic: string; partition: number; offset: number }> = [];
  private now = 1;

  log(topic: string, partition: number): Log {
    const k = `${topic}-${partition}`;
    let l = this.logs.get(k);
    if (!l) this.logs.set(k, (l = { raw: [], markers: [], next: 0 }));
    return l;
  }

  append(topic: string, partition: number, pid: string, value: string, epoch = 0): number {
    const l = this.log(topic, partition);
    const offset = l.next++;
    l.raw.push({ offset, value, producerId: pid, producerEpoch: epoch, transactional: true });
    return offset;
  }

  marker(topic: string, partition: number, pid: string, type: 'commit' | 'abort', epoch = 1): void {
    const l = this.log(topic, partition);
    l.markers.push({ offset: l.next++, producerId: pid, producerEpoch: epoch, type });
  }

  /**
   * A transfer of `amount` from account `from` to `to` by producer `pid`, its
   * markers `fates` (per leg: commit, abort, or none written), recorded with
   * `outcome`.
   */
  transfer(o: {
    txn: string; from: number; to: number; amount: number; pid?: string; intent?: 'commit' | 'abort';
    outcome?: TxnOp['outcome']; fates?: ReadonlyArray<'commit' | 'abort' | 'none'>; instance?: number; endInvokeMs?: number; creditAmount?: number;
  }): TxnOp {
    const pid = o.pid ?? '7';
    const intent = o.intent ?? 'commit';
    const fate = intent === 'commit' ? 'commit' : 'abort';
    const legs = [
      { account: o.from, amount: -o.amount }, { account: o.to, amount: o.creditAmount ?? o.amount },
    ].map((l, index) => ({ ...l, index, value: encodeLeg({ txn: o.txn, account: l.account, amount: l.amount, index, legs: 2 }), partition: l.account % PARTITIONS }));
    for (const l of legs) this.append(TOPIC, l.partition, pid, l.value);
    const touched = [...new Set(legs.map((l) => l.partition))];
    touched.forEach((p, i) => {
      const f = o.fates?.[i] ?? fate;
      if (f !== 'none') this.marker(TOPIC, p, pid, f);
    });
    const invokeMs = this.now++;
    const op: TxnOp = {
      kind: 'txn', invokeMs, completeMs: this.now++, stage: 'transfer', transactionalId: 'tx-0', instance: o.instance ?? 1, producer: `m0.${o.instance ?? 1}`,
      txn: o.txn, intent, endInvokeMs: o.endInvokeMs ?? invokeMs, records: legs.map((l) => ({ topic: TOPIC, partition: l.partition, value: l.value })),
      outcome: o.outcome ?? (intent === 'commit' ? 'committed' : 'aborted'),
    };
    this.history.push(op);
    return op;
  }

  /** A read-process-write transaction copying money-p@offsets into audit-p, committing offset `commitTo`. */
  process(o: { txn: string; partition: number; offsets: readonly number[]; commitTo: number; fate?: 'commit' | 'abort'; pid?: string; inputValue?: (offset: number) => string }): void {
    const pid = o.pid ?? '9';
    const fate = o.fate ?? 'commit';
    const records = o.offsets.map((offset) => {
      const input = o.inputValue?.(offset) ?? this.log(TOPIC, o.partition).raw.find((r) => r.offset === offset)!.value;
      const value = encodeAudit({ topic: TOPIC, partition: o.partition, offset, value: input, txn: o.txn });
      this.append(AUDIT, o.partition, pid, value);
      return { topic: AUDIT, partition: o.partition, value };
    });
    this.marker(AUDIT, o.partition, pid, fate);
    if (fate === 'commit') {
      this.auditOffsets = [...this.auditOffsets.filter((x) => x.partition !== o.partition), { topic: TOPIC, partition: o.partition, offset: o.commitTo }];
    }
    const invokeMs = this.now++;
    this.history.push({
      kind: 'txn', invokeMs, completeMs: this.now++, stage: 'process', transactionalId: 'x-0', instance: 1, producer: 'x0.1', txn: o.txn,
      intent: 'commit', endInvokeMs: invokeMs, records, outcome: fate === 'commit' ? 'committed' : 'aborted',
      offsets: [{ topic: TOPIC, partition: o.partition, offset: o.commitTo }],
    });
  }

  /** A live reader session's poll of what the replayed log holds committed in [from, to). */
  read(session: string, partition: number, from: number, to: number, topic = TOPIC): void {
    const committed = committedOf(this.log(topic, partition)).filter((r) => r.offset >= from && r.offset < to);
    const t = this.now++;
    this.history.push({ kind: 'money-read', invokeMs: t, completeMs: t, session, topic, partition, records: committed });
  }

  final(): MoneyFinalState {
    const partitions: MoneyFinalPartition[] = [];
    for (const topic of [TOPIC, AUDIT]) {
      for (let p = 0; p < PARTITIONS; p++) {
        const l = this.log(topic, p);
        partitions.push({
          topic, partition: p, highWatermark: l.next, logStartOffset: 0, lastStableOffset: l.next, raw: [...l.raw], markers: [...l.markers],
          committedRead: committedOf(l), replicaDigests: [{ nodeId: 1, digest: 'd' }, { nodeId: 2, digest: 'd' }],
        });
      }
    }
    return { partitions, auditOffsets: this.auditOffsets };
  }
}

/** What the log holds committed (the test's own replay, independent of the checker's). */
function committedOf(l: Log): Array<{ offset: number; value: string }> {
  const out: Array<{ offset: number; value: string }> = [];
  for (const r of l.raw) {
    const m = l.markers.filter((x) => x.producerId === r.producerId && x.offset > r.offset).sort((a, b) => a.offset - b.offset)[0];
    if (m?.type === 'commit') out.push({ offset: r.offset, value: r.value });
  }
  return out;
}

function types(w: World, final = w.final()): string[] {
  return [...new Set(checkMoney(w.history, final).anomalies.map((a) => a.type))].sort();
}

function part(f: MoneyFinalState, topic: string, partition: number): MoneyFinalPartition {
  return f.partitions.find((p) => p.topic === topic && p.partition === partition)!;
}

function replacePart(f: MoneyFinalState, next: MoneyFinalPartition): MoneyFinalState {
  return { ...f, partitions: f.partitions.map((p) => (p.topic === next.topic && p.partition === next.partition ? next : p)) };
}

/** Two committed transfers, one aborted on purpose, a live reader and the audit stage over all of it. */
function clean(): World {
  const w = new World();
  w.transfer({ txn: 't1', from: 0, to: 1, amount: 10 });
  w.transfer({ txn: 't2', from: 1, to: 2, amount: 5, intent: 'abort' });
  w.transfer({ txn: 't3', from: 3, to: 0, amount: 7 });
  w.read('r1', 0, 0, 100);
  w.read('r1', 1, 0, 100);
  // money-0 holds t1's leg at 0, marker 1, t2's at 2, marker 3, t3's at 4 and marker 5 (the partitions alternate by account).
  const committed0 = committedOf(w.log(TOPIC, 0)).map((r) => r.offset);
  const committed1 = committedOf(w.log(TOPIC, 1)).map((r) => r.offset);
  w.process({ txn: 'x1', partition: 0, offsets: committed0, commitTo: w.log(TOPIC, 0).next });
  w.process({ txn: 'x2', partition: 1, offsets: committed1, commitTo: w.log(TOPIC, 1).next });
  return w;
}

describe('tx_money checker', () => {
  it('passes a clean history and counts what it checked', () => {
    const w = clean();
    const r = checkMoney(w.history, w.final());
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats.transfers).to.equal(3);
    expect(r.stats.committed).to.equal(4); // two transfers, two process transactions
    expect(r.stats.commitsVerified).to.equal(4);
    expect(r.stats.wholeTransfers).to.equal(2);
    expect(r.stats.liveBoundaries).to.be.greaterThan(0);
    expect(r.stats.eosInputsChecked).to.equal(4);
  });

  it('no-setup: a history without its setup entry is not checked as clean', () => {
    const w = clean();
    w.history.shift();
    expect(types(w)).to.deep.equal(['no-setup']);
  });

  it('aborted-read: the final read_committed read delivers an aborted leg', () => {
    const w = clean();
    const f = w.final();
    const p0 = part(f, TOPIC, 0);
    const abortedLeg = w.log(TOPIC, 0).raw.find((r) => r.value.includes('"t2"'))!;
    const read = [...p0.committedRead, { offset: abortedLeg.offset, value: abortedLeg.value }].sort((a, b) => a.offset - b.offset);
    expect(types(w, replacePart(f, { ...p0, committedRead: read }))).to.deep.equal(['aborted-read']);
  });

  it('aborted-read: a live reader reads an aborted leg', () => {
    const w = clean();
    const abortedLeg = w.log(TOPIC, 1).raw.find((r) => r.value.includes('"t2"'))!;
    w.history.push({ kind: 'money-read', invokeMs: 99, completeMs: 99, session: 'r2', topic: TOPIC, partition: 1, records: [{ offset: abortedLeg.offset, value: abortedLeg.value }] });
    expect(types(w)).to.deep.equal(['aborted-read']);
  });

  it('phantom-read and committed-skipped: the final read delivers a value not in the log, and misses a committed one', () => {
    const w = clean();
    const f = w.final();
    const p1 = part(f, TOPIC, 1);
    const [first, ...rest] = p1.committedRead;
    expect(types(w, replacePart(f, { ...p1, committedRead: [{ offset: first!.offset, value: 'x' }, ...rest] }))).to.deep.equal(['committed-skipped', 'phantom-read']);
  });

  it('torn-transaction: one leg committed, the other aborted (a marker written with the wrong type)', () => {
    const w = clean();
    w.transfer({ txn: 't4', from: 0, to: 1, amount: 3, fates: ['commit', 'abort'], outcome: 'unknown' });
    expect(types(w)).to.deep.equal(['balance-sum', 'torn-transaction']);
  });

  it('hanging-transaction and lso-past-open: a leg without its marker, the LSO moved past it', () => {
    const w = clean();
    w.transfer({ txn: 't5', from: 2, to: 1, amount: 4, fates: ['commit', 'none'], outcome: 'unknown' });
    const f = w.final();
    expect(types(w, f)).to.include.members(['hanging-transaction', 'lso-past-open', 'torn-transaction']);
    // With the LSO held at the open transaction's first record, only the hang (and the torn leg) remain.
    const open = w.log(TOPIC, 1).raw.find((r) => r.value.includes('"t5"'))!;
    const p1 = part(f, TOPIC, 1);
    expect(types(w, replacePart(f, { ...p1, lastStableOffset: open.offset }))).to.deep.equal(['balance-sum', 'hanging-transaction', 'torn-transaction']);
  });

  it('lost-commit: commit() resolved but both markers aborted the transaction', () => {
    const w = clean();
    w.transfer({ txn: 't6', from: 0, to: 1, amount: 2, fates: ['abort', 'abort'], outcome: 'committed' });
    expect(types(w)).to.deep.equal(['lost-commit']);
  });

  it('aborted-visible: a transfer meant to abort is committed in the log', () => {
    const w = clean();
    w.transfer({ txn: 't7', from: 0, to: 1, amount: 2, intent: 'abort', fates: ['commit', 'commit'], outcome: 'unknown' });
    expect(types(w)).to.deep.equal(['aborted-visible']);
  });

  it('zombie-commit and zombie-write: an old instance commits after its successor initialised', () => {
    const w = clean();
    w.history.push({ kind: 'txn-init', invokeMs: 50, completeMs: 51, transactionalId: 'tx-0', instance: 2, producer: 'm0.2', outcome: 'ok' });
    w.transfer({ txn: 't8', from: 0, to: 1, amount: 1, instance: 1, endInvokeMs: 60 });
    expect(types(w)).to.deep.equal(['zombie-commit', 'zombie-write']);
  });

  it('a refused zombie is counted and passes; one ended before the init is no zombie', () => {
    const w = clean();
    w.history.push({ kind: 'txn-init', invokeMs: 50, completeMs: 51, transactionalId: 'tx-0', instance: 2, producer: 'm0.2', outcome: 'ok' });
    w.transfer({ txn: 't9', from: 0, to: 1, amount: 1, instance: 1, endInvokeMs: 60, fates: ['abort', 'abort'], outcome: 'unknown' });
    w.transfer({ txn: 't10', from: 2, to: 3, amount: 1, instance: 1, endInvokeMs: 40 });
    const r = checkMoney(w.history, w.final());
    expect(r.anomalies).to.deep.equal([]);
    expect(r.stats.zombieTxns).to.equal(1);
    expect(r.stats.zombieRefused).to.equal(1);
  });

  it('uncommitted-visible: a late zombie leg swept up by the next instance\'s commit (its commit never called)', () => {
    const w = clean();
    w.history.push({ kind: 'txn-init', invokeMs: 50, completeMs: 51, transactionalId: 'tx-0', instance: 2, producer: 'm0.2', outcome: 'ok' });
    const op = w.transfer({ txn: 't13', from: 0, to: 1, amount: 1, instance: 1, outcome: 'unknown' });
    const late = { ...op, invokeMs: 70 } as TxnOp & { endInvokeMs?: number };
    delete late.endInvokeMs;
    w.history[w.history.indexOf(op)] = late;
    expect(types(w)).to.deep.equal(['uncommitted-visible', 'zombie-write']);
    const r = checkMoney(w.history, w.final());
    expect(r.stats.zombieTxns).to.equal(1);
  });

  it('duplicate: one leg committed twice (a retried batch appended again)', () => {
    const w = clean();
    const op = w.transfer({ txn: 't11', from: 0, to: 1, amount: 6 });
    w.append(TOPIC, 0, '8', op.records[0]!.value);
    w.marker(TOPIC, 0, '8', 'commit');
    expect(types(w)).to.deep.equal(['balance-sum', 'duplicate']);
  });

  it('balance-sum: legs that do not cancel, in the final log and at a live boundary', () => {
    const w = new World();
    w.transfer({ txn: 't1', from: 0, to: 1, amount: 10, creditAmount: 11 });
    w.read('r1', 0, 0, 100);
    w.read('r1', 1, 0, 100);
    const r = checkMoney(w.history, w.final());
    expect(r.anomalies.map((a) => a.type)).to.deep.equal(['balance-sum', 'balance-sum']);
    expect(r.anomalies[1]!.detail).to.contain('session r1');
  });

  it('uncommitted-read and non-monotonic-read: a live read the final log does not hold, and a step back', () => {
    const w = clean();
    w.history.push({ kind: 'money-read', invokeMs: 99, completeMs: 99, session: 'r1', topic: TOPIC, partition: 0, records: [{ offset: 0, value: 'other' }] });
    expect(types(w)).to.deep.equal(['non-monotonic-read', 'uncommitted-read']);
  });

  it('foreign-transaction: a committed transfer no one in the history started', () => {
    const w = clean();
    const op = w.transfer({ txn: 't12', from: 0, to: 1, amount: 1 });
    w.history.splice(w.history.indexOf(op), 1);
    expect(types(w)).to.deep.equal(['foreign-transaction']);
  });

  it('eos-duplicate: an input copied twice (a zombie processor committed after a rebalance)', () => {
    const w = clean();
    const first = committedOf(w.log(TOPIC, 0))[0]!;
    w.process({ txn: 'x3', partition: 0, offsets: [first.offset], commitTo: w.log(TOPIC, 0).next });
    expect(types(w)).to.deep.equal(['eos-duplicate']);
  });

  it('eos-lost: the offsets committed past an input whose copy was aborted', () => {
    const w = new World();
    w.transfer({ txn: 't1', from: 0, to: 2, amount: 10 });
    w.process({ txn: 'x1', partition: 0, offsets: [0], commitTo: 1, fate: 'abort' });
    w.auditOffsets = [{ topic: TOPIC, partition: 0, offset: 2 }];
    expect(types(w)).to.deep.equal(['eos-lost']);
  });

  it('eos-ahead: a copy committed while the offsets stayed behind', () => {
    const w = clean();
    w.auditOffsets = w.auditOffsets.map((o) => ({ ...o, offset: 0 }));
    expect(types(w)).to.deep.equal(['eos-ahead']);
  });

  it('eos-phantom: a copy of an aborted input', () => {
    const w = new World();
    w.transfer({ txn: 't1', from: 0, to: 2, amount: 10, intent: 'abort' });
    const leg = w.log(TOPIC, 0).raw[0]!;
    w.process({ txn: 'x1', partition: 0, offsets: [leg.offset], commitTo: 2 });
    expect(types(w)).to.deep.equal(['eos-phantom']);
  });

  it('divergence: two replicas with different logs below the HW', () => {
    const w = clean();
    const f = w.final();
    const p0 = part(f, TOPIC, 0);
    expect(types(w, replacePart(f, { ...p0, replicaDigests: [{ nodeId: 1, digest: 'a' }, { nodeId: 3, digest: 'b' }] }))).to.deep.equal(['divergence']);
  });
});
