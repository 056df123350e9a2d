// Configuration of the Raft shell: the voter list (`--controller-quorum`),
// listener URLs, and every limit and default of the driver, the transport and
// the quorum client — in one place, so no module hides its own literals.
//
// Invariants: a parsed quorum has at least one voter, distinct positive
// integer node ids, and ports in 1..65535; derived timings are consistent
// (tickMs > 0, electionTimeoutTicks > heartbeatTicks ≥ 1).

import type { ConnectionLimits } from '../net/limits.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { NodeId } from '../raft/types.js';

/** One voter of the controller quorum, as named on the command line. */
export interface QuorumVoter {
  readonly id: NodeId;
  readonly host: string;
  readonly port: number;
  /** The voter's controller listener, `ws://host:port`. */
  readonly url: string;
}

/** A `ws://host:port` listener address. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

/** Timing and bounds of the driver (RaftNode). */
export interface RaftNodeLimits {
  /** Wall time of one Raft tick. */
  readonly tickMs: number;
  /** Base election timeout in ticks; the effective one is uniform in [base, 2·base). */
  readonly electionTimeoutTicks: number;
  readonly heartbeatTicks: number;
  /** Take a state-machine snapshot and compact the log after this many applied entries. */
  readonly snapshotIntervalEntries: number;
  /** Proposals waiting to be applied; beyond it propose() rejects with a retriable error. */
  readonly proposalsPendingMax: number;
  /** A proposal not applied after this long rejects (its outcome is then unknown). */
  readonly proposalTimeoutMs: number;
  /** Linearizable reads waiting for leadership confirmation or apply. */
  readonly readsPendingMax: number;
  readonly readTimeoutMs: number;
  /** stop() waits at most this long for a leadership transfer to finish. */
  readonly transferTimeoutMs: number;
  /** Persist a commit-only hard-state change at most this often (term/vote changes are always persisted). */
  readonly commitPersistIntervalMs: number;
  /** Largest proposal payload accepted. */
  readonly proposalBytesMax: number;
  /** Raft segment size of the metadata log. */
  readonly segmentBytesMax: number;
}

export const DEFAULT_NODE_LIMITS: RaftNodeLimits = {
  tickMs: 50,
  electionTimeoutTicks: 10,
  heartbeatTicks: 1,
  snapshotIntervalEntries: 20_000,
  proposalsPendingMax: 16_384,
  proposalTimeoutMs: 30_000,
  readsPendingMax: 4_096,
  readTimeoutMs: 10_000,
  transferTimeoutMs: 3_000,
  commitPersistIntervalMs: 10_000,
  proposalBytesMax: 1024 * 1024,
  segmentBytesMax: 64 * 1024 * 1024,
};

/**
 * Bounds of the controller listener and the links to the peers. The listener
 * shares ConnectionLimits with the broker listener (net/limits.ts: the same
 * fields and meaning, the controller's own values); the rest are Raft-only.
 */
export interface TransportLimits extends ConnectionLimits {
  /** Raft messages to one peer are packed into frames of about this size. */
  readonly frameBatchBytesTarget: number;
  /** Frames queued per peer while its link is down or slow (oldest dropped beyond). */
  readonly sendQueueFramesMax: number;
  readonly sendQueueBytesMax: number;
  /** Stop writing to a peer link whose socket's bufferedAmount exceeds this. */
  readonly socketBufferedBytesMax: number;
  readonly reconnectBackoffBaseMs: number;
  /**
   * Kept well below the election timeout: a message queued for a peer that
   * just came back (a vote request) must not wait out a long backoff.
   */
  readonly reconnectBackoffMaxMs: number;
  readonly connectTimeoutMs: number;
  /** An inbound connection must say hello within this time. */
  readonly helloTimeoutMs: number;
  /** Outbound links ping this often and are dropped when no pong came within keepaliveTimeoutMs. */
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  /** Inbound connections silent (no frame, no ping) this long are closed. */
  readonly idleTimeoutMs: number;
  readonly inboundConnectionsMax: number;
}

export const DEFAULT_TRANSPORT_LIMITS: TransportLimits = {
  // The shared ConnectionLimits, smaller frames and send buffers than a
  // broker's (Raft frames are batches of about frameBatchBytesTarget,
  // proposals at most proposalBytesMax) and more requests in flight (they
  // are small, and a quorum client pipelines them).
  frameBytesMax: 16 * 1024 * 1024,
  requestsInFlightMax: 4_096,
  sendBufferBytesMax: 8 * 1024 * 1024,
  frameBatchBytesTarget: 1024 * 1024,
  sendQueueFramesMax: 1_024,
  sendQueueBytesMax: 32 * 1024 * 1024,
  socketBufferedBytesMax: 8 * 1024 * 1024,
  reconnectBackoffBaseMs: 20,
  reconnectBackoffMaxMs: 250,
  connectTimeoutMs: 2_000,
  helloTimeoutMs: 5_000,
  keepaliveIntervalMs: 2_000,
  keepaliveTimeoutMs: 6_000,
  idleTimeoutMs: 60_000,
  inboundConnectionsMax: 1_024,
};

/** Bounds of the quorum client (frameBytesMax: the controller listener's, ConnectionLimits). */
export interface QuorumClientLimits extends Pick<ConnectionLimits, 'frameBytesMax'> {
  readonly requestTimeoutMs: number;
  /** Requests queued or outstanding per connection. */
  readonly requestsPendingMax: number;
  /** How long propose() keeps following leader hints / waiting for an election. */
  readonly leaderSearchTimeoutMs: number;
  readonly retryBackoffBaseMs: number;
  readonly retryBackoffMaxMs: number;
  readonly connectTimeoutMs: number;
}

export const DEFAULT_CLIENT_LIMITS: QuorumClientLimits = {
  requestTimeoutMs: 15_000,
  requestsPendingMax: 16_384,
  leaderSearchTimeoutMs: 15_000,
  retryBackoffBaseMs: 20,
  retryBackoffMaxMs: 500,
  connectTimeoutMs: 2_000,
  frameBytesMax: DEFAULT_TRANSPORT_LIMITS.frameBytesMax,
};

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

function parsePort(text: string, what: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalid(`${what}: bad port '${text}'`);
  }
  return port;
}

/** Splits `host:port` (IPv6 in brackets: `[::1]:9093`). */
function splitHostPort(text: string, what: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:[\]]+):([^:]+)$/.exec(text);
  if (!m || m[1] === undefined || m[2] === undefined) throw invalid(`${what}: expected host:port, got '${text}'`);
  const host = m[1].startsWith('[') ? m[1].slice(1, -1) : m[1];
  return { host, port: parsePort(m[2], what) };
}

function wsUrl(host: string, port: number, scheme: 'ws' | 'wss' = 'ws'): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Parses `1@127.0.0.1:9093,2@127.0.0.1:9095,...` (Kafka's
 * controller.quorum.voters syntax). The voters' URLs take `scheme`: a node
 * whose controller listener is wss:// dials the voters over TLS.
 */
export function parseQuorum(text: string, scheme: 'ws' | 'wss' = 'ws'): QuorumVoter[] {
  const parts = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (parts.length === 0) throw invalid('controller quorum is empty');
  const voters: QuorumVoter[] = [];
  for (const part of parts) {
    const at = part.indexOf('@');
    if (at <= 0) throw invalid(`controller quorum entry '${part}': expected id@host:port`);
    const idText = part.slice(0, at);
    const id = Number(idText);
    if (!/^\d+$/.test(idText) || !Number.isSafeInteger(id) || id < 1) {
      throw invalid(`controller quorum entry '${part}': node id must be a positive integer`);
    }
    if (voters.some((v) => v.id === id)) throw invalid(`controller quorum names node ${id} twice`);
    const { host, port } = splitHostPort(part.slice(at + 1), `controller quorum entry '${part}'`);
    voters.push({ id, host, port, url: wsUrl(host, port, scheme) });
  }
  return voters;
}

/** Canonical text of a quorum (sorted by id): the same for every voter however the flag was written. */
export function formatQuorum(voters: readonly QuorumVoter[]): string {
  return [...voters].sort((a, b) => a.id - b.id).map((v) => `${v.id}@${wsUrl(v.host, v.port).slice(5)}`).join(',');
}

/** Parses a `ws://host:port` or (TLS) `wss://host:port` listener. */
export function parseListenUrl(text: string): ListenAddress {
  const m = /^(wss?):\/\/(.+?)\/?$/.exec(text.trim());
  if (!m || m[2] === undefined) throw invalid(`listener '${text}': expected ws://host:port or wss://host:port`);
  const { host, port } = splitHostPort(m[2], `listener '${text}'`);
  return { host, port, url: wsUrl(host, port, m[1] as 'ws' | 'wss') };
}

/** Merges overrides into the driver defaults and checks they are consistent. */
export function nodeLimits(overrides: Partial<RaftNodeLimits> = {}): RaftNodeLimits {
  const limits = { ...DEFAULT_NODE_LIMITS, ...overrides };
  for (const [key, value] of Object.entries(limits)) {
    if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) throw invalid(`${key} must be a positive number`);
  }
  if (!(limits.electionTimeoutTicks > limits.heartbeatTicks)) {
    throw invalid('electionTimeoutTicks must be greater than heartbeatTicks');
  }
  return limits;
}

/** The longest election timeout the limits allow, in ms (2·base ticks). */
export function electionTimeoutMaxMs(limits: RaftNodeLimits): number {
  return 2 * limits.electionTimeoutTicks * limits.tickMs;
}
