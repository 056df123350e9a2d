// `sluice topics create|list|describe|alter|delete` through the Admin client.
//
// Flag shapes (missing --topic, a non-number count, k=v syntax, an alter
// with nothing to change) are usage errors: exit 2 before any connection.
// Whether a name, count, replication factor or config is acceptable is the
// broker's call: its error code and message on one line, exit 1 — the CLI
// does not second-guess the controller's rules.
//
// `describe` reads partition state from Metadata and offsets from each
// partition's leader with ListOffsets: log start (timestamp -2), high
// watermark (-1 as a consumer), and log end offset (-1 asked with the
// leader's own id as replica id, which the broker answers with its log end
// offset; a read with no side effect — ListOffsets never moves follower
// state). A partition whose leader cannot be asked shows its error and no
// offsets, rather than failing the whole listing. Each leader is also asked
// DescribeLogDirs for the same partitions: for compacted topics the table
// adds the leader's dirty ratio and last clean (docs/compaction.md); a
// leader that cannot answer it just leaves those columns empty.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { Client, PartitionInfo } from '../../index.js';
import type { TopicDescription } from '../../client/admin.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../../protocol/apis/offsets.js';
import { Errors, errorForCode } from '../../util/errors.js';
import { errorLine, print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { idList, renderTable } from '../table.js';
import { listOf, parseKeyValues } from './configs.js';

/** One partition as `describe` shows it; offsets are null when the leader could not be asked. */
export interface PartitionView extends Omit<PartitionInfo, 'errorCode'> {
  readonly logStartOffset: number | null;
  readonly highWatermark: number | null;
  readonly logEndOffset: number | null;
  /** Why offsets (or the partition) are unavailable: `CODE: message`; null when fine. */
  readonly error: string | null;
  /** The leader's log cleaner on this partition; null when not compacted or not known. */
  readonly cleaner: CleanerView | null;
}

export interface CleanerView {
  readonly cleanupPolicy: string;
  readonly dirtyRatio: number;
  readonly firstDirtyOffset: number;
  readonly cleanableBytes: number;
  /** Epoch milliseconds of the leader's last clean of it since the leader started; null if none. */
  readonly lastCleanMs: number | null;
  readonly sizeBytes: number;
  readonly segments: number;
  readonly uncleanable: string | null;
}

export interface TopicView {
  readonly name: string;
  readonly topicId: string;
  readonly partitions: readonly PartitionView[];
}

interface TopicFlags extends ClientFlags { readonly topic: string }
interface CreateFlags extends TopicFlags { readonly partitions?: number; readonly replicationFactor?: number; readonly config?: string[] }
interface DescribeFlags extends ClientFlags { readonly topic?: string[] }
interface AlterFlags extends TopicFlags { readonly partitions?: number; readonly config?: string[]; readonly deleteConfig?: string[] }

function requireTopic<T>(y: Argv<T>): Argv<T & TopicFlags> {
  return withClientFlags(y).option('topic', { type: 'string', demandOption: true, describe: 'topic name' }) as unknown as Argv<T & TopicFlags>;
}

/** Rejects NaN (e.g. `--partitions ten`) as a usage error; range checks are the broker's. */
function checkNumbers(args: Record<string, unknown>, names: readonly string[]): true {
  for (const n of names) {
    const v = args[n];
    if (v !== undefined && !Number.isFinite(v)) throw new Error(`--${n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs a number`);
  }
  return true;
}

// ---- create ---------------------------------------------------------------------

const createCommand: CommandModule<object, CreateFlags> = {
  command: 'create',
  describe: 'Create a topic (defaults: the cluster\'s num.partitions and default.replication.factor)',
  builder: (y) => requireTopic(y)
    .usage('$0 topics create --topic T [--partitions N] [--replication-factor R] [--config k=v ...]')
    .option('partitions', { type: 'number', describe: 'number of partitions' })
    .option('replication-factor', { type: 'number', describe: 'replicas per partition' })
    .option('config', { type: 'string', array: true, describe: 'topic config key=value (repeatable)' })
    .check((args) => {
      checkNumbers(args, ['partitions', 'replicationFactor']);
      parseKeyValues(listOf(args.config), 'config');
      return true;
    })
    .example('$0 topics create --topic orders --partitions 6 --replication-factor 3', 'six partitions on three brokers each')
    .example('$0 topics create --topic audit --config retention.ms=86400000 --config min.insync.replicas=2', 'with topic configs') as unknown as Argv<CreateFlags>,
  handler: (args: ArgumentsCamelCase<CreateFlags>) => runClientCommand(args, async (client) => {
    const configs = parseKeyValues(listOf(args.config), 'config');
    const [created] = await client.admin().createTopics({
      topics: [{
        topic: args.topic,
        ...(args.partitions === undefined ? {} : { numPartitions: args.partitions }),
        ...(args.replicationFactor === undefined ? {} : { replicationFactor: args.replicationFactor }),
        ...(Object.keys(configs).length > 0 ? { configs } : {}),
      }],
    });
    print(args, created, () => `Created topic ${created!.name} (${created!.numPartitions} partitions, replication factor ${created!.replicationFactor}, id ${created!.topicId})`);
  }),
};

// ---- list -----------------------------------------------------------------------

const listCommand: CommandModule<object, ClientFlags> = {
  command: 'list',
  describe: 'List topic names',
  builder: (y) => withClientFlags(y)
    .usage('$0 topics list')
    .example('$0 topics list', 'one name a line')
    .example('$0 topics list --json', 'a JSON array of names'),
  handler: (args: ArgumentsCamelCase<ClientFlags>) => runClientCommand(args, async (client) => {
    const names = await client.admin().listTopics();
    print(args, names, () => names.join('\n'));
  }),
};

// ---- describe -------------------------------------------------------------------

type Offsets = Map<string, { logStartOffset: number; highWatermark: number; logEndOffset: number } | string>;
type Cleaners = Map<string, CleanerView>;

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** ListOffsets from one leader for its partitions: start, high watermark and log end offset, or an error line per partition. */
async function offsetsFrom(client: Client, leader: number, parts: ReadonlyArray<{ topic: string; partition: number }>, out: Offsets): Promise<void> {
  const byTopic = new Map<string, number[]>();
  for (const p of parts) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  const ask = (timestamp: number, replicaId?: number) => ({
    ...(replicaId === undefined ? {} : { replicaId }),
    topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((partition) => ({ partition, timestamp })) })),
  });
  try {
    const conn = await client.connection(leader);
    const [start, hw, end] = await Promise.all([conn.listOffsets(ask(EARLIEST_TIMESTAMP)), conn.listOffsets(ask(LATEST_TIMESTAMP)), conn.listOffsets(ask(LATEST_TIMESTAMP, leader))]);
    const find = (r: typeof start, topic: string, partition: number) => r.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partition === partition);
    for (const { topic, partition } of parts) {
      const rs = [find(start, topic, partition), find(hw, topic, partition), find(end, topic, partition)];
      const bad = rs.find((r) => r === undefined || r.errorCode !== Errors.NONE.code);
      if (bad !== undefined || rs.some((r) => r === undefined)) {
        out.set(key(topic, partition), bad ? `${errorForCode(bad.errorCode).name}: ${bad.errorMessage ?? errorForCode(bad.errorCode).message}` : 'no answer from the leader');
      } else {
        out.set(key(topic, partition), { logStartOffset: rs[0]!.offset, highWatermark: rs[1]!.offset, logEndOffset: rs[2]!.offset });
      }
    }
  } catch (err) {
    for (const { topic, partition } of parts) out.set(key(topic, partition), errorLine(err));
  }
}

/** The cleaner's view of the compacted ones among `parts` from their leader; nothing on any error (an older broker, a lost link). */
async function cleanersFrom(client: Client, leader: number, parts: ReadonlyArray<{ topic: string; partition: number }>, out: Cleaners): Promise<void> {
  const byTopic = new Map<string, number[]>();
  for (const p of parts) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  try {
    const conn = await client.connection(leader);
    const res = await conn.describeLogDirs({ topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) });
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== Errors.NONE.code || p.cleanupPolicy === 'delete') continue;
        out.set(key(t.name, p.partition), {
          cleanupPolicy: p.cleanupPolicy, dirtyRatio: p.dirtyRatio, firstDirtyOffset: p.firstDirtyOffset, cleanableBytes: p.cleanableBytes,
          lastCleanMs: p.lastCleanMs < 0 ? null : p.lastCleanMs, sizeBytes: p.sizeBytes, segments: p.segments, uncleanable: p.uncleanable,
        });
      }
    }
  } catch {
    // Offsets still show; the cleaner columns stay empty for this leader.
  }
}

/** Every partition of `topics` with its offsets, asking each leader once per offset kind. */
export async function describeWithOffsets(client: Client, topics: readonly TopicDescription[]): Promise<TopicView[]> {
  const byLeader = new Map<number, Array<{ topic: string; partition: number }>>();
  for (const t of topics) {
    for (const p of t.partitions) if (p.leader >= 0) byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), { topic: t.name, partition: p.partition }]);
  }
  const offsets: Offsets = new Map();
  const cleaners: Cleaners = new Map();
  await Promise.all([...byLeader].flatMap(([leader, parts]) => [offsetsFrom(client, leader, parts, offsets), cleanersFrom(client, leader, parts, cleaners)]));
  return topics.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p) => partitionView(t.name, p, offsets, cleaners)) }));
}

function partitionView(topic: string, p: PartitionInfo, offsets: Offsets, cleaners: Cleaners): PartitionView {
  const o = offsets.get(key(topic, p.partition));
  const base = {
    partition: p.partition, leader: p.leader, leaderEpoch: p.leaderEpoch, replicas: p.replicas, isr: p.isr, offlineReplicas: p.offlineReplicas,
    cleaner: cleaners.get(key(topic, p.partition)) ?? null,
  };
  if (o !== undefined && typeof o !== 'string') return { ...base, ...o, error: null };
  const error = o ?? (p.leader < 0 ? `${Errors.LEADER_NOT_AVAILABLE.name}: the partition has no leader` : null);
  return { ...base, logStartOffset: null, highWatermark: null, logEndOffset: null, error };
}

function renderTopics(views: readonly TopicView[]): string {
  return views.map((t) => {
    const compacted = t.partitions.some((p) => p.cleaner !== null);
    const rows = t.partitions.map((p) => [
      p.partition, p.leader < 0 ? 'none' : p.leader, p.leaderEpoch, idList(p.replicas), idList(p.isr), idList(p.offlineReplicas),
      p.logStartOffset, p.highWatermark, p.logEndOffset,
      ...(compacted ? cleanerCells(p.cleaner) : []),
      p.error,
    ]);
    const head = `Topic ${t.name}  id ${t.topicId}  partitions ${t.partitions.length}`;
    const cleanerHeads = compacted ? ['DIRTY-RATIO', 'LAST-CLEAN'] : [];
    return `${head}\n${renderTable(['PARTITION', 'LEADER', 'EPOCH', 'REPLICAS', 'ISR', 'OFFLINE', 'LOG-START', 'HIGH-WATERMARK', 'LOG-END', ...cleanerHeads, 'ERROR'], rows)}`;
  }).join('\n\n');
}

function cleanerCells(c: CleanerView | null): Array<string | null> {
  if (c === null) return [null, null];
  const last = c.uncleanable !== null ? `uncleanable: ${c.uncleanable}` : c.lastCleanMs === null ? 'never' : new Date(c.lastCleanMs).toISOString();
  return [c.dirtyRatio.toFixed(2), last];
}

const describeCommand: CommandModule<object, DescribeFlags> = {
  command: 'describe',
  describe: 'Per partition: leader, leader epoch, replicas, ISR, offline replicas, log start, high watermark, log end offset; dirty ratio and last clean for compacted topics',
  builder: (y) => withClientFlags(y)
    .usage('$0 topics describe [--topic T ...]')
    .option('topic', { type: 'string', array: true, describe: 'topics to describe (repeatable); default: every topic' })
    .example('$0 topics describe --topic orders', 'one topic')
    .example('$0 topics describe --json', 'every topic as JSON') as unknown as Argv<DescribeFlags>,
  handler: (args: ArgumentsCamelCase<DescribeFlags>) => runClientCommand(args, async (client) => {
    const admin = client.admin();
    const names = listOf(args.topic);
    const topics = await admin.describeTopics({ topics: names.length > 0 ? names : await admin.listTopics() });
    const views = await describeWithOffsets(client, topics);
    print(args, views, () => (views.length === 0 ? '(no topics)' : renderTopics(views)));
  }),
};

// ---- alter ----------------------------------------------------------------------

const alterCommand: CommandModule<object, AlterFlags> = {
  command: 'alter',
  describe: 'Add partitions to a topic and/or set and delete its configs',
  builder: (y) => requireTopic(y)
    .usage('$0 topics alter --topic T [--partitions N] [--config k=v ...] [--delete-config k ...]')
    .option('partitions', { type: 'number', describe: 'the new (larger) partition count; partitions are never removed' })
    .option('config', { type: 'string', array: true, describe: 'topic config key=value to set (repeatable)' })
    .option('delete-config', { type: 'string', array: true, describe: 'topic config key to delete (repeatable)' })
    .check((args) => {
      checkNumbers(args, ['partitions']);
      const sets = listOf(args.config);
      if (args.partitions === undefined && sets.length === 0 && listOf(args.deleteConfig).length === 0) {
        throw new Error('Nothing to change: give --partitions N, --config k=v or --delete-config k');
      }
      parseKeyValues(sets, 'config');
      return true;
    })
    .example('$0 topics alter --topic orders --partitions 12', 'grow to twelve partitions')
    .example('$0 topics alter --topic orders --config retention.ms=3600000 --delete-config cleanup.policy', 'change configs') as unknown as Argv<AlterFlags>,
  handler: (args: ArgumentsCamelCase<AlterFlags>) => runClientCommand(args, async (client) => {
    const admin = client.admin();
    const set = parseKeyValues(listOf(args.config), 'config');
    const del = listOf(args.deleteConfig);
    if (args.partitions !== undefined) await admin.createPartitions({ topicPartitions: [{ topic: args.topic, count: args.partitions }] });
    if (Object.keys(set).length > 0 || del.length > 0) {
      await admin.alterConfigs({ resources: [{ resourceType: 'topic', resourceName: args.topic, set, delete: del }] });
    }
    const done = { topic: args.topic, ...(args.partitions === undefined ? {} : { partitions: args.partitions }), set, delete: del };
    print(args, done, () => [
      `Altered topic ${args.topic}:`,
      ...(args.partitions === undefined ? [] : [`partitions=${args.partitions}`]),
      ...Object.entries(set).map(([k, v]) => `${k}=${v}`), ...del.map((k) => `-${k}`),
    ].join(' '));
  }),
};

// ---- delete ---------------------------------------------------------------------

const deleteCommand: CommandModule<object, TopicFlags> = {
  command: 'delete',
  describe: 'Delete a topic and its data',
  builder: (y) => requireTopic(y)
    .usage('$0 topics delete --topic T')
    .example('$0 topics delete --topic orders', 'gone for good'),
  handler: (args: ArgumentsCamelCase<TopicFlags>) => runClientCommand(args, async (client) => {
    await client.admin().deleteTopics({ topics: [args.topic] });
    print(args, { deleted: args.topic }, () => `Deleted topic ${args.topic}`);
  }),
};

export const topicsCommand: CommandModule = {
  command: 'topics',
  describe: 'Create, list, describe, alter and delete topics',
  builder: (y) => y
    .command(createCommand)
    .command(listCommand)
    .command(describeCommand)
    .command(alterCommand)
    .command(deleteCommand)
    .demandCommand(1, 'Name an action: create, list, describe, alter or delete'),
  handler: () => undefined,
};
