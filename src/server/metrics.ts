// Prometheus metrics of one node (prom-client), in a Registry of its own —
// never prom-client's global one, so several nodes in one process (tests)
// keep separate numbers.
//
// Two kinds of metric:
//   - event counters and histograms, moved by hooks: the broker listener's
//     request handler is wrapped (wrapHandler: request count and latency per
//     API, produce bytes/records in and fetch bytes/records out per topic),
//     accepted AlterPartition calls count ISR shrinks and expands, and Raft
//     proposals are timed from propose() to applied (timeProposals);
//   - gauges computed on scrape from the live objects (MetricsSources): the
//     metadata image (under-replicated and offline partitions), the Raft
//     status (term, metadata lag), the controller (active 0/1), the replica
//     manager (leader count, purgatory sizes), the group coordinator
//     (consumer lag), the transaction coordinator (ids by state, markers
//     pending, timeout aborts) and the log cleaner (its totals, last clean, and the
//     largest dirty ratio of the compacted logs). Scrape-time gauges cost
//     nothing between scrapes.
//
// Label values are bounded: api names come from the API table (unknown keys
// are 'unknown'), topics are counted only for partitions the broker served
// without error (so they exist), groups are the ones this broker coordinates;
// client quota throttles are counted per quota, user and client id for the
// first THROTTLE_SERIES_MAX pairs, the rest under user="(other)".

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ApiKey } from '../protocol/api-keys.js';
import type { RequestEnvelope } from '../protocol/envelope.js';
import type { ProduceResponse } from '../protocol/apis/produce.js';
import type { FetchResponse } from '../protocol/apis/fetch.js';
import type { MetadataImage } from '../metadata/image.js';
import { NO_RESPONSE, type ConnectionInfo, type RequestHandler } from '../net/server-connection.js';
import { RECORD_BATCH_HEADER_BYTES, RECORD_COUNT_OFFSET, batchSizeAt } from '../record/batch-header.js';
import type { MetadataStateMachine } from '../metadata/state-machine.js';
import type { RaftNode } from '../raft-node/node.js';
import type { QuorumController } from '../controller/service/quorum-controller.js';
import type { Broker } from './broker.js';
import type { CleanerStats } from '../storage/log-cleaner.js';
import type { TxnCoordinatorStats } from '../transactions/coordinator.js';

const PREFIX = 'sluice_';
/** Distinct (quota, user, client id) series of the throttle counters; client ids are the client's choice. */
const THROTTLE_SERIES_MAX = 1000;

/** Request latency buckets, seconds: sub-millisecond reads up to long-polling fetches. */
const REQUEST_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Raft commit latency buckets, seconds. */
const COMMIT_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the Raft node shows on scrape. */
export interface RaftView {
  readonly role: string;
  readonly term: number;
  readonly leader: number;
  readonly commit: number;
  readonly applied: number;
  /** Leader only: each peer's matched index. */
  readonly peerMatch?: ReadonlyMap<number, number>;
}

/** What the broker role shows on scrape. */
export interface BrokerView {
  readonly state: () => string;
  readonly leaderCount: () => number;
  readonly purgatorySizes: () => { readonly produce: number; readonly fetch: number };
  /** Consumer lag per group this broker coordinates (messages). */
  readonly groupLags: () => Iterable<{ readonly groupId: string; readonly lag: number }>;
  /** The transaction coordinator's figures (src/transactions/coordinator.ts). */
  readonly transactions?: () => TxnCoordinatorStats;
  /** The log cleaner's totals and the largest dirty ratio; absent when log.cleaner.enable is false. */
  readonly cleaner?: () => { readonly stats: CleanerStats; readonly maxDirtyRatio: number };
}

export interface MetricsSources {
  readonly raft: () => RaftView;
  readonly image: () => MetadataImage | undefined;
  /** Present on nodes with the controller role. */
  readonly activeController?: () => boolean;
  /** Present on nodes with the broker role. */
  readonly broker?: BrokerView;
}

/** Number of records in the whole batches of `bytes` (a size-limited fetch may end in a partial one). */
export function recordCount(bytes: Uint8Array): number {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let n = 0;
  for (let pos = 0; pos + RECORD_BATCH_HEADER_BYTES <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (size < RECORD_BATCH_HEADER_BYTES || pos + size > buf.length) break;
    n += buf.readInt32BE(pos + RECORD_COUNT_OFFSET);
    pos += size;
  }
  return n;
}

/** Under-replicated (ISR smaller than the replicas) and offline (no leader) partitions of the image. */
export function partitionHealth(image: MetadataImage | undefined): { underReplicated: number; offline: number } {
  let underReplicated = 0;
  let offline = 0;
  for (const t of image?.topicsByName.values() ?? []) {
    for (const r of t.partitions.values()) {
      if (r.leader < 0) offline++;
      if (r.isr.length < r.replicas.length) underReplicated++;
    }
  }
  return { underReplicated, offline };
}

/** Per group: the sum over its committed partitions of high watermark - committed offset (partitions without a known HW are skipped). */
export function consumerGroupLags(
  groups: Iterable<{ readonly groupId: string; readonly offsets: ReadonlyMap<string, ReadonlyMap<number, { readonly offset: number }>> }>,
  highWatermark: (topic: string, partition: number) => number | undefined,
): Array<{ groupId: string; lag: number }> {
  const out: Array<{ groupId: string; lag: number }> = [];
  for (const { groupId, offsets } of groups) {
    let lag = 0;
    for (const [topic, partitions] of offsets) {
      for (const [partition, committed] of partitions) {
        const hw = highWatermark(topic, partition);
        if (hw !== undefined && hw >= 0) lag += Math.max(0, hw - committed.offset);
      }
    }
    out.push({ groupId, lag });
  }
  return out;
}

/** The scrape sources of a running node (server.ts): its Raft node, controller and broker. */
export function nodeSources(parts: {
  readonly node: RaftNode;
  readonly metadata: MetadataStateMachine | undefined;
  readonly controller: QuorumController | undefined;
  readonly broker: Broker | undefined;
}): MetricsSources {
  const { node, metadata, controller, broker } = parts;
  const raft = (): RaftView => {
    const s = node.raftStatus();
    const peerMatch = s.progress ? new Map([...s.progress].map(([id, p]) => [id, p.match] as const)) : undefined;
    return { role: s.role, term: s.term, leader: s.leader, commit: s.commit, applied: node.status().applied, peerMatch };
  };
  return {
    raft,
    image: () => metadata?.image,
    activeController: controller ? () => controller.isActive : undefined,
    broker: broker && {
      state: () => broker.lifecycle.state,
      leaderCount: () => broker.replicas.leaderCount,
      purgatorySizes: () => broker.replicas.purgatorySizes,
      groupLags: () => consumerGroupLags(broker.groups.committedOffsets(), (t, p) => broker.replicas.partition(t, p)?.log.highWatermark),
      transactions: () => broker.transactions.stats(),
      ...(broker.logs.cleaner ? { cleaner: () => ({ stats: broker.logs.cleaner!.stats, maxDirtyRatio: broker.logs.cleaner!.maxDirtyRatio() }) } : {}),
    },
  };
}

function apiLabel(key: number): string {
  const name = (ApiKey as unknown as Record<number, string | undefined>)[key];
  return typeof name === 'string' ? name : 'unknown';
}

export class NodeMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'api'>;
  private readonly requestErrors: Counter<'api'>;
  private readonly requestSeconds: Histogram<'api'>;
  private readonly bytesIn: Counter<'topic'>;
  private readonly recordsIn: Counter<'topic'>;
  private readonly bytesOut: Counter<'topic' | 'fetcher'>;
  private readonly recordsOut: Counter<'topic' | 'fetcher'>;
  private readonly isrShrinks: Counter;
  private readonly isrExpands: Counter;
  private readonly commitSeconds: Histogram;
  private readonly throttleMs: Counter<'quota' | 'user' | 'client_id'>;
  private readonly throttledRequests: Counter<'quota' | 'user' | 'client_id'>;
  private readonly throttleSeries = new Set<string>();
  private sources: MetricsSources | undefined;

  constructor(opts: { readonly defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.requests = new Counter({ name: `${PREFIX}requests_total`, help: 'Requests served by the broker listener, by API', labelNames: ['api'], registers });
    this.requestErrors = new Counter({ name: `${PREFIX}request_errors_total`, help: 'Requests answered with a whole-request error, by API', labelNames: ['api'], registers });
    this.requestSeconds = new Histogram({
      name: `${PREFIX}request_duration_seconds`, help: 'Time from dispatch to response, by API (fetch includes its long poll)',
      labelNames: ['api'], buckets: REQUEST_SECONDS_BUCKETS, registers,
    });
    this.bytesIn = new Counter({ name: `${PREFIX}topic_bytes_in_total`, help: 'Record batch bytes appended by produce requests, by topic', labelNames: ['topic'], registers });
    this.recordsIn = new Counter({ name: `${PREFIX}topic_records_in_total`, help: 'Records appended by produce requests, by topic', labelNames: ['topic'], registers });
    this.bytesOut = new Counter({
      name: `${PREFIX}topic_bytes_out_total`, help: 'Record batch bytes returned by fetch requests, by topic and fetcher (consumer or replica)',
      labelNames: ['topic', 'fetcher'], registers,
    });
    this.recordsOut = new Counter({
      name: `${PREFIX}topic_records_out_total`, help: 'Records returned by fetch requests, by topic and fetcher (consumer or replica)',
      labelNames: ['topic', 'fetcher'], registers,
    });
    this.isrShrinks = new Counter({ name: `${PREFIX}isr_shrinks_total`, help: 'ISR shrinks this broker asked for as leader and the controller accepted', registers });
    this.isrExpands = new Counter({ name: `${PREFIX}isr_expands_total`, help: 'ISR expands this broker asked for as leader and the controller accepted', registers });
    this.commitSeconds = new Histogram({
      name: `${PREFIX}raft_commit_latency_seconds`, help: 'Metadata log proposals from propose() to applied on this node (active controller)',
      buckets: COMMIT_SECONDS_BUCKETS, registers,
    });
    this.throttleMs = new Counter({
      name: `${PREFIX}client_quota_throttle_time_ms_total`, help: 'Throttle time handed out by client quotas (throttle_time_ms), by quota (produce, fetch, request), user and client id',
      labelNames: ['quota', 'user', 'client_id'], registers,
    });
    this.throttledRequests = new Counter({
      name: `${PREFIX}client_quota_throttled_requests_total`, help: 'Requests a client quota throttled, by quota, user and client id',
      labelNames: ['quota', 'user', 'client_id'], registers,
    });
    this.defineScrapeGauges(registers);
  }

  /** A client quota throttled a request for `ms` (the metric entity: '' for a part the quota does not name). */
  readonly onThrottle = (quota: string, user: string, clientId: string, ms: number): void => {
    const key = JSON.stringify([quota, user, clientId]);
    if (!this.throttleSeries.has(key) && this.throttleSeries.size >= THROTTLE_SERIES_MAX) {
      user = '(other)';
      clientId = '(other)';
    } else {
      this.throttleSeries.add(key);
    }
    const labels = { quota, user, client_id: clientId };
    this.throttleMs.inc(labels, ms);
    this.throttledRequests.inc(labels);
  };

  /** Sets what the scrape-time gauges read; until then they report nothing. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  // ---- hooks -------------------------------------------------------------------

  /** The broker's request handler, counted and timed per API, with per-topic traffic of produce and fetch. */
  wrapHandler(handler: RequestHandler): RequestHandler {
    return (req: RequestEnvelope, conn: ConnectionInfo) => {
      const api = apiLabel(req.apiKey);
      const endTimer = this.requestSeconds.startTimer({ api });
      const done = (body: unknown, failed: boolean): void => {
        endTimer();
        this.requests.inc({ api });
        if (failed) this.requestErrors.inc({ api });
        else this.countTraffic(req, body);
      };
      let result: unknown;
      try {
        result = handler(req, conn);
      } catch (err) {
        done(undefined, true);
        throw err;
      }
      if (!(result instanceof Promise)) {
        done(result, false);
        return result;
      }
      return result.then(
        (body: unknown) => {
          done(body, false);
          return body;
        },
        (err: unknown) => {
          done(undefined, true);
          throw err;
        },
      );
    };
  }

  /** An AlterPartition call the controller accepted: the ISR went from `oldSize` to `newSize` members. */
  onIsrChange(oldSize: number, newSize: number): void {
    if (newSize < oldSize) this.isrShrinks.inc();
    else if (newSize > oldSize) this.isrExpands.inc();
  }

  /** Records the time from proposal to applied of the proposals `quorum` makes. */
  timeProposals<Q extends { propose(data: Uint8Array): Promise<unknown> }>(quorum: Q): Q {
    const propose = (data: Uint8Array): Promise<unknown> => {
      const endTimer = this.commitSeconds.startTimer();
      const p = quorum.propose(data);
      // Failed proposals (not leader, timed out) were never committed: no sample.
      p.then(() => endTimer(), () => undefined);
      return p;
    };
    // The other methods stay the node's own (bound), so the wrapper is the node in every other respect.
    return new Proxy(quorum, {
      get(target, prop, receiver) {
        if (prop === 'propose') return propose;
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  private countTraffic(req: RequestEnvelope, body: unknown): void {
    if (req.apiKey === ApiKey.Produce) this.countProduce(req.body, body);
    else if (req.apiKey === ApiKey.Fetch && body !== NO_RESPONSE) this.countFetch(req.body, body as FetchResponse);
  }

  /** Counts partitions appended without error; acks=0 has no response, so all its partitions count. */
  private countProduce(reqBody: unknown, res: unknown): void {
    const topics = (reqBody as { topics?: Array<{ name: string; partitions: Array<{ records: Uint8Array }> }> }).topics ?? [];
    const answers = res === NO_RESPONSE ? undefined : (res as ProduceResponse).topics;
    topics.forEach((t, ti) => {
      t.partitions.forEach((p, pi) => {
        if (answers && answers[ti]?.partitions[pi]?.errorCode !== 0) return;
        this.bytesIn.inc({ topic: t.name }, p.records.length);
        this.recordsIn.inc({ topic: t.name }, recordCount(p.records));
      });
    });
  }

  private countFetch(reqBody: unknown, res: FetchResponse): void {
    const replicaId = (reqBody as { replicaId?: unknown }).replicaId;
    const fetcher = typeof replicaId === 'number' && replicaId >= 0 ? 'replica' : 'consumer';
    for (const t of res.topics ?? []) {
      for (const p of t.partitions) {
        if (p.errorCode !== 0 || p.records.length === 0) continue;
        this.bytesOut.inc({ topic: t.name, fetcher }, p.records.length);
        this.recordsOut.inc({ topic: t.name, fetcher }, recordCount(p.records));
      }
    }
  }

  // ---- scrape-time gauges ------------------------------------------------------

  private defineScrapeGauges(registers: Registry[]): void {
    const self = (): MetricsSources | undefined => this.sources;
    const gauge = <L extends string>(name: string, help: string, collect: (g: Gauge<L>, s: MetricsSources) => void, labelNames: L[] = []): void => {
      new Gauge<L>({
        name: `${PREFIX}${name}`, help, labelNames, registers,
        collect() {
          const s = self();
          if (s) collect(this, s);
        },
      });
    };
    gauge('under_replicated_partitions', 'Partitions of the cluster whose ISR is smaller than their replicas (from this node\'s metadata image)', (g, s) => g.set(partitionHealth(s.image()).underReplicated));
    gauge('offline_partitions', 'Partitions of the cluster without a leader (from this node\'s metadata image)', (g, s) => g.set(partitionHealth(s.image()).offline));
    gauge('active_controller', '1 while this node is the active controller, else 0', (g, s) => g.set(s.activeController?.() ? 1 : 0));
    gauge('raft_term', 'Current Raft term of the metadata quorum as this node sees it', (g, s) => g.set(s.raft().term));
    gauge('raft_leader', 'Node id of the metadata quorum leader this node knows (0: none)', (g, s) => g.set(s.raft().leader));
    gauge('metadata_commit_offset', 'Metadata log commit index known to this node', (g, s) => g.set(s.raft().commit));
    gauge('metadata_applied_offset', 'Metadata log index this node has applied', (g, s) => g.set(s.raft().applied));
    gauge('metadata_offset_lag', 'Metadata log entries committed but not yet applied on this node (commit - applied)', (g, s) => {
      const r = s.raft();
      g.set(Math.max(0, r.commit - r.applied));
    });
    gauge<'peer'>('metadata_peer_offset_lag', 'On the quorum leader: entries each voter or observer is behind the commit index', (g, s) => {
      g.reset();
      const r = s.raft();
      for (const [peer, match] of r.peerMatch ?? []) g.set({ peer: String(peer) }, Math.max(0, r.commit - match));
    }, ['peer']);
    this.defineBrokerGauges(gauge);
  }

  private defineBrokerGauges(gauge: <L extends string>(name: string, help: string, collect: (g: Gauge<L>, s: MetricsSources) => void, labelNames?: L[]) => void): void {
    gauge('broker_running', '1 while the broker is registered and unfenced (running), else 0', (g, s) => {
      if (s.broker) g.set(s.broker.state() === 'running' ? 1 : 0);
    });
    gauge('leader_partitions', 'Partitions this broker leads', (g, s) => {
      if (s.broker) g.set(s.broker.leaderCount());
    });
    gauge<'purgatory'>('purgatory_size', 'Requests waiting in a purgatory (produce: acks=all; fetch: long polls)', (g, s) => {
      if (!s.broker) return;
      const sizes = s.broker.purgatorySizes();
      g.set({ purgatory: 'produce' }, sizes.produce);
      g.set({ purgatory: 'fetch' }, sizes.fetch);
    }, ['purgatory']);
    this.defineCleanerGauges(gauge);
    gauge<'group'>('consumer_group_lag', 'Per group this broker coordinates: sum over its partitions of high watermark - committed offset', (g, s) => {
      g.reset();
      for (const { groupId, lag } of s.broker?.groupLags() ?? []) g.set({ group: groupId }, lag);
    }, ['group']);
    this.defineTransactionGauges(gauge);
  }

  /** The transaction coordinator's, computed on scrape (one owner per fact: the coordinator). */
  private defineTransactionGauges(gauge: <L extends string>(name: string, help: string, collect: (g: Gauge<L>, s: MetricsSources) => void, labelNames?: L[]) => void): void {
    gauge<'state'>('transactions', 'Transactional ids this broker coordinates, by transaction state (Ongoing, PrepareCommit, CompleteAbort, ...)', (g, s) => {
      g.reset();
      for (const [state, n] of s.broker?.transactions?.().byState ?? []) g.set({ state }, n);
    }, ['state']);
    gauge<'state'>('transaction_coordinator_partitions', '__transaction_state partitions this broker leads, loading or active', (g, s) => {
      const t = s.broker?.transactions?.();
      if (!t) return;
      g.set({ state: 'loading' }, t.partitions.loading);
      g.set({ state: 'active' }, t.partitions.active);
    }, ['state']);
    gauge('transaction_markers_pending', 'Transactions whose COMMIT/ABORT markers or completion this coordinator is still writing', (g, s) => {
      const t = s.broker?.transactions?.();
      if (t) g.set(t.completing);
    });
    gauge('transactions_timed_out_total', 'Transactions this coordinator aborted for exceeding their transaction.timeout.ms, since the broker started', (g, s) => {
      const t = s.broker?.transactions?.();
      if (t) g.set(t.timedOutAborts);
    });
  }

  /**
   * The log cleaner's totals are kept by the cleaner (one owner per fact) and
   * exposed at scrape; they only grow, so they carry _total names.
   */
  private defineCleanerGauges(gauge: <L extends string>(name: string, help: string, collect: (g: Gauge<L>, s: MetricsSources) => void, labelNames?: L[]) => void): void {
    const fromStats = (name: string, help: string, value: (st: CleanerStats) => number | null): void => {
      gauge(name, help, (g, s) => {
        const c = s.broker?.cleaner?.();
        const v = c === undefined ? null : value(c.stats);
        if (v !== null) g.set(v);
      });
    };
    fromStats('log_cleaner_runs_total', 'Cleans the log cleaner finished on this broker', (st) => st.runs);
    fromStats('log_cleaner_aborted_total', 'Cleans given up because the log was truncated, retained, deleted or closed meanwhile', (st) => st.aborted);
    fromStats('log_cleaner_failures_total', 'Cleans that failed (the log is then left uncleanable until restart)', (st) => st.failed);
    fromStats('log_cleaner_bytes_read_total', 'Segment bytes the log cleaner read', (st) => st.bytesRead);
    fromStats('log_cleaner_bytes_written_total', 'Cleaned segment bytes the log cleaner wrote', (st) => st.bytesWritten);
    fromStats('log_cleaner_records_removed_total', 'Records the log cleaner removed (superseded values, expired tombstones)', (st) => st.recordsRemoved);
    fromStats('log_cleaner_last_clean_timestamp_seconds', 'When the last clean finished (Unix seconds)', (st) => (st.lastCleanMs === null ? null : st.lastCleanMs / 1000));
    fromStats('log_cleaner_last_clean_duration_seconds', 'How long the last clean took, slices and throttle waits included', (st) => (st.lastDurationMs === null ? null : st.lastDurationMs / 1000));
    gauge('log_cleaner_max_dirty_ratio', 'Largest dirty ratio among this broker\'s compacted logs (dirty bytes / cleanable bytes)', (g, s) => {
      const c = s.broker?.cleaner?.();
      if (c !== undefined) g.set(c.maxDirtyRatio);
    });
  }
}
