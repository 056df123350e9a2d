// Transactional offset commits on a real 3-node cluster (combined nodes on
// loopback), with the real transaction coordinator, its KIP-890 verifier and
// its markers, driven with the raw protocol over WebSocket links: a
// TxnOffsetCommit before AddOffsetsToTxn is refused by the verification;
// after it, the offsets are pending (OffsetFetch requireStable answers
// UNSTABLE_OFFSET_COMMIT) until EndTxn's COMMIT marker lands in
// __consumer_offsets. A second transaction's offsets are left open and the
// group coordinator is SIGKILLed: the broker that takes the offsets
// partition over loads them pending, and the ABORT marker that EndTxn then
// sends there drops them, leaving the first transaction's offsets.
// Pending-state details are tested on real replica managers in
// txn-offsets.test.ts; this keeps what only real processes show.

import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { CONSUMER_OFFSETS_TOPIC, type FindCoordinatorResponse, type OffsetCommitResponse, type OffsetFetchResponse } from '../../src/protocol/apis/groups.js';
import { TRANSACTION_STATE_TOPIC, type AddOffsetsToTxnResponse, type EndTxnResponse, type InitProducerIdTxnResponse } from '../../src/protocol/apis/transactions.js';
import type { ClientLink } from '../../src/net/client-link.js';
import { Errors, errorForCode } from '../../src/util/errors.js';
import { waitFor, type ProcessCluster } from '../integration/harness.js';
import { Connections, connect, connectLink, startBrokerCluster, waitForFullIsr } from '../integration/broker-kit.js';

const GROUP = 'ledger-readers';
const TXN = 'ledger-writer';
const TOPIC = 'ledger';
const PARTITIONS = 3;
const TXN_TIMEOUT_MS = 120_000;
const FAILOVER_MS = 60_000;
const REQUEST_MS = 10_000;

interface Producer { producerId: number; producerEpoch: number }

describe('transactional offset commits on a real 3-node cluster', function () {
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
  function retrying<T>(what: string, attempt: () => Promise<T>, code: (r: T) => number): Promise<T> {
    return waitFor(what, async () => {
      const r = await attempt().catch(() => null);
      if (r === null || (code(r) !== 0 && errorForCode(code(r)).retriable)) return undefined;
      return r;
    }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
  }

  function findCoordinator(key: string, keyType: 0 | 1, notNode = -1): Promise<FindCoordinatorResponse & { url: string }> {
    return waitFor(`the coordinator of ${key}`, async () => {
      for (const url of liveUrls()) {
        const c = await call<FindCoordinatorResponse>(url, ApiKey.FindCoordinator, { key, keyType }).catch(() => null);
        if (c && c.errorCode === 0 && c.url && c.nodeId !== notNode) return c as FindCoordinatorResponse & { url: string };
      }
      return undefined;
    }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
  }

  const offsets = (pairs: Array<[number, number]>) => [{ name: TOPIC, partitions: pairs.map(([partition, committedOffset]) => ({ partition, committedOffset, committedLeaderEpoch: -1, metadata: null })) }];

  function txnOffsetCommit(groupUrl: string, p: Producer, pairs: Array<[number, number]>): Promise<number[]> {
    return retrying('TxnOffsetCommit', () => call<OffsetCommitResponse>(groupUrl, ApiKey.TxnOffsetCommit, {
      transactionalId: TXN, groupId: GROUP, ...p, generationId: -1, memberId: '', groupInstanceId: null, topics: offsets(pairs),
    }), (r) => r.topics[0]!.partitions.find((x) => x.errorCode !== 0)?.errorCode ?? 0).then((r) => r.topics[0]!.partitions.map((x) => x.errorCode));
  }

  /** [committed offset, error code] per partition of TOPIC; retried while the coordinator loads or moves (not on UNSTABLE_OFFSET_COMMIT). */
  async function fetched(groupUrl: string, requireStable: boolean): Promise<Array<[number, number]>> {
    const r = await retrying('OffsetFetch', () => call<OffsetFetchResponse>(groupUrl, ApiKey.OffsetFetch, {
      groupId: GROUP, topics: [{ name: TOPIC, partitions: [0, 1, 2] }], requireStable,
    }), (x) => x.errorCode);
    expect(r.errorCode, r.errorMessage ?? '').to.equal(0);
    return r.topics[0]!.partitions.map((x) => [x.committedOffset, x.errorCode]);
  }

  const U = Errors.UNSTABLE_OFFSET_COMMIT.code;

  it('commits a transaction\'s offsets at its marker, and a new group coordinator aborts the open one\'s', async () => {
    const admin = await connect(cluster.brokerUrls[0]!);
    try {
      const set = { 'offsets.topic.num.partitions': '3', 'transaction.state.log.num.partitions': '3' };
      const altered = await admin.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set }] });
      expect(altered.resources[0]!.errorCode).to.equal(0);
      const created = await admin.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }] });
      expect(created.topics[0]!.errorCode).to.equal(0);
      for (const url of cluster.brokerUrls) await waitForFullIsr(await conns.get(url), TOPIC, PARTITIONS);
    } finally {
      admin.close();
    }
    const group = await findCoordinator(GROUP, 0);
    const txn = await findCoordinator(TXN, 1);
    const bootstrap = await conns.get(cluster.brokerUrls[0]!);
    await waitForFullIsr(bootstrap, CONSUMER_OFFSETS_TOPIC, 3);
    await waitForFullIsr(bootstrap, TRANSACTION_STATE_TOPIC, 3);

    const init = await retrying('InitProducerId', () => call<InitProducerIdTxnResponse>(txn.url, ApiKey.InitProducerId, { transactionalId: TXN, transactionTimeoutMs: TXN_TIMEOUT_MS }), (r) => r.errorCode);
    expect(init.errorCode, init.errorMessage ?? '').to.equal(0);
    const p: Producer = { producerId: init.producerId, producerEpoch: init.producerEpoch };

    // ---- before AddOffsetsToTxn the transaction coordinator does not know the offsets partition: refused, nothing pending.
    expect(await txnOffsetCommit(group.url, p, [[0, 5]])).to.deep.equal([Errors.INVALID_TXN_STATE.code]);
    expect(await fetched(group.url, true)).to.deep.equal([[-1, 0], [-1, 0], [-1, 0]]);

    // ---- transaction 1: pending, then committed by its marker.
    const addOffsets = (q: Producer) => retrying('AddOffsetsToTxn', () => call<AddOffsetsToTxnResponse>(txn.url, ApiKey.AddOffsetsToTxn, { transactionalId: TXN, ...q, groupId: GROUP }), (r) => r.errorCode);
    expect((await addOffsets(p)).errorCode).to.equal(0);
    expect(await txnOffsetCommit(group.url, p, [[0, 10], [1, 11]])).to.deep.equal([0, 0]);
    expect(await fetched(group.url, false)).to.deep.equal([[-1, 0], [-1, 0], [-1, 0]]);
    expect(await fetched(group.url, true)).to.deep.equal([[-1, U], [-1, U], [-1, 0]]);
    const end = (q: Producer, committed: boolean) => retrying('EndTxn', () => call<EndTxnResponse>(txn.url, ApiKey.EndTxn, { transactionalId: TXN, ...q, committed, bumpEpoch: true }), (r) => r.errorCode);
    const ended = await end(p, true);
    expect(ended).to.include({ errorCode: 0, producerEpoch: p.producerEpoch + 1 });
    await waitFor('the COMMIT marker in __consumer_offsets', async () => (await fetched(group.url, true))[0]![0] === 10, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
    expect(await fetched(group.url, true)).to.deep.equal([[10, 0], [11, 0], [-1, 0]]);

    // ---- transaction 2: left open; the group coordinator is killed.
    const q: Producer = { producerId: ended.producerId, producerEpoch: ended.producerEpoch };
    expect((await addOffsets(q)).errorCode).to.equal(0);
    expect(await txnOffsetCommit(group.url, q, [[0, 20], [2, 22]])).to.deep.equal([0, 0]);
    expect(await fetched(group.url, true)).to.deep.equal([[-1, U], [11, 0], [-1, U]]);
    await cluster.node(group.nodeId).kill('SIGKILL');
    const group2 = await findCoordinator(GROUP, 0, group.nodeId);
    expect(await fetched(group2.url, false), 'the new coordinator loaded the committed offsets').to.deep.equal([[10, 0], [11, 0], [-1, 0]]);
    expect(await fetched(group2.url, true), 'and the open transaction\'s, pending').to.deep.equal([[-1, U], [11, 0], [-1, U]]);

    // ---- the transaction aborts (through whichever broker coordinates it now): its marker drops the offsets.
    const txnNow = txn.nodeId === group.nodeId ? await findCoordinator(TXN, 1, group.nodeId) : txn;
    const aborted = await retrying('EndTxn abort', () => call<EndTxnResponse>(txnNow.url, ApiKey.EndTxn, { transactionalId: TXN, ...q, committed: false, bumpEpoch: true }), (r) => r.errorCode);
    expect(aborted.errorCode, aborted.errorMessage ?? '').to.equal(0);
    await waitFor('the ABORT marker on the new leader', async () => (await fetched(group2.url, true))[0]![1] === 0, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
    expect(await fetched(group2.url, true)).to.deep.equal([[10, 0], [11, 0], [-1, 0]]);
  });
});
