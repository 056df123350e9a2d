// Consumer-group administration: list, describe (members, their decoded
// assignments, committed offsets and lag), fetch and reset offsets, delete.
// Each group is handled by its coordinator (CoordinatorLink); ListGroups is
// asked of every broker, since each knows only the groups it coordinates.
//
// - Lag of a partition = its log end as consumers see it (ListOffsets
//   latest: the high watermark) − the group's committed offset; null when
//   the group has committed nothing for the partition.
// - resetOffsets only touches a group without members (Empty, or Dead: never
//   used): moving the offsets of a live group under its members' feet would
//   be overwritten by their next commit anyway, so it is refused with
//   NON_EMPTY_GROUP, as Kafka's tool does. Offsets are clamped to the
//   partition's [earliest, latest]; a time with no record at or after it
//   resets to latest.

import { Errors, isSluiceError, SluiceError } from '../util/errors.js';
import type { GroupState } from '../protocol/apis/groups.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../protocol/apis/offsets.js';
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment, decodeSubscription, type TopicPartitions } from '../groups/consumer-protocol.js';
import type { Client } from './client.js';
import {
  checked, commitGroupOffsets, CoordinatorLink, fetchGroupOffsets, NO_MEMBERSHIP, type CommittedOffset, type OffsetToCommit,
} from './consumer-coordinator.js';
import { listOffsets, partitionKey } from './consumer-list-offsets.js';
import { errorFromCode } from './responses.js';

export interface GroupListing {
  readonly groupId: string;
  readonly protocolType: string;
  readonly state: GroupState;
}

export interface GroupMemberDescription {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  /** Decoded for consumer groups while the group is Stable; null otherwise. */
  readonly subscription: readonly string[] | null;
  readonly assignment: readonly TopicPartitions[] | null;
}

export interface PartitionOffsets {
  readonly topic: string;
  readonly partition: number;
  /** -1: nothing committed. */
  readonly committedOffset: number;
  readonly metadata: string | null;
  /** The high watermark (what consumers can read up to). */
  readonly logEndOffset: number;
  readonly lag: number | null;
}

export interface GroupDescription {
  readonly groupId: string;
  readonly state: GroupState;
  readonly protocolType: string;
  readonly protocol: string;
  readonly coordinator: number;
  readonly members: readonly GroupMemberDescription[];
  readonly offsets: readonly PartitionOffsets[];
}

export type ResetTarget = 'earliest' | 'latest' | { readonly offset: number } | { readonly timestamp: number };

export interface ResetOffsetsOptions {
  readonly groupId: string;
  readonly topic: string;
  /** Default: every partition of the topic. */
  readonly partitions?: readonly number[];
  readonly to: ResetTarget;
}

export class GroupAdmin {
  constructor(private readonly client: Client) {}

  /** Every group of the cluster (each broker lists the groups it coordinates). */
  async listGroups(): Promise<GroupListing[]> {
    await this.client.retry('Metadata', () => this.client.refreshMetadata());
    const found = new Map<string, GroupListing>();
    await Promise.all([...this.client.clusterInfo.brokers.keys()].map(async (id) => {
      const res = await this.client.retry('ListGroups', async () => checked('ListGroups', await (await this.client.connection(id)).listGroups()));
      for (const g of res.groups) found.set(g.groupId, { groupId: g.groupId, protocolType: g.protocolType, state: g.groupState });
    }));
    return [...found.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  async describeGroups(groupIds: readonly string[]): Promise<GroupDescription[]> {
    return Promise.all(groupIds.map((id) => this.describeGroup(id)));
  }

  /** Committed offsets; with `topics`, every partition of them (-1 where nothing is committed). */
  async fetchOffsets(opts: { readonly groupId: string; readonly topics?: readonly string[] }): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: number; metadata: string | null }> }>> {
    const coord = new CoordinatorLink(this.client, opts.groupId);
    let query: Array<{ topic: string; partitions: number[] }> | null = null;
    if (opts.topics) {
      query = await Promise.all(opts.topics.map(async (topic) => {
        const t = await this.client.retry('Metadata', () => this.client.topic(topic));
        return { topic, partitions: t.partitions.map((p) => p.partition) };
      }));
    }
    const offsets = await fetchGroupOffsets(coord, query);
    const byTopic = new Map<string, Array<{ partition: number; offset: number; metadata: string | null }>>();
    for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), { partition: o.partition, offset: o.offset, metadata: o.metadata }]);
    return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a.partition - b.partition) }));
  }

  /** Moves an idle group's committed offsets; returns what was committed. */
  async resetOffsets(opts: ResetOffsetsOptions): Promise<OffsetToCommit[]> {
    const coord = new CoordinatorLink(this.client, opts.groupId);
    const g = await this.describeRaw(coord);
    if (g.groupState !== 'Empty' && g.groupState !== 'Dead') {
      throw new SluiceError(Errors.NON_EMPTY_GROUP, `group ${opts.groupId} is ${g.groupState} with ${g.members.length} members: stop them before resetting offsets`);
    }
    if (typeof opts.to === 'object') {
      const v = 'offset' in opts.to ? opts.to.offset : opts.to.timestamp;
      if (!(Number.isSafeInteger(v) && v >= 0)) throw new SluiceError(Errors.INVALID_CONFIG, `reset target must be an integer >= 0, got ${v}`);
    } else if (opts.to !== 'earliest' && opts.to !== 'latest') {
      throw new SluiceError(Errors.INVALID_CONFIG, `reset target must be 'earliest', 'latest', { offset } or { timestamp }`);
    }
    const t = await this.client.retry('Metadata', () => this.client.topic(opts.topic));
    const partitions = opts.partitions ?? t.partitions.map((p) => p.partition);
    for (const p of partitions) {
      if (!t.partitions[p]) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${opts.topic} has no partition ${p}`);
    }
    const offsets = await this.targetOffsets(opts.topic, partitions, opts.to);
    await commitGroupOffsets(coord, NO_MEMBERSHIP, offsets);
    return offsets;
  }

  /** Per group: null when deleted, else the reason (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, ...). */
  async deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; error: SluiceError | null }>> {
    return Promise.all(groupIds.map(async (groupId) => {
      const coord = new CoordinatorLink(this.client, groupId);
      const res = await coord.call('DeleteGroups', (conn) => conn.deleteGroups([groupId]));
      const r = res.results.find((x) => x.groupId === groupId);
      const error = !r ? new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `no DeleteGroups result for ${groupId}`)
        : r.errorCode === Errors.NONE.code ? null : errorFromCode(r.errorCode, r.errorMessage, { groupId });
      return { groupId, error };
    }));
  }

  // ---- helpers -----------------------------------------------------------------

  private async describeRaw(coord: CoordinatorLink) {
    const res = await coord.call('DescribeGroups', (conn) => conn.describeGroups([coord.groupId]));
    const g = res.groups.find((x) => x.groupId === coord.groupId);
    if (!g) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `no DescribeGroups answer for ${coord.groupId}`);
    if (g.errorCode !== Errors.NONE.code) throw errorFromCode(g.errorCode, g.errorMessage, { groupId: coord.groupId });
    return g;
  }

  private async describeGroup(groupId: string): Promise<GroupDescription> {
    const coord = new CoordinatorLink(this.client, groupId);
    const g = await this.describeRaw(coord);
    const isConsumer = g.protocolType === CONSUMER_PROTOCOL_TYPE;
    const members = g.members.map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
      subscription: isConsumer && m.metadata.length > 0 ? readOrNull(() => [...decodeSubscription(m.metadata).topics]) : null,
      assignment: isConsumer && m.assignment.length > 0 ? readOrNull(() => [...decodeAssignment(m.assignment).partitions]) : null,
    }));
    return {
      groupId, state: g.groupState, protocolType: g.protocolType, protocol: g.protocolName, coordinator: await coord.nodeId(),
      members, offsets: await this.withLag(await fetchGroupOffsets(coord, null)),
    };
  }

  private async withLag(committed: readonly CommittedOffset[]): Promise<PartitionOffsets[]> {
    const ends = await listOffsets(this.client, committed.map((c) => ({ topic: c.topic, partition: c.partition, timestamp: LATEST_TIMESTAMP })));
    return committed.map((c) => {
      const end = ends.get(partitionKey(c.topic, c.partition)) ?? -1;
      return {
        topic: c.topic, partition: c.partition, committedOffset: c.offset, metadata: c.metadata, logEndOffset: end,
        lag: c.offset < 0 || end < 0 ? null : Math.max(0, end - c.offset),
      };
    }).sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  }

  private async targetOffsets(topic: string, partitions: readonly number[], to: ResetTarget): Promise<OffsetToCommit[]> {
    const q = (timestamp: number) => partitions.map((partition) => ({ topic, partition, timestamp }));
    const [earliest, latest] = await Promise.all([listOffsets(this.client, q(EARLIEST_TIMESTAMP)), listOffsets(this.client, q(LATEST_TIMESTAMP))]);
    const byTime = typeof to === 'object' && 'timestamp' in to ? await listOffsets(this.client, q(to.timestamp)) : null;
    return partitions.map((partition) => {
      const key = partitionKey(topic, partition);
      const [lo, hi] = [earliest.get(key)!, latest.get(key)!];
      let offset: number;
      if (to === 'earliest') offset = lo;
      else if (to === 'latest') offset = hi;
      else if ('offset' in to) offset = Math.min(Math.max(to.offset, lo), hi);
      else offset = byTime!.get(key)! < 0 ? hi : byTime!.get(key)!;
      return { topic, partition, offset };
    });
  }
}

function readOrNull<T>(read: () => T): T | null {
  try {
    return read();
  } catch (err) {
    if (isSluiceError(err)) return null;
    throw err;
  }
}
