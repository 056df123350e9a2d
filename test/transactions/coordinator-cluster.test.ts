// The transaction coordinator on a real 3-node cluster (combined nodes on
// loopback), driven with the raw transaction protocol over WebSocket links:
// FindCoordinator (key type 1) creates __transaction_state; a producer inits,
// adds three partitions, writes a transactional batch to each leader (which
// verifies it with the coordinator, KIP-890 — in-process or over the
// inter-broker link), commits with bumpEpoch, and a read_committed fetch sees
// the records once the markers land (markers sent locally and over the
// inter-broker link). A second transaction is left open and its coordinator
// is SIGKILLed: the broker that takes over __transaction_state loads the open
// transaction and aborts it at its timeout, with an epoch bump, so the
// partitions' LSO moves on, the records are reported aborted and a late write
// of the old producer is refused. What is timing (exact timeouts) is tested on
// manual clocks in coordinator.test.ts; this keeps what only real processes
// show.

import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { READ_COMMITTED, type FetchPartitionResponse } from '../../src/protocol/apis/fetch.js';
import { TRANSACTION_STATE_TOPIC, type AddPartitionsToTxnResponse, type DescribeTransactionsResponse, type EndTxnResponse, type InitProducerIdTxnResponse } from '../../src/protocol/apis/transactions.js';
import type { FindCoordinatorResponse } from '../../src/protocol/apis/groups.js';
import type { ProduceResponse } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import type { ClientLink } from '../../src/net/client-link.js';
import { Errors, errorForCode } from '../../src/util/errors.js';
import { waitFor, type ProcessCluster } from '../integration/harness.js';
import { brokerUrls, Connections, connect, connectLink, startBrokerCluster, waitForFullIsr } from '../integration/broker-kit.js';

const TXN = 'transfers';
const TOPIC = 'accounts';
const STATE_PARTITIONS = 3;
/** One per broker (the controller spreads leaders): some leaders are not the coordinator, so markers and KIP-890 checks cross brokers. */
const PARTITIONS = [0, 1, 2];
const TXN_TIMEOUT_MS = 4_000;
const FAILOVER_MS = 60_000;
const REQUEST_MS = 10_000;

interface Producer { producerId: number; producerEpoch: number }

describe('transaction coordinator on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  const conns = new Connections();
  const links = new Map<string, ClientLink>();

  before(async () => {
    cluster = await startBrokerCluster(3);
  });

  after(async () => {
    for (const l of links.values()) l.close();
    conns.closeAll();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  async function link(url: string): Promise<ClientLink> {
    const known = links.get(url);
    if (known?.isOpen) return known;
    const l = await connectLink(url);
    links.set(url, l);
    return l;
  }

  const call = async <T,>(url: string, apiKey: number, body: object): Promise<T> => (await link(url)).request<T>(apiKey, 0, body, REQUEST_MS);
  const liveUrls = (): string[] => cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl);

  /** Retries `attempt` while it answers a retriable error code (or the link fails), up to the failover bound. */
  function retrying<T extends { errorCode: number }>(what: string, attempt: () => Promise<T>): Promise<T> {
    return waitFor(what, async () => {
      const r = await attempt().catch(() => null);
      if (r === null || (r.errorCode !== 0 && errorForCode(r.errorCode).retriable)) return undefined;
      return r;
    }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
  }

  function findCoordinator(notNode = -1): Promise<FindCoordinatorResponse & { url: string }> {
    return waitFor(`the coordinator of ${TXN}`, async () => {
      for (const url of liveUrls()) {
        const c = await call<FindCoordinatorResponse>(url, ApiKey.FindCoordinator, { key: TXN, keyType: 1 }).catch(() => null);
        if (c && c.errorCode === 0 && c.url && c.nodeId !== notNode) return c as FindCoordinatorResponse & { url: string };
      }
      return undefined;
    }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
  }

  async function leaderUrl(partition: number): Promise<string> {
    const bootstrap = await conns.get(liveUrls()[0]!);
    const leader = (await bootstrap.metadata([TOPIC])).topics[0]!.partitions.find((p) => p.partition === partition)!.leader;
    return (await brokerUrls(bootstrap)).get(leader)!;
  }

  function produce(p: Producer, partition: number, sequence: number, value: string): Promise<{ errorCode: number }> {
    const records = Buffer.from(encodeRecordBatch({
      records: [{ value: Buffer.from(value), timestamp: 1_700_000_000_000 }], producerId: BigInt(p.producerId), producerEpoch: p.producerEpoch,
      baseSequence: sequence, isTransactional: true,
    }));
    return leaderUrl(partition).then((url) => call<ProduceResponse>(url, ApiKey.Produce, {
      transactionalId: TXN, acks: -1, timeoutMs: 5_000, topics: [{ name: TOPIC, partitions: [{ partition, records }] }],
    })).then((r) => r.topics[0]!.partitions[0]!);
  }

  async function readCommitted(partition: number): Promise<FetchPartitionResponse> {
    const res = await call<{ topics: Array<{ partitions: FetchPartitionResponse[] }> }>(await leaderUrl(partition), ApiKey.Fetch, {
      maxWaitMs: 0, isolationLevel: READ_COMMITTED, topics: [{ name: TOPIC, partitions: [{ partition, fetchOffset: 0 }] }],
    });
    return res.topics[0]!.partitions[0]!;
  }

  it('commits across three partitions (led by the coordinator and by others), then finishes a transaction whose coordinator was SIGKILLed', async () => {
    const admin = await connect(cluster.brokerUrls[0]!);
    try {
      const set = { 'transaction.state.log.num.partitions': String(STATE_PARTITIONS), 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500' };
      const altered = await admin.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set }] });
      expect(altered.resources[0]!.errorCode).to.equal(0);
      const created = await admin.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 3, replicationFactor: 3 }] });
      expect(created.topics[0]!.errorCode).to.equal(0);
      for (const url of cluster.brokerUrls) await waitForFullIsr(await conns.get(url), TOPIC, PARTITIONS.length);
    } finally {
      admin.close();
    }

    // ---- FindCoordinator creates __transaction_state; InitProducerId on the coordinator.
    const first = await findCoordinator();
    await waitForFullIsr(await conns.get(cluster.brokerUrls[0]!), TRANSACTION_STATE_TOPIC, STATE_PARTITIONS);
    const init = await retrying('InitProducerId', () => call<InitProducerIdTxnResponse>(first.url, ApiKey.InitProducerId, { transactionalId: TXN, transactionTimeoutMs: TXN_TIMEOUT_MS }));
    expect(init.errorCode, init.errorMessage ?? '').to.equal(0);
    const p: Producer = { producerId: init.producerId, producerEpoch: init.producerEpoch };

    // ---- a write to a partition not in the transaction is refused by its leader (KIP-890).
    expect((await produce(p, 0, 0, 'unverified')).errorCode).to.not.equal(0);

    // ---- transaction 1: both partitions, committed.
    const add = (q: Producer) => retrying('AddPartitionsToTxn', () => call<AddPartitionsToTxnResponse>(first.url, ApiKey.AddPartitionsToTxn, { transactionalId: TXN, ...q, topics: [{ name: TOPIC, partitions: PARTITIONS }] }));
    const added = await add(p);
    expect(added.results[0]!.partitions.map((r) => r.errorCode)).to.deep.equal([0, 0, 0]);
    const leaders = await Promise.all(PARTITIONS.map(async (partition) => (await leaderUrl(partition))));
    expect(leaders.some((url) => url !== first.url), 'a partition led by another broker than the coordinator').to.equal(true);
    expect(leaders.some((url) => url === first.url), 'a partition led by the coordinator').to.equal(true);
    for (const partition of PARTITIONS) expect((await produce(p, partition, 0, `transfer-1-${partition}`)).errorCode, `acct-${partition}`).to.equal(0);
    const ended = await retrying('EndTxn', () => call<EndTxnResponse>(first.url, ApiKey.EndTxn, { transactionalId: TXN, ...p, committed: true, bumpEpoch: true }));
    expect(ended).to.include({ errorCode: 0, producerId: p.producerId, producerEpoch: p.producerEpoch + 1 });
    for (const partition of PARTITIONS) {
      await waitFor(`committed records of ${TOPIC}-${partition}`, async () => (await readCommitted(partition)).lastStableOffset === 2, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
      expect((await readCommitted(partition)).abortedTransactions ?? []).to.deep.equal([]);
    }

    // ---- transaction 2: left open, then its coordinator is killed.
    const q: Producer = { producerId: ended.producerId, producerEpoch: ended.producerEpoch };
    await add(q);
    for (const partition of PARTITIONS) expect((await produce(q, partition, 0, `transfer-2-${partition}`)).errorCode).to.equal(0);
    expect((await readCommitted(0)).lastStableOffset, 'the open transaction holds the LSO').to.equal(2);
    await cluster.node(first.nodeId).kill('SIGKILL');
    const second = await findCoordinator(first.nodeId);
    const described = await waitFor('the new coordinator to abort the hung transaction', async () => {
      const d = await call<DescribeTransactionsResponse>(second.url, ApiKey.DescribeTransactions, { transactionalIds: [TXN] }).catch(() => null);
      const t = d?.transactionStates[0];
      return t && t.errorCode === 0 && t.transactionState === 'CompleteAbort' ? t : undefined;
    }, { timeoutMs: FAILOVER_MS, intervalMs: 200 });
    expect(described.producerEpoch, 'aborted with an epoch bump').to.equal(q.producerEpoch + 1);
    for (const partition of PARTITIONS) {
      const r = await waitFor(`the abort marker on ${TOPIC}-${partition}`, async () => {
        const f = await readCommitted(partition).catch(() => null);
        return f && f.errorCode === 0 && f.lastStableOffset === 4 ? f : undefined;
      }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
      expect(r.abortedTransactions, 'the aborted records are reported to read_committed readers').to.deep.equal([{ producerId: q.producerId, firstOffset: 2 }]);
    }
    // ---- the old producer is fenced: its late write and its commit are refused.
    // The leader asks the coordinator first (no open transaction of this producer there now): PRODUCER_FENCED;
    // without that check the marker's epoch would refuse it (INVALID_PRODUCER_EPOCH, coordinator.test.ts).
    expect((await produce(q, 0, 1, 'late')).errorCode).to.equal(Errors.PRODUCER_FENCED.code);
    const zombie = await call<EndTxnResponse>(second.url, ApiKey.EndTxn, { transactionalId: TXN, ...q, committed: true, bumpEpoch: true });
    expect(zombie.errorCode).to.equal(Errors.PRODUCER_FENCED.code);
  });
});
