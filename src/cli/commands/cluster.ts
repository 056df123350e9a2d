// `sluice cluster status`: the controller quorum, the brokers, and counts of
// under-replicated and offline partitions, in one view.
//
// Sources, so the output is only what can be measured:
//   - brokers: DescribeCluster (registered brokers, fenced ones included,
//     with their endpoints), plus each live broker's own DescribeCluster for
//     the metadata offset it has applied. Each broker's two client endpoints
//     are shown apart: its WebSocket listener (endpoint BROKER) and its Kafka
//     listener (endpoint KAFKA, PLAINTEXT://host:port, shown as the host:port
//     Kafka clients take as bootstrap.servers; null without --kafka-listen);
//   - partitions: Metadata of every topic (ISR smaller than the replica set →
//     under-replicated; no leader → offline);
//   - quorum: the Raft `status` op of every node, reached at the CONTROLLER
//     endpoint each broker registers (its Raft listener) plus any --controller
//     urls (controller-only voters register no endpoint). The leader is the
//     node that answers role 'leader' in the highest term; the metadata high
//     watermark is its commit index; a node's lag is the leader's last log
//     index minus what the leader knows that node holds (Raft progress: its
//     match index), and "recent contact" says whether the leader heard from it
//     within the current check-quorum window (about an election timeout).
//     Without an answering leader, lag falls back to the nodes' own answers.
// A node that does not answer is listed as unreachable; the command still
// exits 0 — it reports state — unless no broker answers at all (exit 1).

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { Client } from '../../index.js';
import type { BrokerDescription } from '../../client/admin.js';
import { QuorumClient } from '../../raft-node/quorum-client.js';
import type { StatusResult } from '../../raft-node/client-service.js';
import { describeQuorumResponse } from '../../protocol/apis/quorum.js';
import { METADATA_ENDPOINT } from '../../raft-node/observers.js';
import { BROKER_ENDPOINT } from '../../replication/replica-fetcher.js';
import { KAFKA_ENDPOINT, parseKafkaEndpoint } from '../../server/kafka/cluster-view.js';
import { errorLine, print, runClientCommand, tlsOptionsFrom, withClientFlags, type ClientFlags } from '../client-command.js';
import { fixedDialer, type TlsDialer } from '../../net/tls.js';
import { listOf } from './configs.js';
import { addControllerCommand, removeControllerCommand } from './cluster-controllers.js';
import { cellText, renderTable } from '../table.js';

/** How long one node's status may take; a dead node must not hold the report up for the full request timeout. */
const STATUS_TIMEOUT_MS_MAX = 5_000;

interface StatusFlags extends ClientFlags { readonly controller?: string[] }

export interface QuorumNodeView {
  readonly nodeId: number;
  readonly kind: 'voter' | 'observer' | 'unknown';
  readonly url: string | null;
  readonly reachable: boolean;
  readonly role: string | null;
  readonly term: number | null;
  /** The leader this node follows, by its own answer. */
  readonly leader: number | null;
  readonly lastIndex: number | null;
  readonly commit: number | null;
  readonly applied: number | null;
  /** Leader's last log index minus what it knows this node holds (or this node's own last index); null when unknown. */
  readonly lag: number | null;
  /** Whether the leader heard from this node within its check-quorum window; null when no leader answered. */
  readonly recentContact: boolean | null;
  readonly error: string | null;
}

export interface ClusterStatus {
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly quorum: {
    readonly leaderId: number | null;
    readonly term: number | null;
    readonly highWatermark: number | null;
    readonly nodes: readonly QuorumNodeView[];
  };
  readonly brokers: ReadonlyArray<{
    readonly nodeId: number;
    readonly state: 'fenced' | 'running' | 'shutting-down';
    readonly rack: string | null;
    /** The WebSocket listener (Sluice's client protocol), or null. */
    readonly url: string | null;
    /** The Kafka listener as host:port, or null when the broker has none. */
    readonly kafka: string | null;
    readonly endpoints: ReadonlyArray<{ readonly name: string; readonly url: string }>;
    readonly metadataOffset: number | null;
  }>;
  readonly partitions: { readonly total: number; readonly underReplicated: number; readonly offline: number };
  readonly notes: readonly string[];
}

const NOTES = [
  'lag: the leader\'s last metadata log index minus the index the leader knows the node holds',
  'recent contact: the leader heard from the node within its check-quorum window (about an election timeout)',
];

/** A broker's Kafka listener as host:port (IPv6 hosts in brackets), from its KAFKA endpoint. */
export function kafkaAddressOf(endpoints: ReadonlyArray<{ readonly name: string; readonly url: string }>): string | null {
  const url = endpoints.find((e) => e.name === KAFKA_ENDPOINT)?.url;
  const ep = url ? parseKafkaEndpoint(url) : null;
  if (!ep) return null;
  return `${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}`;
}

function brokerState(b: BrokerDescription): 'fenced' | 'running' | 'shutting-down' {
  if (b.inControlledShutdown) return 'shutting-down';
  return b.fenced ? 'fenced' : 'running';
}

/** The applied metadata offset each reachable, unfenced broker reports for itself. */
async function metadataOffsets(client: Client, brokers: readonly BrokerDescription[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  await Promise.all(brokers.filter((b) => !b.fenced && b.url !== null).map(async (b) => {
    try {
      out.set(b.nodeId, (await (await client.connection(b.nodeId)).describeCluster()).metadataOffset);
    } catch { /* shown as unknown */ }
  }));
  return out;
}

async function partitionCounts(client: Client): Promise<ClusterStatus['partitions']> {
  const admin = client.admin();
  const topics = await admin.describeTopics({ topics: await admin.listTopics() });
  const parts = topics.flatMap((t) => t.partitions);
  return {
    total: parts.length,
    underReplicated: parts.filter((p) => p.isr.length < p.replicas.length).length,
    offline: parts.filter((p) => p.leader < 0).length,
  };
}

/** Every endpoint's status (or why not), keyed by url. */
async function statuses(urls: readonly string[], timeoutMs: number, tls?: TlsDialer): Promise<Map<string, StatusResult | string>> {
  const out = new Map<string, StatusResult | string>();
  if (urls.length === 0) return out;
  const qc = new QuorumClient({ endpoints: urls, limits: { connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs }, ...(tls ? { tls } : {}) });
  try {
    await Promise.all(urls.map(async (url) => {
      try {
        out.set(url, await qc.status(url));
      } catch (err) {
        out.set(url, errorLine(err));
      }
    }));
  } finally {
    qc.close();
  }
  return out;
}

/**
 * Lag and recent contact of a node: from the leader's Raft progress when it
 * answered — by the rule DescribeQuorum answers with (protocol/apis/quorum.ts)
 * — else from the node's own answer.
 */
function peerState(leader: StatusResult | undefined, nodeId: number, own: StatusResult | undefined): { lag: number | null; recentContact: boolean | null } {
  if (!leader) return { lag: null, recentContact: null };
  const progress = new Map((leader.progress ?? []).map((p) => [p.nodeId, p] as const));
  if (leader.nodeId === nodeId || progress.has(nodeId)) {
    const d = describeQuorumResponse({ ...leader, progress });
    const m = [...d.voters, ...d.observers].find((x) => x.nodeId === nodeId);
    if (m) return { lag: m.lag, recentContact: m.recentContact };
  }
  return { lag: own ? leader.lastIndex - own.lastIndex : null, recentContact: null };
}

/** The quorum view from whatever nodes answered. */
export function quorumView(byUrl: ReadonlyMap<string, StatusResult | string>, urlOf: ReadonlyMap<number, string>): ClusterStatus['quorum'] {
  const answers = [...byUrl].flatMap(([url, s]) => (typeof s === 'string' ? [] : [{ url, s }]));
  const leader = answers.filter((a) => a.s.role === 'leader').sort((a, b) => b.s.term - a.s.term)[0]?.s;
  const reference = leader ?? answers.sort((a, b) => b.s.term - a.s.term)[0]?.s;
  const voters = new Set(reference?.voters ?? []);
  const observers = new Set(reference?.observers ?? []);
  const ids = new Set<number>([...voters, ...observers, ...answers.map((a) => a.s.nodeId), ...urlOf.keys()]);
  const nodes = [...ids].sort((a, b) => a - b).map((nodeId): QuorumNodeView => {
    const a = answers.find((x) => x.s.nodeId === nodeId);
    const url = a?.url ?? urlOf.get(nodeId) ?? null;
    const failure = url === null ? 'no known endpoint (give --controller ws://host:port)' : byUrl.get(url);
    const kind = voters.has(nodeId) ? 'voter' : observers.has(nodeId) ? 'observer' : 'unknown';
    const s = a?.s;
    return {
      nodeId, kind, url, reachable: s !== undefined,
      role: s?.role ?? null, term: s?.term ?? null, leader: s ? (s.leader >= 0 ? s.leader : null) : null,
      lastIndex: s?.lastIndex ?? null, commit: s?.commit ?? null, applied: s?.applied ?? null,
      ...peerState(leader, nodeId, s),
      error: s ? null : typeof failure === 'string' ? failure : 'did not answer',
    };
  });
  return { leaderId: leader?.nodeId ?? null, term: leader?.term ?? reference?.term ?? null, highWatermark: leader?.commit ?? null, nodes };
}

export async function clusterStatus(client: Client, extraControllers: readonly string[], timeoutMs: number, tls?: TlsDialer): Promise<ClusterStatus> {
  const cluster = await client.admin().describeCluster();
  const urlOf = new Map<number, string>();
  for (const b of cluster.brokers) {
    const ep = b.endpoints.find((e) => e.name === METADATA_ENDPOINT);
    if (ep) urlOf.set(b.nodeId, ep.url);
  }
  const urls = [...new Set([...urlOf.values(), ...extraControllers])];
  const [byUrl, offsets, partitions] = await Promise.all([statuses(urls, timeoutMs, tls), metadataOffsets(client, cluster.brokers), partitionCounts(client)]);
  return {
    clusterId: cluster.clusterId,
    controllerId: cluster.controllerId,
    quorum: quorumView(byUrl, urlOf),
    brokers: cluster.brokers.map((b) => ({
      nodeId: b.nodeId, state: brokerState(b), rack: b.rack,
      url: b.endpoints.find((e) => e.name === BROKER_ENDPOINT)?.url ?? null, kafka: kafkaAddressOf(b.endpoints),
      endpoints: b.endpoints, metadataOffset: offsets.get(b.nodeId) ?? null,
    })),
    partitions,
    notes: NOTES,
  };
}

export function renderStatus(s: ClusterStatus): string {
  const q = s.quorum;
  const head = [
    `Cluster ${cellText(s.clusterId)}  active controller ${s.controllerId >= 0 ? s.controllerId : 'none'}`,
    `Quorum: leader ${cellText(q.leaderId)}  term ${cellText(q.term)}  metadata high watermark ${cellText(q.highWatermark)}`,
  ];
  const nodes = renderTable(['NODE', 'KIND', 'ROLE', 'TERM', 'LAST-INDEX', 'COMMIT', 'APPLIED', 'LAG', 'RECENT-CONTACT', 'URL', 'ERROR'],
    q.nodes.map((n) => [n.nodeId, n.kind, n.role, n.term, n.lastIndex, n.commit, n.applied, n.lag, n.recentContact === null ? '-' : n.recentContact ? 'yes' : 'no', n.url, n.error]));
  const brokers = renderTable(['BROKER', 'STATE', 'METADATA-OFFSET', 'WEBSOCKET', 'KAFKA'],
    s.brokers.map((b) => [b.nodeId, b.state, b.metadataOffset, b.url, b.kafka]));
  const p = s.partitions;
  return [...head, '', nodes, '', brokers, '',
    `Partitions: ${p.total} total, ${p.underReplicated} under-replicated, ${p.offline} offline`,
    '', ...s.notes.map((n) => `note: ${n}`)].join('\n');
}

const statusCommand: CommandModule<object, StatusFlags> = {
  command: 'status',
  describe: 'The quorum (leader, term, metadata high watermark, each node\'s lag), the brokers, and partition health',
  builder: (y) => withClientFlags(y)
    .usage('$0 cluster status [--controller ws://host:port ...]')
    .option('controller', { type: 'string', array: true, describe: 'extra controller (Raft) listeners to ask, for controller-only voters (repeatable)' })
    .example('$0 cluster status', 'a readable summary')
    .example('$0 cluster status --json | jq .quorum.leaderId', 'the Raft leader, for scripts') as unknown as Argv<StatusFlags>,
  handler: (args: ArgumentsCamelCase<StatusFlags>) => runClientCommand(args, async (client) => {
    const tls = tlsOptionsFrom(args);
    const status = await clusterStatus(client, listOf(args.controller), Math.min(args.requestTimeoutMs, STATUS_TIMEOUT_MS_MAX), tls ? fixedDialer(tls as { ca?: string; cert?: string; key?: string }) : undefined);
    print(args, status, () => renderStatus(status));
  }),
};

export const clusterCommand: CommandModule = {
  command: 'cluster',
  describe: 'Cluster-wide views: the quorum, brokers and partition health',
  builder: (y) => y
    .command(statusCommand)
    .command(addControllerCommand)
    .command(removeControllerCommand)
    .demandCommand(1, 'Name an action: status, add-controller, remove-controller'),
  handler: () => undefined,
};
