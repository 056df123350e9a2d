// Cluster administration through any broker: topics, partitions, configs,
// reassignments, and read-only views of the cluster. Built on the Client.
//
// Writes are forwarded by the broker to the active controller and answered
// once their metadata records are committed. A whole-request failure that is
// retriable (NOT_CONTROLLER during a controller election, a lost connection,
// a timeout) is retried by Client.retry() on any broker; per-item errors are
// not retried (a retry of a half-applied batch would report what the first
// attempt did as an error) — the first one is thrown as a typed SluiceError
// whose details carry every item's result.
//
// Group administration (listGroups, describeGroups, fetchOffsets,
// resetOffsets, deleteGroups) lives in group-admin.ts; Admin hands those
// calls to a GroupAdmin so one object covers the whole admin API.

import { ApiKey } from '../protocol/api-keys.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { CreatedTopic, OngoingReassignment } from '../protocol/apis/admin-results.js';
import type { DescribedConfig } from '../protocol/apis/admin-results.js';
import type { AdminApiKey, AdminApis, QuotaEntityPart } from './broker-connection.js';
import { partitionError, type Client, type PartitionInfo } from './client.js';
import { GroupAdmin } from './group-admin.js';
import { describeLogDirs, describeQuorum, electLeaders, type BrokerLogDirs, type ElectionResult, type QuorumDescription } from './cluster-admin.js';
import { errorFromCode } from './responses.js';
import { MATCH_ALL_FILTER, type AclBinding, type AclBindingFilter } from '../security/acl.js';
import { scramSaltedPassword } from './sasl.js';
import { describeTransactions, listTransactions, type ListTransactionsOptions, type TransactionDescription, type TransactionListing } from './transaction-admin.js';

/** Kafka's SCRAM mechanism ids. */
const SCRAM_IDS = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 } as const;
export type ScramMechanismName = keyof typeof SCRAM_IDS;
const SCRAM_NAMES: Record<number, ScramMechanismName> = { 1: 'SCRAM-SHA-256', 2: 'SCRAM-SHA-512' };

export interface UserScramCredentials {
  readonly user: string;
  readonly credentials: ReadonlyArray<{ readonly mechanism: ScramMechanismName; readonly iterations: number }>;
}

export type { CreatedTopic, OngoingReassignment, DescribedConfig };
export type { ListTransactionsOptions, TransactionDescription, TransactionListing } from './transaction-admin.js';
export type { BrokerLogDirs, ElectionResult, QuorumDescription, QuorumMember } from './cluster-admin.js';

export interface NewTopic {
  readonly topic: string;
  /** Default: the cluster's num.partitions. */
  readonly numPartitions?: number;
  /** Default: the cluster's default.replication.factor. */
  readonly replicationFactor?: number;
  /** Explicit replicas per partition (broker ids); replaces numPartitions and replicationFactor. */
  readonly replicaAssignment?: readonly (readonly number[])[];
  /** Topic configs, e.g. { 'retention.ms': '3600000', 'min.insync.replicas': '2' }. */
  readonly configs?: Readonly<Record<string, string>>;
}

export interface TopicDescription {
  readonly name: string;
  readonly topicId: string;
  /** In partition order; `offlineReplicas` are replicas on brokers that are not live. */
  readonly partitions: readonly PartitionInfo[];
}

export interface BrokerDescription {
  readonly nodeId: number;
  /** The client listener (ws://host:port), or null if the broker has none. */
  readonly url: string | null;
  readonly rack: string | null;
  readonly fenced: boolean;
  readonly inControlledShutdown: boolean;
  readonly endpoints: ReadonlyArray<{ readonly name: string; readonly url: string }>;
}

export interface ClusterDescription {
  readonly clusterId: string | null;
  readonly controllerId: number;
  /** Every registered broker, fenced ones included. */
  readonly brokers: readonly BrokerDescription[];
}

export type ConfigResourceType = 'topic' | 'cluster';

export interface ConfigResource {
  readonly resourceType: ConfigResourceType;
  /** The topic name; '' for the cluster. */
  readonly resourceName: string;
  readonly set?: Readonly<Record<string, string>>;
  readonly delete?: readonly string[];
}

export interface AdminOptions {
  /** How long createTopics waits for every new partition to have a leader. Default 30 s. */
  readonly leaderWaitTimeoutMs?: number;
}

/** The endpoint name brokers register their client listener under. */
const CLIENT_ENDPOINT = 'BROKER';
const LEADER_POLL_INTERVAL_MS = 50;

export class Admin {
  private readonly leaderWaitTimeoutMs: number;
  private readonly groups: GroupAdmin;

  constructor(private readonly client: Client, opts: AdminOptions = {}) {
    this.leaderWaitTimeoutMs = opts.leaderWaitTimeoutMs ?? 30_000;
    if (!(Number.isSafeInteger(this.leaderWaitTimeoutMs) && this.leaderWaitTimeoutMs > 0)) {
      throw new SluiceError(Errors.INVALID_CONFIG, 'leaderWaitTimeoutMs must be a positive integer');
    }
    this.groups = new GroupAdmin(client);
  }

  // ---- groups (GroupAdmin's, here so one object covers the admin API) ----------

  listGroups(): ReturnType<GroupAdmin['listGroups']> {
    return this.groups.listGroups();
  }

  describeGroups(groupIds: readonly string[]): ReturnType<GroupAdmin['describeGroups']> {
    return this.groups.describeGroups(groupIds);
  }

  fetchOffsets(opts: Parameters<GroupAdmin['fetchOffsets']>[0]): ReturnType<GroupAdmin['fetchOffsets']> {
    return this.groups.fetchOffsets(opts);
  }

  resetOffsets(opts: Parameters<GroupAdmin['resetOffsets']>[0]): ReturnType<GroupAdmin['resetOffsets']> {
    return this.groups.resetOffsets(opts);
  }

  deleteGroups(groupIds: readonly string[]): ReturnType<GroupAdmin['deleteGroups']> {
    return this.groups.deleteGroups(groupIds);
  }

  // ---- quorum, disks and elections (cluster-admin.ts) -----------------------------

  /** The metadata quorum: leader, term, high watermark, each voter's and observer's lag. */
  describeQuorum(): Promise<QuorumDescription> {
    return describeQuorum(this.client);
  }

  /** Every live broker's replicas on disk (size, log start/end, high watermark as each replica knows it). */
  describeLogDirs(req: { topics?: readonly string[] } = {}): Promise<BrokerLogDirs[]> {
    return describeLogDirs(this.client, req.topics);
  }

  /** Open and recent transactions, from every broker (kafka-transactions.sh list). */
  listTransactions(opts: ListTransactionsOptions = {}): Promise<TransactionListing[]> {
    return listTransactions(this.client, opts);
  }

  /** State, producer id/epoch, timeout, start time and partitions of each transactional id, from its coordinator. */
  describeTransactions(transactionalIds: readonly string[]): Promise<TransactionDescription[]> {
    return describeTransactions(this.client, transactionalIds);
  }

  /** Preferred (default) or unclean leader election; `partitions` null: every partition. */
  electLeaders(req: Parameters<typeof electLeaders>[1]): Promise<ElectionResult[]> {
    return electLeaders(this.client, req);
  }

  /**
   * Creates topics; with `waitForLeaders` (default true) resolves only once
   * every partition has a leader, so a producer can use them at once.
   */
  async createTopics(req: { topics: readonly NewTopic[]; validateOnly?: boolean; waitForLeaders?: boolean }): Promise<CreatedTopic[]> {
    const topics = req.topics.map((t) => ({
      name: t.topic,
      ...(t.replicaAssignment
        ? { assignments: t.replicaAssignment.map((r) => [...r]) }
        : { ...(t.numPartitions === undefined ? {} : { numPartitions: t.numPartitions }), ...(t.replicationFactor === undefined ? {} : { replicationFactor: t.replicationFactor }) }),
      ...(t.configs ? { configs: { ...t.configs } } : {}),
    }));
    const res = await this.forward('createTopics', ApiKey.CreateTopics, { topics, ...(req.validateOnly ? { validateOnly: true } : {}) });
    throwFirstItemError('createTopics', res.topics, (t) => ({ topic: t.name }));
    if (req.validateOnly !== true && req.waitForLeaders !== false) {
      await Promise.all(res.topics.map((t) => this.waitForLeaders(t.name, t.numPartitions)));
    }
    return res.topics;
  }

  async deleteTopics(req: { topics: readonly string[] }): Promise<void> {
    const res = await this.forward('deleteTopics', ApiKey.DeleteTopics, { names: [...req.topics] });
    throwFirstItemError('deleteTopics', res.topics, (t) => ({ topic: t.name }));
  }

  /** Grows each topic to `count` partitions (partitions are never removed). */
  async createPartitions(req: { topicPartitions: ReadonlyArray<{ topic: string; count: number }>; validateOnly?: boolean }): Promise<void> {
    for (const tp of req.topicPartitions) {
      const res = await this.forward('createPartitions', ApiKey.CreatePartitions, { topic: tp.topic, count: tp.count, ...(req.validateOnly ? { validateOnly: true } : {}) });
      throwFirstItemError('createPartitions', [res], () => ({ topic: tp.topic }));
    }
  }

  /** Names of every topic, sorted. */
  async listTopics(): Promise<string[]> {
    const topics = await this.client.retry('listTopics', () => this.client.listTopics());
    return topics.map((t) => t.name).sort();
  }

  /** Fresh metadata of the named topics; an unknown one throws UNKNOWN_TOPIC_OR_PARTITION. */
  async describeTopics(req: { topics: readonly string[] }): Promise<TopicDescription[]> {
    const md = await this.client.retry('describeTopics', async () => (await this.client.anyConnection()).metadata([...req.topics]));
    return req.topics.map((name) => {
      const t = md.topics.find((x) => x.name === name);
      if (!t || t.topicId === null || t.errorCode !== 0) {
        throw partitionError(t?.errorCode || Errors.UNKNOWN_TOPIC_OR_PARTITION.code, t?.errorMessage ?? `topic ${name} does not exist`, { topic: name })!;
      }
      const partitions = [...t.partitions].sort((a, b) => a.partition - b.partition).map((p) => ({ ...p }));
      return { name, topicId: t.topicId, partitions };
    });
  }

  async describeCluster(): Promise<ClusterDescription> {
    const d = await this.client.retry('describeCluster', async () => (await this.client.anyConnection()).describeCluster());
    return {
      clusterId: d.clusterId,
      controllerId: d.controllerId,
      brokers: d.brokers.map((b) => ({
        nodeId: b.nodeId,
        url: b.endpoints.find((e) => e.name === CLIENT_ENDPOINT)?.url ?? null,
        rack: b.rack, fenced: b.fenced, inControlledShutdown: b.inControlledShutdown, endpoints: b.endpoints,
      })).sort((a, b) => a.nodeId - b.nodeId),
    };
  }

  /** Every config of a topic (or of the cluster, resourceName ''), with value, source and doc. */
  async describeConfigs(req: { resourceType: ConfigResourceType; resourceName: string }): Promise<DescribedConfig[]> {
    const res = await this.forward('describeConfigs', ApiKey.DescribeConfigs, { resourceType: req.resourceType, resourceName: req.resourceName });
    throwFirstItemError('describeConfigs', [res], () => ({ resourceType: req.resourceType, resourceName: req.resourceName }));
    return res.configs;
  }

  /** Sets and deletes config keys (deleted keys fall back to the cluster value or the default). */
  async alterConfigs(req: { resources: readonly ConfigResource[]; validateOnly?: boolean }): Promise<void> {
    const resources = req.resources.map((r) => ({
      resourceType: r.resourceType, resourceName: r.resourceName,
      ...(r.set ? { set: { ...r.set } } : {}), ...(r.delete ? { delete: [...r.delete] } : {}),
    }));
    const res = await this.forward('alterConfigs', ApiKey.AlterConfigs, { resources, ...(req.validateOnly ? { validateOnly: true } : {}) });
    throwFirstItemError('alterConfigs', res.resources, (r) => ({ resourceType: r.resourceType, resourceName: r.resourceName }));
  }

  /** Moves partitions to new replica lists (null cancels an ongoing move); the move completes in the background. */
  async alterPartitionReassignments(req: { partitions: ReadonlyArray<{ topic: string; partition: number; replicas: readonly number[] | null }> }): Promise<void> {
    const partitions = req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas === null ? null : [...p.replicas] }));
    const res = await this.forward('alterPartitionReassignments', ApiKey.AlterPartitionReassignments, { partitions });
    throwFirstItemError('alterPartitionReassignments', res.partitions, (p) => ({ topic: p.topic, partition: p.partition }));
  }

  /** Moves in progress: current replicas, those being added and removed, and the target. */
  async listPartitionReassignments(): Promise<OngoingReassignment[]> {
    const res = await this.forward('listPartitionReassignments', ApiKey.ListPartitionReassignments, {});
    return res.reassignments;
  }

  /**
   * Deletes the records of `topic` below the given offsets (offset -1: every
   * committed record): each partition's leader moves its log start offset
   * there. Resolves with each partition's new log start offset (Kafka's low
   * watermark); a partition error that a retry cannot fix (an offset past the
   * high watermark: OFFSET_OUT_OF_RANGE) is thrown.
   */
  async deleteRecords(req: { topic: string; partitions: ReadonlyArray<{ partition: number; offset: number }> }): Promise<Array<{ partition: number; lowWatermark: number }>> {
    const done = new Map<number, number>();
    await this.client.retry('deleteRecords', async () => {
      const byLeader = new Map<number, Array<{ partition: number; offset: number }>>();
      for (const p of req.partitions.filter((q) => !done.has(q.partition))) {
        const { brokerId } = await this.client.leaderFor(req.topic, p.partition);
        byLeader.set(brokerId, [...(byLeader.get(brokerId) ?? []), p]);
      }
      let retriable: SluiceError | null = null;
      await Promise.all([...byLeader].map(async ([brokerId, ps]) => {
        const res = await (await this.client.connection(brokerId)).deleteRecords({ topics: [{ name: req.topic, partitions: ps }] });
        for (const p of res.topics[0]?.partitions ?? []) {
          if (p.errorCode === Errors.NONE.code) { done.set(p.partition, p.lowWatermark); continue; }
          const err = errorFromCode(p.errorCode, p.errorMessage, { topic: req.topic, partition: p.partition });
          if (!err.retriable) throw err;
          this.client.noteError(err);
          retriable = err;
        }
      }));
      if (retriable) throw retriable;
    });
    return req.partitions.map((p) => ({ partition: p.partition, lowWatermark: done.get(p.partition)! }));
  }

  /** Every ACL the filter matches (MATCH_ALL_FILTER: all of them). Needs Describe on the cluster. */
  async describeAcls(filter: AclBindingFilter = MATCH_ALL_FILTER): Promise<AclBinding[]> {
    const res = await this.client.retry('describeAcls', async () => (await this.client.anyConnection()).admin(ApiKey.DescribeAcls, { filter }));
    return res.acls;
  }

  /** Creates ACLs (an existing one is left as is); throws the first refusal. Needs Alter on the cluster. */
  async createAcls(creations: readonly AclBinding[]): Promise<void> {
    const res = await this.forward('createAcls', ApiKey.CreateAcls, { creations: [...creations] });
    throwFirstItemError('createAcls', res.results, (_r) => ({}));
  }

  /** Deletes every ACL each filter matches; returns those removed. Needs Alter on the cluster. */
  async deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclBinding[]> {
    const res = await this.forward('deleteAcls', ApiKey.DeleteAcls, { filters: [...filters] });
    throwFirstItemError('deleteAcls', res.results, (_r) => ({}));
    return res.results.flatMap((r) => r.matchingAcls.map((m) => m.acl));
  }

  /**
   * Creates or replaces users' SCRAM credentials and deletes others. The
   * password is salted and iterated here (crypto.subtle): only the salted
   * form goes to the broker, as with Kafka's admin client.
   */
  async alterUserScramCredentials(req: {
    upsertions?: ReadonlyArray<{ user: string; mechanism: ScramMechanismName; password: string; iterations?: number }>;
    deletions?: ReadonlyArray<{ user: string; mechanism: ScramMechanismName }>;
  }): Promise<void> {
    const upsertions = await Promise.all((req.upsertions ?? []).map(async (u) => {
      const iterations = u.iterations ?? 8192;
      const salt = globalThis.crypto.getRandomValues(new Uint8Array(32));
      return { name: u.user, mechanism: SCRAM_IDS[u.mechanism] ?? -1, iterations, salt, saltedPassword: await scramSaltedPassword(u.mechanism, u.password, salt, iterations) };
    }));
    const deletions = (req.deletions ?? []).map((d) => ({ name: d.user, mechanism: SCRAM_IDS[d.mechanism] ?? -1 }));
    const res = await this.forward('alterUserScramCredentials', ApiKey.AlterUserScramCredentials, { deletions, upsertions });
    const failed = res.results.find((r) => r.errorCode !== 0);
    if (failed) throw errorFromCode(failed.errorCode, `user ${failed.user}: ${failed.errorMessage ?? ''}`, { results: res.results });
  }

  /** Which SCRAM mechanisms each user has (all users when `users` is absent); never salts or keys. */
  async describeUserScramCredentials(req: { users?: readonly string[] } = {}): Promise<UserScramCredentials[]> {
    const res = await this.forward('describeUserScramCredentials', ApiKey.DescribeUserScramCredentials, { users: req.users ? [...req.users] : null });
    const failed = res.results.find((r) => r.errorCode !== 0);
    if (failed) throw errorFromCode(failed.errorCode, `user ${failed.user}: ${failed.errorMessage ?? ''}`, { results: res.results });
    return res.results.map((r) => ({ user: r.user, credentials: r.credentialInfos.map((c) => ({ mechanism: SCRAM_NAMES[c.mechanism] ?? 'SCRAM-SHA-256', iterations: c.iterations })) }));
  }

  /**
   * Sets or removes client quotas (Kafka's AlterClientQuotas): per entity
   * (user and/or client-id parts; a null name is the default), keys to set
   * (producer_byte_rate, consumer_byte_rate, request_percentage) and keys to
   * remove. The first entry the controller refused is thrown.
   */
  async alterClientQuotas(req: {
    entries: ReadonlyArray<{ entity: readonly QuotaEntityPart[]; set?: Readonly<Record<string, number>>; remove?: readonly string[] }>;
    validateOnly?: boolean;
  }): Promise<void> {
    const entries = req.entries.map((e) => ({
      entity: [...e.entity],
      ops: [
        ...Object.entries(e.set ?? {}).map(([key, value]) => ({ key, value, remove: false })),
        ...(e.remove ?? []).map((key) => ({ key, value: 0, remove: true })),
      ],
    }));
    const res = await this.forward('alterClientQuotas', ApiKey.AlterClientQuotas, { entries, ...(req.validateOnly ? { validateOnly: true } : {}) });
    throwFirstItemError('alterClientQuotas', res.entries, (e) => ({ entity: e.entity }));
  }

  /** Client quotas of the entities matching every filter component (Kafka's DescribeClientQuotas; none: all). */
  async describeClientQuotas(req: {
    components?: ReadonlyArray<{ entityType: string; matchType: 0 | 1 | 2; match: string | null }>;
    strict?: boolean;
  } = {}): Promise<Array<{ entity: QuotaEntityPart[]; values: Record<string, number> }>> {
    const res = await this.forward('describeClientQuotas', ApiKey.DescribeClientQuotas, { components: [...(req.components ?? [])], strict: req.strict ?? false });
    throwFirstItemError('describeClientQuotas', [res], () => ({}));
    return (res.entries ?? []).map((e) => ({ entity: e.entity, values: Object.fromEntries(e.values.map((v) => [v.key, v.value])) }));
  }

  private forward<K extends AdminApiKey>(what: string, apiKey: K, body: AdminApis[K]['request']): Promise<AdminApis[K]['response']> {
    return this.client.retry(what, async () => (await this.client.anyConnection()).admin(apiKey, body));
  }

  private async waitForLeaders(topic: string, numPartitions: number): Promise<void> {
    const deadline = this.client.clock.monotonicMs() + this.leaderWaitTimeoutMs;
    for (;;) {
      try {
        const t = await this.client.topic(topic, { refresh: true });
        if (t.partitions.length >= numPartitions && t.partitions.every((p) => p !== undefined && p.leader >= 0)) return;
      } catch (err) {
        if (!(err instanceof SluiceError) || !err.retriable) throw err;
      }
      if (this.client.clock.monotonicMs() > deadline) {
        throw new SluiceError(Errors.REQUEST_TIMED_OUT, `topic ${topic} was created but not every partition had a leader within ${this.leaderWaitTimeoutMs} ms`, { topic });
      }
      await this.client.sleep(LEADER_POLL_INTERVAL_MS);
    }
  }
}

/** Throws the first per-item error (with every item's result in its details). */
function throwFirstItemError<T extends { errorCode: number; errorMessage: string | null }>(
  what: string, items: readonly T[], describe: (item: T) => Record<string, unknown>,
): void {
  const bad = items.find((i) => i.errorCode !== Errors.NONE.code);
  if (!bad) return;
  throw partitionError(bad.errorCode, bad.errorMessage, { ...describe(bad), operation: what, results: items })!;
}
