// The log cleaner and transactions (cleaner-job.ts, cleaner-filter.ts), on a
// real compacted PartitionLog: a committed transaction's values supersede
// older ones, an aborted transaction's records are dropped and never
// supersede a committed value, markers are kept, the cleaned segment keeps
// the aborted-transaction index, and a transaction still undecided is left
// alone (not used to drop older values) until its marker is written.

import { expect } from 'chai';
import fc from 'fast-check';
import { decodeRecordBatches } from '../../src/record/record-batch.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { CONTROL_FLAG_MASK } from '../../src/record/batch-header.js';
import { encodeTxnMarker } from '../../src/record/control-batch.js';
import type { LogConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { readAllBytes, removeDir, tempDir } from './log-test-helpers.js';
import { cleanUntilIdle, keyedBatch, makeCleaner } from './cleaner-test-kit.js';

const CONFIG: Partial<LogConfig> = { segmentBytes: 300, indexIntervalBytes: 100, cleanupPolicy: 'compact', minCleanableDirtyRatio: 0, retentionMs: -1 };

function txnBatch(pid: number, seq: number, key: string, value: string): Buffer {
  return asBuffer(encodeRecordBatch({
    records: [{ key: Buffer.from(key), value: Buffer.from(value), timestamp: 1_000 }],
    producerId: BigInt(pid), producerEpoch: 0, baseSequence: seq, isTransactional: true,
  }));
}

function markerOf(pid: number, committed: boolean): Buffer {
  return asBuffer(encodeTxnMarker({ producerId: pid, producerEpoch: 0, committed, coordinatorEpoch: 0, timestampMs: 1_000 }));
}

interface Seen { data: Array<{ key: string; value: string; pid: bigint }>; markers: Array<{ offset: number; pid: bigint }> }

function contents(log: PartitionLog): Seen {
  const out: Seen = { data: [], markers: [] };
  for (const b of decodeRecordBatches(readAllBytes(log))) {
    if ((b.header.attributes & CONTROL_FLAG_MASK) !== 0) {
      out.markers.push({ offset: b.header.baseOffset, pid: b.header.producerId });
      continue;
    }
    for (const r of b.records) out.data.push({ key: Buffer.from(r.key!).toString(), value: Buffer.from(r.value!).toString(), pid: b.header.producerId });
  }
  return out;
}

describe('LogCleaner: transactions', () => {
  let dir: string;
  let dataDir: string;
  beforeEach(() => {
    dir = tempDir('sluice-cleaner-txn-');
    dataDir = tempDir('sluice-cleaner-txn-data-');
  });
  afterEach(() => {
    removeDir(dir);
    removeDir(dataDir);
  });

  it('keeps committed transactions, drops aborted ones, keeps markers, and waits for undecided ones', () => {
    const scheduler = new ManualScheduler();
    const log = PartitionLog.open({ dir, clock: scheduler.clock, config: CONFIG });
    const append = (b: Buffer): number => log.append(b, { leaderEpoch: 0 }).baseOffset;
    append(keyedBatch([{ key: 'k1', value: 'old1' }, { key: 'k2', value: 'old2' }, { key: 'k3', value: 'old3' }]));
    append(txnBatch(5, 0, 'k1', 'committed'));
    append(txnBatch(6, 0, 'k2', 'aborted'));
    append(markerOf(5, true));
    const abortAt = append(markerOf(6, false));
    log.addAbortedTxn({ producerId: 6, firstOffset: 4, lastOffset: abortAt, lastStableOffset: abortAt + 1 });
    append(txnBatch(7, 0, 'k3', 'undecided'));
    for (let i = 0; i < 12; i++) append(keyedBatch([{ key: `filler${i}`, value: 'x' }]));
    log.roll();
    log.updateHighWatermark(log.logEndOffset);
    expect(log.numberOfSegments).to.be.greaterThan(2);

    const cleaner = makeCleaner(dataDir, () => log, scheduler);
    cleanUntilIdle(cleaner, scheduler);
    expect(cleaner.stats.runs).to.be.greaterThan(0);
    const after = contents(log);
    const values = (key: string): string[] => after.data.filter((r) => r.key === key).map((r) => r.value);
    expect(values('k1'), 'the committed value superseded the old one').to.deep.equal(['committed']);
    expect(values('k2'), 'the aborted value is gone and did not supersede the committed one').to.deep.equal(['old2']);
    expect(values('k3'), 'an undecided transaction neither supersedes nor is dropped').to.deep.equal(['old3', 'undecided']);
    expect(after.markers.map((m) => m.pid), 'markers stay').to.deep.equal([5n, 6n]);
    expect(log.abortedTransactions(0, log.logEndOffset).map((a) => a.producerId), 'the abort stays indexed').to.deep.equal([6]);

    // Producer 7 commits: a later clean lets its value supersede the old one.
    append(markerOf(7, true));
    for (let i = 0; i < 12; i++) append(keyedBatch([{ key: `filler${i}`, value: 'y' }]));
    log.roll();
    log.updateHighWatermark(log.logEndOffset);
    scheduler.advance(2_000); // past the backoff of a clean that could not pass the undecided transaction
    cleanUntilIdle(cleaner, scheduler);
    const later = contents(log);
    expect(later.data.filter((r) => r.key === 'k3').map((r) => r.value)).to.deep.equal(['undecided']);
    expect(later.data.filter((r) => r.key === 'k2').map((r) => r.value)).to.deep.equal(['old2']);
    expect(later.markers.map((m) => m.pid)).to.deep.equal([5n, 6n, 7n]);
    cleaner.stop();
    log.close();
    const reopened = PartitionLog.open({ dir, clock: scheduler.clock, config: CONFIG });
    expect(reopened.abortedTransactions(0, reopened.logEndOffset).map((a) => a.producerId), 'the cleaned segment wrote its index').to.deep.equal([6]);
    reopened.close();
  });

  it('property: a read_committed reader sees the same last committed value of every key before and after cleans', () => {
    type Cmd = { kind: 'plain' | 'txn'; pid: number; key: number; value: number } | { kind: 'marker'; pid: number; commit: boolean } | { kind: 'roll' } | { kind: 'clean' };
    const cmd: fc.Arbitrary<Cmd> = fc.oneof(
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('plain' as const), pid: fc.constant(0), key: fc.integer({ min: 0, max: 4 }), value: fc.nat(1000) }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('txn' as const), pid: fc.integer({ min: 1, max: 3 }), key: fc.integer({ min: 0, max: 4 }), value: fc.nat(1000) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('marker' as const), pid: fc.integer({ min: 1, max: 3 }), commit: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('roll' as const) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('clean' as const) }) },
    );
    /** key -> the committed value at the largest offset, as a read_committed reader decides it from the batches in the log. */
    const committedView = (log: PartitionLog): Map<string, string> => {
      const pending = new Map<bigint, Array<{ key: string; value: string; offset: number }>>();
      const last = new Map<string, { value: string; offset: number }>();
      const take = (r: { key: string; value: string; offset: number }): void => {
        if ((last.get(r.key)?.offset ?? -1) < r.offset) last.set(r.key, r);
      };
      for (const b of decodeRecordBatches(readAllBytes(log))) {
        const pid = b.header.producerId;
        if ((b.header.attributes & CONTROL_FLAG_MASK) !== 0) {
          if (Buffer.from(b.records[0]!.key!).readInt16BE(2) === 1) for (const r of pending.get(pid) ?? []) take(r);
          pending.delete(pid);
          continue;
        }
        for (const rec of b.records) {
          const r = { key: Buffer.from(rec.key!).toString(), value: Buffer.from(rec.value!).toString(), offset: rec.offset };
          if (pid >= 0n) pending.set(pid, [...(pending.get(pid) ?? []), r]);
          else take(r);
        }
      }
      return new Map([...last].map(([k, v]) => [k, v.value]));
    };
    fc.assert(fc.property(fc.array(cmd, { minLength: 5, maxLength: 80 }), (cmds) => {
      const d = tempDir('sluice-cleaner-txn-prop-');
      const dd = tempDir('sluice-cleaner-txn-prop-data-');
      const scheduler = new ManualScheduler();
      const log = PartitionLog.open({ dir: d, clock: scheduler.clock, config: CONFIG });
      const cleaner = makeCleaner(dd, () => log, scheduler);
      const seqs = new Map<number, number>();
      try {
        for (const c of cmds) {
          if (c.kind === 'roll') log.roll();
          else if (c.kind === 'clean') {
            log.updateHighWatermark(log.logEndOffset);
            const before = committedView(log);
            scheduler.advance(2_000);
            cleanUntilIdle(cleaner, scheduler);
            expect(committedView(log)).to.deep.equal(before);
          } else if (c.kind === 'marker') {
            log.append(markerOf(c.pid, c.commit), { leaderEpoch: 0 });
          } else if (c.kind === 'plain') {
            log.append(keyedBatch([{ key: `k${c.key}`, value: `p${c.value}` }]), { leaderEpoch: 0 });
          } else {
            const seq = seqs.get(c.pid) ?? 0;
            seqs.set(c.pid, seq + 1);
            log.append(txnBatch(c.pid, seq, `k${c.key}`, `t${c.pid}-${c.value}`), { leaderEpoch: 0 });
          }
        }
        log.roll();
        log.updateHighWatermark(log.logEndOffset);
        const before = committedView(log);
        scheduler.advance(2_000);
        cleanUntilIdle(cleaner, scheduler);
        expect(committedView(log)).to.deep.equal(before);
      } finally {
        cleaner.stop();
        log.close();
        removeDir(d);
        removeDir(dd);
      }
    }), { numRuns: 40 });
  });
});
