// A seeded workout of the coordinator shell on three real replica managers:
// four transactional producers run transactions over three partitions
// (committing, aborting, or leaving them hanging), while the leaders of the
// __transaction_state partitions (the coordinators) and of the data
// partitions move between brokers. At the end, time passes the transaction
// timeout and the checks are those of a transaction: every transaction ended
// (no partition keeps an open one: LSO = high watermark; every id settled on
// its coordinator), none is torn (a producer epoch's markers agree on every
// partition), and every commit or abort the coordinator acknowledged is what
// the markers say. The seed and a trace are printed on failure; more seeds:
// SLUICE_TXN_SEEDS=1,2,3,... (the default ones catch a coordinator that does
// not finish the prepared transactions it loads).

import { expect } from 'chai';
import { TestCluster, waitFor } from '../replication/replica-harness.js';
import { TransactionCoordinator } from '../../src/transactions/coordinator.js';
import { markerChannel } from '../../src/transactions/markers.js';
import type { InterBrokerCalls } from '../../src/transactions/broker-links.js';
import { coordinatorPartition } from '../../src/groups/placement.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { TRANSACTION_STATE_TOPIC, type WriteTxnMarkersRequest } from '../../src/protocol/apis/transactions.js';
import { CONTROL_FLAG_MASK } from '../../src/record/batch-header.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../src/record/record-batch.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { errorForCode } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const BROKERS = [1, 2, 3];
const STATE_ID = 'state-id';
const DATA_ID = 'data-id';
const DATA_PARTITIONS = 3;
const STATE_PARTITIONS = 2;
const IDS = ['alice', 'bob', 'carol', 'dave'];
const TIMEOUT_MS = 30_000;
const STEPS = 30;
const SEEDS = (process.env.SLUICE_TXN_SEEDS ?? '2,3,6,11,12').split(',').map(Number);

interface Producer { producerId: number; producerEpoch: number }

describe('transaction coordinator under coordinator and leader moves (seeded, real replica managers)', function () {
  this.timeout(120_000);

  for (const seed of SEEDS) {
    it(`seed ${seed}: every transaction ends, none is torn, acknowledged ends hold`, async () => {
      const rng = new SeededRng(seed);
      const trace: string[] = [];
      const cluster = await TestCluster.start(BROKERS, { replicaLagTimeMaxMs: 600_000 });
      const coordinators = new Map<number, TransactionCoordinator>();
      const schedulers = new Map<number, ManualScheduler>();
      try {
        let nextPid = 5000;
        const calls: InterBrokerCalls = {
          request: async <T,>(brokerId: number, apiKey: number, body: object): Promise<T> => {
            if (apiKey !== ApiKey.WriteTxnMarkers) throw new Error(`api ${apiKey}`);
            return (await cluster.node(brokerId).rm.writeTxnMarkers(body as WriteTxnMarkersRequest)) as T;
          },
        };
        for (const id of BROKERS) {
          const scheduler = new ManualScheduler();
          schedulers.set(id, scheduler);
          const c = new TransactionCoordinator({
            brokerId: id, replicas: cluster.node(id).rm, image: () => cluster.image, clock: scheduler.clock, scheduler, rng: new SeededRng(id), logger: silentLogger,
            admin: () => Promise.reject(new Error('no controller here')), producerIds: { nextProducerId: async () => nextPid++ },
            markers: markerChannel(id, cluster.node(id).rm, calls), limits: { writeTimeoutMs: 2_000, concurrentWaitMs: 0 },
          });
          c.start();
          coordinators.set(id, c);
        }
        cluster.createTopic(TRANSACTION_STATE_TOPIC, STATE_ID, [{ replicas: [1, 2, 3] }, { replicas: [2, 3, 1] }]);
        cluster.createTopic('acct', DATA_ID, [{ replicas: [1, 2, 3] }, { replicas: [2, 3, 1] }, { replicas: [3, 1, 2] }]);

        /** Moves every coordinator's timers (loads, marker retries) along, all clocks together. */
        const pump = (ms: number) => {
          for (const s of schedulers.values()) s.advance(ms);
        };
        const coordinatorFor = (txnId: string) => coordinators.get(cluster.registration(TRANSACTION_STATE_TOPIC, coordinatorPartition(txnId, STATE_PARTITIONS)).leader)!;
        /** A coordinator call, retried (time moving) while its answer is retriable; the last answer. */
        async function ask<T extends { errorCode: number }>(what: string, call: (c: TransactionCoordinator) => Promise<T>, txnId: string): Promise<T> {
          let last: T | undefined;
          // Bounded: a retriable answer for 20 s of polling (coordinators loading, markers in progress) is a failure.
          for (let i = 0; i < 2_000 && (last === undefined || (last.errorCode !== 0 && errorForCode(last.errorCode).retriable)); i++) {
            if (i > 0) await new Promise((r) => setTimeout(r, 10));
            pump(50);
            last = await call(coordinatorFor(txnId));
          }
          if (last!.errorCode !== 0 && errorForCode(last!.errorCode).retriable) throw new Error(`${what}: still ${last!.errorCode} after 2000 tries\nseed ${seed}\n${trace.join('\n')}`);
          trace.push(`${what} → ${last!.errorCode}`);
          return last!;
        }
        async function produce(txnId: string, p: Producer, partition: number): Promise<number> {
          const batch = encodeRecordBatch({ records: [{ value: Buffer.from(`${txnId}@${p.producerEpoch}`), timestamp: 1 }], producerId: BigInt(p.producerId), producerEpoch: p.producerEpoch, baseSequence: 0, isTransactional: true });
          for (let i = 0; ; i++) {
            const leader = cluster.registration('acct', partition).leader;
            const r = await cluster.node(leader).rm.produce({ acks: -1, timeoutMs: 2_000, transactionalId: txnId, topics: [{ name: 'acct', partitions: [{ partition, records: asBuffer(batch) }] }] });
            const code = r.topics[0]!.partitions[0]!.errorCode;
            if (code === 0 || i >= 20 || !errorForCode(code).retriable) return code;
            await new Promise((res) => setTimeout(res, 10));
          }
        }

        const producers = new Map<string, Producer | null>(IDS.map((id) => [id, null]));
        /** What the coordinator acknowledged: producer id and the epoch the markers carry → committed? */
        const acked = new Map<string, { committed: boolean; partitions: number[] }>();
        for (let step = 0; step < STEPS; step++) {
          const roll = rng.int(10);
          if (roll === 0) {
            const partition = rng.int(STATE_PARTITIONS);
            const leader = BROKERS[rng.int(BROKERS.length)]!;
            trace.push(`move coordinator ${partition} → ${leader}`);
            cluster.changePartition(STATE_ID, partition, { leader });
            continue;
          }
          if (roll === 1) {
            const partition = rng.int(DATA_PARTITIONS);
            const leader = BROKERS[rng.int(BROKERS.length)]!;
            trace.push(`move acct-${partition} → ${leader}`);
            cluster.changePartition(DATA_ID, partition, { leader });
            continue;
          }
          const txnId = IDS[rng.int(IDS.length)]!;
          let p = producers.get(txnId) ?? null;
          if (p === null) {
            const r = await ask(`init ${txnId}`, (c) => c.initProducerId({ transactionalId: txnId, transactionTimeoutMs: TIMEOUT_MS, producerId: -1, producerEpoch: -1 }), txnId);
            if (r.errorCode !== 0) continue;
            p = { producerId: r.producerId, producerEpoch: r.producerEpoch };
          }
          const partitions = [...new Set([rng.int(DATA_PARTITIONS), rng.int(DATA_PARTITIONS)])];
          const cur = p;
          const added = await ask(`add ${txnId} ${JSON.stringify(cur)} ${partitions}`, (c) => c.addPartitionsToTxn({ transactionalId: txnId, ...cur, topics: [{ name: 'acct', partitions }], verifyOnly: false }), txnId);
          if (added.errorCode !== 0) {
            producers.set(txnId, null); // fenced (its transaction was aborted for it): a new instance takes over
            continue;
          }
          for (const partition of partitions) trace.push(`produce ${txnId} acct-${partition} → ${await produce(txnId, cur, partition)}`);
          const ending = rng.int(5);
          if (ending === 0) {
            trace.push(`leave ${txnId} hanging`);
            producers.set(txnId, null);
            continue;
          }
          const committed = ending > 1;
          const ended = await ask(`end ${txnId} ${committed ? 'commit' : 'abort'}`, (c) => c.endTxn({ transactionalId: txnId, ...cur, committed, bumpEpoch: true }), txnId);
          if (ended.errorCode === 0) {
            acked.set(`${cur.producerId}/${cur.producerEpoch + 1}`, { committed, partitions });
            producers.set(txnId, { producerId: ended.producerId, producerEpoch: ended.producerEpoch });
          } else {
            producers.set(txnId, null);
          }
        }

        // ---- time passes every timeout; every transaction must end.
        pump(TIMEOUT_MS + 20_000);
        const settled = () => IDS.every((id) => {
          const m = coordinatorFor(id).transaction(id);
          return m === undefined || m.state === 'Empty' || m.state === 'CompleteCommit' || m.state === 'CompleteAbort';
        });
        const stable = () => [0, 1, 2].every((partition) => {
          const leader = cluster.registration('acct', partition).leader;
          const log = cluster.node(leader).rm.partition('acct', partition)!.log;
          return cluster.node(leader).rm.lastStableOffset('acct', partition) === log.highWatermark;
        });
        await waitFor('every transaction to end', () => {
          pump(500);
          return settled() && stable();
        }, 60_000).catch((err: Error) => {
          throw new Error(`${err.message}\nseed ${seed}\n${trace.join('\n')}\n${IDS.map((id) => `${id}: ${JSON.stringify(coordinatorFor(id).transaction(id))}`).join('\n')}`);
        });

        // ---- no torn transaction; acknowledged ends hold.
        const markers = new Map<string, Map<number, boolean[]>>();
        for (let partition = 0; partition < DATA_PARTITIONS; partition++) {
          const leader = cluster.registration('acct', partition).leader;
          const log = cluster.node(leader).rm.partition('acct', partition)!.log;
          const r = log.read(log.logStartOffset, 1 << 22, { maxOffset: log.logEndOffset });
          for (const b of decodeRecordBatches(r.records)) {
            if ((b.header.attributes & CONTROL_FLAG_MASK) === 0) continue;
            const key = b.records[0]!.key!;
            const k = `${b.header.producerId}/${b.header.producerEpoch}`;
            let byPartition = markers.get(k);
            if (!byPartition) markers.set(k, (byPartition = new Map()));
            const list = byPartition.get(partition) ?? [];
            list.push(new DataView(key.buffer, key.byteOffset).getInt16(2) === 1);
            byPartition.set(partition, list);
          }
        }
        const why = `seed ${seed}\n${trace.join('\n')}`;
        for (const [k, byPartition] of markers) {
          const outcomes = new Set([...byPartition.values()].flat());
          expect(outcomes.size, `producer ${k} has COMMIT and ABORT markers: a torn transaction\n${why}`).to.equal(1);
        }
        for (const [k, a] of acked) {
          const byPartition = markers.get(k);
          for (const partition of a.partitions) {
            expect(byPartition?.get(partition), `acknowledged ${a.committed ? 'commit' : 'abort'} of ${k} has no marker on acct-${partition}\n${why}`).to.not.equal(undefined);
            expect(byPartition!.get(partition)!.every((c) => c === a.committed), `the markers of ${k} on acct-${partition} contradict its acknowledged end\n${why}`).to.equal(true);
          }
        }
        expect(acked.size, `the workout ended some transactions\n${why}`).to.be.above(3);
      } finally {
        for (const c of coordinators.values()) c.stop();
        await cluster.close();
      }
    });
  }
});
