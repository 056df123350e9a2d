// Transactional producer state and the aborted-transaction indexes across
// crashes, on the simulated disk (test/sim/cluster/sim-fs.ts: a crash loses
// what was not fsynced, tails torn at random): a real PartitionLog, Partition
// and ProducerStateStore take random transactional writes, markers and
// flushes; after every crash (and after clean restarts, which take the
// snapshot) the last stable offset and every segment's aborts must equal
// what a from-scratch reading of the surviving log says. Seeded; the seed is
// in the failure message.

import { expect } from 'chai';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { encodeTxnMarker } from '../../src/record/control-batch.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import type { LogConfig } from '../../src/storage/log-config.js';
import { Partition } from '../../src/replication/partition.js';
import { ProducerStateStore } from '../../src/replication/producer-state-store.js';
import { producerFactsIn } from '../../src/replication/producer-state-scan.js';
import { ProducerStateTable, type CompletedTxn } from '../../src/replication/rules/producer-state.js';
import { ManualClock } from '../../src/util/clock.js';
import { fsyncDir } from '../../src/util/fs-util.js';
import { silentLogger } from '../../src/util/logger.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { SeededRng } from '../../src/util/rng.js';
import { SimFileSystem } from '../sim/cluster/sim-fs.js';
import { readAllBytes } from '../storage/log-test-helpers.js';

const DIR = '/data/t-0';
const CONFIG: Partial<LogConfig> = { segmentBytes: 700, indexIntervalBytes: 100, retentionMs: -1 };

interface Node {
  log: PartitionLog;
  p: Partition;
  store: ProducerStateStore;
}

function open(fs: SimFileSystem, clock: ManualClock): Node {
  const log = PartitionLog.open({ dir: DIR, fs, clock, config: CONFIG });
  log.updateHighWatermark(log.logEndOffset);
  const p = new Partition('t', 0, 'tid', log, 1);
  const store = new ProducerStateStore({ clock, logger: silentLogger, expirationMs: 1e12 });
  store.open(p);
  return { log, p, store };
}

/** What the surviving log says: its open transactions and aborts, read from scratch. */
function model(log: PartitionLog): { table: ProducerStateTable; firstUnstable: number | null; aborts: CompletedTxn[] } {
  const table = new ProducerStateTable();
  const aborts: CompletedTxn[] = [];
  for (const b of producerFactsIn(readAllBytes(log)) ?? []) {
    const done = table.apply(b);
    if (done?.aborted) aborts.push(done);
  }
  return { table, firstUnstable: table.firstUnstableOffset, aborts };
}

function check(n: Node, seed: number, when: string): void {
  const m = model(n.log);
  const what = `seed ${seed}, ${when}`;
  expect(n.store.lastStableOffset(n.p), `LSO, ${what}`).to.equal(m.firstUnstable === null ? n.log.highWatermark : Math.min(m.firstUnstable, n.log.highWatermark));
  expect(n.log.abortedTransactions(0, Number.MAX_SAFE_INTEGER), `aborts, ${what}`)
    .to.deep.equal(m.aborts.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset, lastOffset: a.lastOffset, lastStableOffset: a.lastStableOffset })));
}

describe('replication: transactional producer state and aborted-transaction indexes across crashes (simulated disk)', () => {
  let snapshotsTaken = 0;
  after(() => expect(snapshotsTaken, 'clean restarts that took the snapshot, over all seeds').to.be.greaterThan(5));
  for (let seed = 1; seed <= 40; seed++) {
    it(`seed ${seed}: LSO and indexes agree with the log after crashes and clean restarts`, () => {
      const rng = new SeededRng(seed);
      const clock = new ManualClock(1_000_000);
      const fs = new SimFileSystem({ rng: rng.fork() });
      fs.mkdirSync('/data');
      fs.mkdirSync(DIR);
      fsyncDir(fs, '/');
      fsyncDir(fs, '/data');
      let n = open(fs, clock);
      for (let step = 0; step < 120; step++) {
        const r = rng.int(100);
        const pid = 1 + rng.int(3);
        // The producer continues from what the log holds (a crash may have taken its last batches).
        const entry = model(n.log).table.entry(pid);
        const epoch = entry?.epoch ?? 0;
        const last = entry?.batches.at(-1);
        let buf: Buffer;
        let origin: 'client' | 'coordinator' = 'client';
        if (r < 55) {
          const records = 1 + rng.int(3);
          const seq = last === undefined ? 0 : last.lastSeq + 1;
          buf = asBuffer(encodeRecordBatch({
            records: Array.from({ length: records }, (_, i) => ({ value: Buffer.from(`v${step}-${i}`), timestamp: clock.nowMs() })),
            producerId: BigInt(pid), producerEpoch: epoch, baseSequence: seq, isTransactional: rng.int(4) !== 0,
          }));
        } else if (r < 80) {
          origin = 'coordinator';
          const bump = rng.int(2) === 0;
          buf = asBuffer(encodeTxnMarker({ producerId: pid, producerEpoch: bump ? epoch + 1 : epoch, committed: rng.int(2) === 0, coordinatorEpoch: 0, timestampMs: clock.nowMs() }));
        } else if (r < 88) {
          n.log.flush();
          continue;
        } else if (r < 96) {
          fs.crash({ tornTail: true });
          n = open(fs, clock);
          check(n, seed, `after a crash at step ${step}`);
          continue;
        } else {
          const hadTable = n.store.table(n.p) !== undefined;
          n.store.writeSnapshots();
          n.log.close();
          n = open(fs, clock);
          if (hadTable) {
            expect(n.store.table(n.p), `seed ${seed} step ${step}: a clean restart takes the snapshot`).to.not.equal(undefined);
            snapshotsTaken++;
          }
          check(n, seed, `after a clean restart at step ${step}`);
          continue;
        }
        let verdict;
        try {
          verdict = n.store.checkProduce(n.p, buf, origin);
        } catch {
          continue; // refused (a non-transactional write into an open transaction): appends nothing
        }
        expect(verdict.kind, `seed ${seed} step ${step}`).to.equal('append');
        n.log.append(buf, { leaderEpoch: 0 });
        n.store.afterAppend(n.p, buf);
        n.log.updateHighWatermark(n.log.logEndOffset);
      }
      check(n, seed, 'at the end');
      n.log.close();
    });
  }
});
