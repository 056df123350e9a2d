// The console's view models: plain functions from what the Admin API answers
// to the rows each view shows. No DOM, no network, no clock (times are
// passed in), so Node tests check them directly and the page only renders.
//
// - A topic partition's log start, high watermark and size come from its
//   leader's replica (DescribeLogDirs on the leader): a follower's high
//   watermark lags the leader's.
// - A partition is under-replicated when its ISR is smaller than its replica
//   set, offline when it has no leader.
// - Internal topics (__consumer_offsets) are listed only on request and left
//   out of the charts: commits are not the traffic an operator watches.
// - Throughput of a topic = the growth of the sum of its partitions' high
//   watermarks between two samples, per second (records a consumer can read;
//   a shrinking sum — retention, deleted records — never counts as negative).

// The inputs are declared here, as the fields read from the Admin API's
// answers (ClusterDescription, TopicDescription, BrokerLogDirs,
// GroupDescription of src/client/): the page is compiled apart from the
// client's sources, and this file with both, so the tests
// (test/console/model.test.ts) check these shapes against the real types.
// QuorumDescription is read whole, so it is the client's own type, through
// the type-only alias 'sluice-client-types' that each project maps (tsconfig
// paths): to the client's sources in the main build, to their built
// declarations (dist/src/client/) in the page's.

import type { QuorumDescription } from 'sluice-client-types';

export interface ClusterDescription {
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly brokers: ReadonlyArray<{ readonly nodeId: number; readonly url: string | null; readonly rack: string | null; readonly fenced: boolean; readonly inControlledShutdown: boolean }>;
}


export interface TopicDescription {
  readonly name: string;
  readonly partitions: ReadonlyArray<{ readonly partition: number; readonly leader: number; readonly replicas: readonly number[]; readonly isr: readonly number[] }>;
}

export interface BrokerLogDirs {
  readonly brokerId: number;
  readonly replicas: ReadonlyArray<{ readonly topic: string; readonly partition: number; readonly logStartOffset: number; readonly highWatermark: number; readonly sizeBytes: number }>;
}

export interface PartitionLag {
  readonly topic: string;
  readonly partition: number;
  readonly committedOffset: number;
  readonly logEndOffset: number;
  readonly lag: number | null;
}

export interface GroupDescription {
  readonly groupId: string;
  readonly state: string;
  readonly protocol: string;
  readonly coordinator: number;
  readonly members: ReadonlyArray<{
    readonly memberId: string; readonly clientId: string; readonly clientHost: string;
    readonly assignment: ReadonlyArray<{ readonly topic: string; readonly partitions: readonly number[] }> | null;
  }>;
  readonly offsets: readonly PartitionLag[];
}

export interface QuorumRow {
  readonly nodeId: number;
  readonly kind: 'voter' | 'observer';
  readonly leader: boolean;
  readonly logEndOffset: number;
  readonly lag: number;
  readonly recentContact: boolean;
}

export interface BrokerRow {
  readonly nodeId: number;
  readonly state: 'running' | 'fenced' | 'shutting-down';
  readonly url: string | null;
  readonly rack: string | null;
  readonly controller: boolean;
}

export interface ClusterView {
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly quorumLeader: number;
  readonly term: number;
  readonly metadataHighWatermark: number;
  readonly quorum: readonly QuorumRow[];
  readonly brokers: readonly BrokerRow[];
}

export function clusterView(cluster: ClusterDescription, quorum: QuorumDescription): ClusterView {
  const member = (kind: 'voter' | 'observer') => (m: QuorumDescription['voters'][number]): QuorumRow => ({
    nodeId: m.nodeId, kind, leader: m.nodeId === quorum.leaderId, logEndOffset: m.logEndOffset, lag: m.lag, recentContact: m.recentContact,
  });
  return {
    clusterId: cluster.clusterId,
    controllerId: cluster.controllerId,
    quorumLeader: quorum.leaderId,
    term: quorum.leaderEpoch,
    metadataHighWatermark: quorum.highWatermark,
    quorum: [...quorum.voters.map(member('voter')), ...quorum.observers.map(member('observer'))],
    brokers: cluster.brokers.map((b) => ({
      nodeId: b.nodeId, url: b.url, rack: b.rack, controller: b.nodeId === cluster.controllerId,
      state: b.inControlledShutdown ? 'shutting-down' : b.fenced ? 'fenced' : 'running',
    })),
  };
}

export interface PartitionRow {
  readonly topic: string;
  readonly partition: number;
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly underReplicated: boolean;
  readonly offline: boolean;
  /** From the leader's replica; null when the leader did not answer. */
  readonly logStartOffset: number | null;
  readonly highWatermark: number | null;
  readonly sizeBytes: number | null;
}

export interface TopicRow {
  readonly name: string;
  readonly partitions: readonly PartitionRow[];
  readonly underReplicated: number;
  readonly offline: number;
  /** Sum over partitions of what the leaders answered (null when none did). */
  readonly records: number | null;
  readonly sizeBytes: number | null;
}

function leaderReplica(dirs: readonly BrokerLogDirs[], topic: string, partition: number, leader: number) {
  return dirs.find((d) => d.brokerId === leader)?.replicas.find((r) => r.topic === topic && r.partition === partition);
}

function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

export function topicRows(topics: readonly TopicDescription[], dirs: readonly BrokerLogDirs[]): TopicRow[] {
  return [...topics].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((t) => {
    const partitions = t.partitions.map((p): PartitionRow => {
      const r = leaderReplica(dirs, t.name, p.partition, p.leader);
      return {
        topic: t.name, partition: p.partition, leader: p.leader, replicas: p.replicas, isr: p.isr,
        underReplicated: p.isr.length < p.replicas.length, offline: p.leader < 0,
        logStartOffset: r?.logStartOffset ?? null, highWatermark: r?.highWatermark ?? null, sizeBytes: r?.sizeBytes ?? null,
      };
    });
    return {
      name: t.name, partitions,
      underReplicated: partitions.filter((p) => p.underReplicated).length,
      offline: partitions.filter((p) => p.offline).length,
      records: sumOrNull(partitions.map((p) => (p.highWatermark === null || p.logStartOffset === null ? null : p.highWatermark - p.logStartOffset))),
      sizeBytes: sumOrNull(partitions.map((p) => p.sizeBytes)),
    };
  });
}

/** Topics the cluster keeps for itself (__consumer_offsets): named with two underscores, as in Kafka. */
export function isInternalTopic(name: string): boolean {
  return name.startsWith('__');
}

export interface GroupMemberRow {
  readonly memberId: string;
  readonly clientId: string;
  readonly clientHost: string;
  /** topic:partition, sorted. */
  readonly assignment: readonly string[];
}

export interface GroupRow {
  readonly groupId: string;
  readonly state: string;
  readonly coordinator: number;
  readonly protocol: string;
  readonly members: readonly GroupMemberRow[];
  readonly offsets: readonly PartitionLag[];
  /** Sum of the known per-partition lags; null when nothing is committed. */
  readonly totalLag: number | null;
}

export function groupRow(g: GroupDescription): GroupRow {
  return {
    groupId: g.groupId, state: g.state, coordinator: g.coordinator, protocol: g.protocol,
    members: g.members.map((m) => ({
      memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost,
      assignment: (m.assignment ?? []).flatMap((tp) => tp.partitions.map((p) => `${tp.topic}:${p}`)).sort(),
    })),
    offsets: g.offsets,
    totalLag: sumOrNull(g.offsets.map((o) => o.lag)),
  };
}

/** One reading of every topic's readable records (sum of high watermarks) and every group's total lag. */
export interface Sample {
  readonly atMs: number;
  readonly highWatermarks: ReadonlyMap<string, number>;
  readonly lags: ReadonlyMap<string, number>;
}

export function sampleOf(atMs: number, topics: readonly TopicRow[], groups: readonly GroupRow[]): Sample {
  const highWatermarks = new Map<string, number>();
  for (const t of topics) {
    if (isInternalTopic(t.name)) continue;
    const sum = sumOrNull(t.partitions.map((p) => p.highWatermark));
    if (sum !== null) highWatermarks.set(t.name, sum);
  }
  const lags = new Map<string, number>();
  for (const g of groups) if (g.totalLag !== null) lags.set(g.groupId, g.totalLag);
  return { atMs, highWatermarks, lags };
}

export interface Series {
  readonly name: string;
  /** [seconds relative to the last sample (≤ 0), value] */
  readonly points: ReadonlyArray<readonly [number, number]>;
}

/** Records/s per topic between consecutive samples (a topic needs two samples). */
export function throughputSeries(samples: readonly Sample[]): Series[] {
  const last = samples[samples.length - 1];
  if (!last) return [];
  const names = new Set(samples.flatMap((s) => [...s.highWatermarks.keys()]));
  return [...names].sort().map((name) => {
    const points: Array<[number, number]> = [];
    for (let i = 1; i < samples.length; i++) {
      const [a, b] = [samples[i - 1]!, samples[i]!];
      const [ha, hb] = [a.highWatermarks.get(name), b.highWatermarks.get(name)];
      const dt = (b.atMs - a.atMs) / 1000;
      if (ha === undefined || hb === undefined || dt <= 0) continue;
      points.push([(b.atMs - last.atMs) / 1000, Math.max(0, hb - ha) / dt]);
    }
    return { name, points };
  }).filter((s) => s.points.length > 0);
}

/** Total lag per group, as sampled. */
export function lagSeries(samples: readonly Sample[]): Series[] {
  const last = samples[samples.length - 1];
  if (!last) return [];
  const names = new Set(samples.flatMap((s) => [...s.lags.keys()]));
  return [...names].sort().map((name) => ({
    name,
    points: samples.flatMap((s) => {
      const v = s.lags.get(name);
      return v === undefined ? [] : [[(s.atMs - last.atMs) / 1000, v] as const];
    }),
  }));
}

/** Where a live tail starts on each partition: the last `backlog` readable records (never below log start). */
export function tailStart(p: Pick<PartitionRow, 'logStartOffset' | 'highWatermark'>, backlog: number): number {
  const hw = p.highWatermark ?? 0;
  return Math.max(p.logStartOffset ?? 0, hw - backlog);
}

/** A broker URL the browser can dial: a wildcard listener host becomes the page's own host. */
export function dialable(url: string, pageHost: string): string {
  return url.replace(/^(wss?:\/\/)(0\.0\.0\.0|\[::\])(:\d+)/, (_m, scheme: string, _host: string, port: string) => `${scheme}${pageHost}${port}`);
}

export function formatBytes(n: number | null): string {
  if (n === null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}
