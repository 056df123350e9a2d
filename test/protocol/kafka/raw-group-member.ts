// A consumer-group member for tests, speaking the Kafka protocol through the
// raw client: JoinGroup (v9, MEMBER_ID_REQUIRED handled), SyncGroup (the
// leader assigns with a plain range assignor over the members' ConsumerProtocol
// subscriptions), and, when run(), a heartbeat loop that rejoins on
// REBALANCE_IN_PROGRESS — enough to share a group with other clients.

import { RawKafkaClient } from './raw-client.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import { joinGroup } from '../../../src/protocol/kafka/apis/join-group/schema.js';
import { syncGroup } from '../../../src/protocol/kafka/apis/sync-group/schema.js';
import { heartbeat } from '../../../src/protocol/kafka/apis/heartbeat/schema.js';
import { leaveGroup } from '../../../src/protocol/kafka/apis/leave-group/schema.js';
import { findCoordinator } from '../../../src/protocol/kafka/apis/find-coordinator/schema.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription, type TopicPartitions } from '../../../src/groups/consumer-protocol.js';
import { waitFor } from '../../integration/harness.js';

const MEMBER_ID_REQUIRED = 79;
const REBALANCE_IN_PROGRESS = 27;
const HEARTBEAT_INTERVAL_MS = 200;

/** Connects to the coordinator of `groupId`, asking `bootstrap` until it knows one. */
export async function connectToCoordinator(bootstrap: RawKafkaClient, groupId: string): Promise<RawKafkaClient> {
  const found = await waitFor(`a coordinator for ${groupId}`, async () => {
    const res = await bootstrap.request(findCoordinator, 3, { key: groupId, keyType: 0 });
    return res.errorCode === 0 ? res : undefined;
  }, { timeoutMs: 30_000, intervalMs: 100 });
  return RawKafkaClient.connect(found.host as string, found.port as number, `raw-${groupId}`);
}

export interface RawMemberOptions {
  readonly groupInstanceId?: string | null;
  readonly protocols?: readonly string[];
  readonly sessionTimeoutMs?: number;
  readonly rebalanceTimeoutMs?: number;
  /** Partitions per topic, for the range assignment this member computes when it leads. */
  readonly partitions: Readonly<Record<string, number>>;
}

/** Kafka's range assignor: per topic, consecutive partitions, the first members getting one more. */
export function rangeAssign(members: ReadonlyArray<{ memberId: string; topics: readonly string[] }>, partitions: Readonly<Record<string, number>>): Map<string, TopicPartitions[]> {
  const out = new Map<string, TopicPartitions[]>(members.map((m) => [m.memberId, []]));
  for (const [topic, n] of Object.entries(partitions)) {
    const subs = members.filter((m) => m.topics.includes(topic)).map((m) => m.memberId).sort();
    subs.forEach((id, i) => {
      const per = Math.floor(n / subs.length);
      const extra = n % subs.length;
      const start = i * per + Math.min(i, extra);
      const count = per + (i < extra ? 1 : 0);
      if (count > 0) out.get(id)!.push({ topic, partitions: Array.from({ length: count }, (_, k) => start + k) });
    });
  }
  return out;
}

export class RawGroupMember {
  memberId = '';
  generationId = -1;
  leader = '';
  assignment: TopicPartitions[] = [];
  joins = 0;
  /** What stopped the heartbeat loop, if it failed. */
  failure: Error | null = null;
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(readonly conn: RawKafkaClient, readonly groupId: string, readonly topics: readonly string[], private readonly opts: RawMemberOptions) {}

  /** JoinGroup until it is answered with something other than MEMBER_ID_REQUIRED. */
  async join(): Promise<Struct> {
    const metadata = Buffer.from(encodeSubscription({ topics: this.topics, ownedPartitions: [], generationId: -1, userData: null }));
    for (;;) {
      const res = await this.conn.request(joinGroup, 9, {
        groupId: this.groupId, sessionTimeoutMs: this.opts.sessionTimeoutMs ?? 6_000, rebalanceTimeoutMs: this.opts.rebalanceTimeoutMs ?? 10_000,
        memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId ?? null, protocolType: 'consumer',
        protocols: (this.opts.protocols ?? ['range']).map((name) => ({ name, metadata })),
      });
      this.memberId = res.memberId as string;
      if (res.errorCode !== MEMBER_ID_REQUIRED) return res;
    }
  }

  /** SyncGroup: the leader hands in a range assignment of every member. */
  async sync(join: Struct): Promise<Struct> {
    const members = (join.members as Struct[]).map((m) => ({ memberId: m.memberId as string, topics: decodeSubscription(m.metadata as Buffer).topics }));
    const assignments = join.leader === this.memberId
      ? [...rangeAssign(members, this.opts.partitions)].map(([memberId, partitions]) => ({ memberId, assignment: Buffer.from(encodeAssignment({ partitions, userData: null })) }))
      : [];
    const res = await this.conn.request(syncGroup, 5, {
      groupId: this.groupId, generationId: join.generationId, memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId ?? null,
      protocolType: 'consumer', protocolName: join.protocolName, assignments,
    });
    if (res.errorCode === 0) this.assignment = [...decodeAssignment(res.assignment as Buffer).partitions];
    return res;
  }

  /** One whole rebalance: join, then sync; throws on an error code. */
  async joinAndSync(): Promise<void> {
    const join = await this.join();
    if (join.errorCode !== 0) throw new Error(`JoinGroup of ${this.memberId}: error ${String(join.errorCode)}`);
    this.generationId = join.generationId as number;
    this.leader = join.leader as string;
    this.joins++;
    const sync = await this.sync(join);
    if (sync.errorCode === REBALANCE_IN_PROGRESS) return this.joinAndSync();
    if (sync.errorCode !== 0) throw new Error(`SyncGroup of ${this.memberId}: error ${String(sync.errorCode)}`);
  }

  heartbeat(): Promise<Struct> {
    return this.conn.request(heartbeat, 4, { groupId: this.groupId, generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId ?? null });
  }

  /** Joins, then heartbeats in the background, rejoining whenever the group rebalances. */
  async run(): Promise<void> {
    await this.joinAndSync();
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await new Promise((r) => setTimeout(r, HEARTBEAT_INTERVAL_MS));
        if (!this.running) break;
        const hb = await this.heartbeat();
        if (hb.errorCode === REBALANCE_IN_PROGRESS) await this.joinAndSync();
        else if (hb.errorCode !== 0) throw new Error(`Heartbeat of ${this.memberId}: error ${String(hb.errorCode)}`);
      }
    })().catch((err: Error) => {
      this.failure = err;
    });
  }

  async leave(): Promise<Struct> {
    this.running = false;
    await this.loop;
    return this.conn.request(leaveGroup, 5, { groupId: this.groupId, members: [{ memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId ?? null, reason: 'test done' }] });
  }
}
