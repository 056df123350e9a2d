// Configuration of one Sluice node, built from command-line flags (a config
// file arrives with the CLI issue; flags will win over it). Names follow
// Kafka's where the meaning is the same: node.id, process.roles,
// controller.quorum.voters, log.dirs.
//
// Invariants of a ServerConfig: a node is one of the quorum's voters exactly
// when it has the controller role (a broker-only node follows the metadata
// log as an observer), except a controller started with --join-quorum: it
// follows the log until `sluice cluster add-controller` promotes it; a node with the broker role has a broker listener;
// every limit passed the checks in quorum-config.ts. Errors are SluiceError
// INVALID_CONFIG with a one-line reason (the CLI turns them into exit 2).

import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import path from 'node:path';
import { Errors, SluiceError } from '../util/errors.js';
import type { AuthorizerConfig } from '../security/authorizer.js';
import { parsePrincipal } from '../security/principal.js';
import type { LogLevel } from '../util/logger.js';
import { logConfigFrom, logManagerConfigFrom, type LogConfig, type LogManagerConfig } from '../storage/log-config.js';
import { saslConfigFrom, SECURITY_PROTOCOLS, type SaslConfig, type SaslFlags, type SecurityProtocol } from './sasl-config.js';

export { SECURITY_PROTOCOLS, type SecurityProtocol };
import {
  DEFAULT_TRANSPORT_LIMITS, formatQuorum, nodeLimits, parseListenUrl, parseQuorum,
  type ListenAddress, type QuorumVoter, type RaftNodeLimits, type TransportLimits,
} from '../raft-node/quorum-config.js';
import { tlsSettingsFrom, type TlsFlags, type TlsSettings } from '../net/tls.js';

export type ProcessRole = 'broker' | 'controller';
export type DurabilityMode = 'replication' | 'fsync';
export const DURABILITY_MODES: readonly DurabilityMode[] = ['replication', 'fsync'];

/** The broker role's settings. */
export interface BrokerConfig {
  /** The client listener (producers, consumers, follower fetches). */
  readonly listen: ListenAddress;
  /** --advertised-listen: the URL registered for clients and followers when it differs from the listener (a proxy, NAT). */
  readonly advertisedUrl: string | undefined;
  /** replica.lag.time.max.ms: a follower not caught up for this long leaves the ISR. */
  readonly replicaLagTimeMaxMs: number;
  /** When an appended batch counts toward the high watermark: at once, or once fsynced (docs/replication.md). */
  readonly durability: DurabilityMode;
  /** The broker's log defaults (Kafka's log.* keys over the built-in defaults); topic configs override them. */
  readonly logConfig: LogConfig;
  /** The log manager's checkpoint and retention timers and its tail cache (log.* keys of the same file). */
  readonly logManagerConfig: LogManagerConfig;
  /** --kafka-listen: the listener of Kafka's binary protocol (TCP), none when absent. */
  readonly kafkaListen: KafkaListen | undefined;
  /** --kafka-advertised-listen: the host:port Kafka clients are given when it differs from the listener. */
  readonly kafkaAdvertised: HostPort | undefined;
  /** auto.create.topics.enable: Metadata on the Kafka listener creates topics clients ask for (default true, as in Kafka). */
  readonly autoCreateTopics: boolean;
  /** SASL on the Kafka listener (SASL_*) and the WebSocket listener (sasl-config.ts). */
  readonly sasl: SaslConfig;
  /** quota.window.num × quota.window.size.seconds: the windows client quota rates are measured over (docs/security.md). */
  readonly quotaWindows: { readonly windowNum: number; readonly windowSizeMs: number };
}

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** A Kafka listener: where, and how clients must talk to it (TLS for SSL and SASL_SSL; SASL for the SASL_ ones). */
export interface KafkaListen extends HostPort {
  readonly securityProtocol: SecurityProtocol;
}

export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

export interface ServerConfig {
  readonly nodeId: number;
  readonly roles: readonly ProcessRole[];
  readonly controllerListen: ListenAddress;
  /** --advertised-controller-listen: the CONTROLLER URL a broker-only node registers, when it differs from the listener. */
  readonly advertisedControllerUrl: string | undefined;
  /** --outbound-address: the local IP every node-to-node connection is dialed from (the OS picks when absent). */
  readonly outboundAddress: string | undefined;
  readonly quorum: readonly QuorumVoter[];
  readonly dataDir: string;
  /** Set by --cluster-id; otherwise derived from the quorum (or read from meta.properties). */
  readonly clusterId: string | undefined;
  readonly logLevel: LogLevel;
  readonly nodeLimits: RaftNodeLimits;
  readonly transportLimits: TransportLimits;
  /**
   * Run only the consensus layer, with a digest state machine that accepts raw
   * proposals: for measuring and testing Raft alone (bench/raft, the quorum
   * integration test). Default false: the metadata state machine and the
   * controller.
   */
  readonly raftOnly: boolean;
  /** Present when roles include 'broker'. */
  readonly broker: BrokerConfig | undefined;
  /**
   * --http-listen (alias --metrics-listen): where /metrics, /healthz, /readyz
   * and the web console are served over HTTP (none when absent).
   */
  readonly httpListen: ListenAddress | undefined;
  /** --console-admin: the console shows its produce form and admin actions (default false: read-only). */
  readonly consoleAdmin: boolean;
  /** Cluster-wide configs this node offers as initial values (written only where the cluster has none). */
  readonly clusterDefaults: Readonly<Record<string, string>>;
  /** authorizer.class.name (--authorizer) set: ACLs enforced with these settings; null: every request allowed. */
  readonly authorizer: AuthorizerConfig | null;
  /** The node's TLS identity and trust (ssl.* keys), for wss://, SSL:// and links to TLS peers; none when absent. */
  readonly tls: TlsSettings | undefined;
}

/** The flags `sluice server` accepts (yargs camel-cases them). */
export interface ServerFlags extends TlsFlags, SaslFlags {
  readonly nodeId: number;
  readonly roles: string;
  readonly controllerListen: string;
  readonly controllerQuorum: string;
  readonly dataDir: string;
  readonly clusterId?: string;
  readonly logLevel?: string;
  readonly electionTimeoutMs?: number;
  readonly snapshotIntervalEntries?: number;
  readonly raftOnly?: boolean;
  /** A controller not in --controller-quorum, to be added with sluice cluster add-controller (KIP-853). */
  readonly joinQuorum?: boolean;
  readonly listen?: string;
  readonly advertisedListen?: string;
  readonly advertisedControllerListen?: string;
  readonly outboundAddress?: string;
  readonly durability?: string;
  readonly replicaLagTimeMaxMs?: number;
  readonly httpListen?: string;
  /** The old name of --http-listen, still accepted. */
  readonly metricsListen?: string;
  readonly consoleAdmin?: boolean;
  readonly kafkaListen?: string;
  readonly kafkaAdvertisedListen?: string;
  readonly autoCreateTopicsEnable?: boolean;
  readonly quotaWindowNum?: number;
  readonly quotaWindowSizeSeconds?: number;
  /** Broker-level log keys from a config file (log.segment.bytes, log.retention.ms, ...), as a JSON object text. */
  readonly logConfig?: string;
  /** Cluster-wide keys from a config file (num.partitions, ...), as a JSON object text. */
  readonly clusterDefaults?: string;
  /** authorizer.class.name: "acl" or Kafka's StandardAuthorizer class name turns ACL enforcement on. */
  readonly authorizer?: string;
  /** super.users: principals allowed everything, separated by ';' (Kafka's form). */
  readonly superUsers?: string;
  /** allow.everyone.if.no.acl.found (default false). */
  readonly allowEveryoneIfNoAclFound?: boolean;
}

/** The names that turn ACL enforcement on: Sluice's own and Kafka's KRaft authorizer class. */
export const AUTHORIZER_NAMES: readonly string[] = ['acl', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer'];

export function authorizerConfigFrom(flags: Pick<ServerFlags, 'authorizer' | 'superUsers' | 'allowEveryoneIfNoAclFound'>): AuthorizerConfig | null {
  const name = flags.authorizer?.trim() ?? '';
  // Only ';' separates (Kafka's form): certificate subjects hold commas (User:CN=broker-1,O=acme).
  const superUsers = (flags.superUsers ?? '').split(';').map((p) => p.trim()).filter((p) => p !== '');
  for (const p of superUsers) {
    try {
      parsePrincipal(p);
    } catch (err) {
      throw invalid(`super.users: ${(err as Error).message}`);
    }
  }
  if (name === '') {
    if (superUsers.length > 0 || flags.allowEveryoneIfNoAclFound !== undefined) {
      throw invalid('super.users and allow.everyone.if.no.acl.found need an authorizer: set --authorizer acl (authorizer.class.name)');
    }
    return null;
  }
  if (!AUTHORIZER_NAMES.includes(name)) throw invalid(`--authorizer (authorizer.class.name) must be one of ${AUTHORIZER_NAMES.join(', ')}, got '${name}'`);
  return { superUsers, allowEveryoneIfNoAclFound: flags.allowEveryoneIfNoAclFound === true };
}

export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const CLUSTER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

export function parseRoles(text: string): ProcessRole[] {
  const roles = text.split(',').map((r) => r.trim()).filter((r) => r.length > 0);
  if (roles.length === 0) throw invalid('--roles names no role');
  for (const r of roles) if (r !== 'broker' && r !== 'controller') throw invalid(`unknown role '${r}' (roles: broker, controller)`);
  return [...new Set(roles)] as ProcessRole[];
}

/**
 * A cluster id every voter computes alike from the quorum: 22 characters of
 * base64url, the shape of Kafka's cluster ids (a base64 UUID).
 */
export function deriveClusterId(quorum: readonly QuorumVoter[]): string {
  const digest = createHash('sha256').update(`sluice-cluster:${formatQuorum(quorum)}`).digest();
  return digest.subarray(0, 16).toString('base64url');
}

function limitsFrom(flags: ServerFlags): RaftNodeLimits {
  const overrides: { -readonly [K in keyof RaftNodeLimits]?: RaftNodeLimits[K] } = {};
  if (flags.electionTimeoutMs !== undefined) {
    const base = nodeLimits();
    if (!(flags.electionTimeoutMs >= 2 * base.tickMs)) throw invalid(`--election-timeout-ms must be at least ${2 * base.tickMs}`);
    overrides.electionTimeoutTicks = Math.round(flags.electionTimeoutMs / base.tickMs);
  }
  if (flags.snapshotIntervalEntries !== undefined) overrides.snapshotIntervalEntries = flags.snapshotIntervalEntries;
  return nodeLimits(overrides);
}

export function serverConfigFromFlags(flags: ServerFlags): ServerConfig {
  if (!(Number.isSafeInteger(flags.nodeId) && flags.nodeId > 0)) throw invalid(`--node-id must be a positive integer, got ${flags.nodeId}`);
  const roles = parseRoles(flags.roles);
  const controllerListen = parseListenUrl(flags.controllerListen);
  // The voters are dialed the way this node's own controller listener speaks: a quorum is all TLS or all plain.
  const quorum = parseQuorum(flags.controllerQuorum, controllerListen.url.startsWith('wss:') ? 'wss' : 'ws');
  const tls = tlsSettingsFrom(flags);
  const voter = quorum.some((v) => v.id === flags.nodeId);
  if (roles.includes('controller') && !voter && flags.joinQuorum !== true) {
    throw invalid(`node ${flags.nodeId} has the controller role but is not in --controller-quorum ` +
      '(to add a controller: start it with --join-quorum, then run sluice cluster add-controller)');
  }
  if (flags.joinQuorum === true && (voter || !roles.includes('controller'))) {
    throw invalid('--join-quorum is for a controller that is not in --controller-quorum');
  }
  if (!roles.includes('controller') && voter) {
    throw invalid(`node ${flags.nodeId} is a voter in --controller-quorum, so it needs the controller role`);
  }
  if (flags.clusterId !== undefined && !CLUSTER_ID_PATTERN.test(flags.clusterId)) {
    throw invalid('--cluster-id must be 1-64 characters of [A-Za-z0-9_-]');
  }
  const logLevel = (flags.logLevel ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw invalid(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  if (!flags.dataDir) throw invalid('--data-dir is empty');
  const broker = roles.includes('broker') ? brokerConfigFrom(flags) : undefined;
  if (!broker && flags.listen !== undefined) throw invalid('--listen is the broker listener; add broker to --roles');
  if (!broker && flags.advertisedListen !== undefined) throw invalid('--advertised-listen is the broker listener\'s; add broker to --roles');
  if (!broker && (flags.kafkaListen !== undefined || flags.kafkaAdvertisedListen !== undefined)) throw invalid('--kafka-listen is a broker listener; add broker to --roles');
  if (flags.outboundAddress !== undefined && isIP(flags.outboundAddress) === 0) {
    throw invalid(`--outbound-address must be an IP address, got '${flags.outboundAddress}'`);
  }
  if (broker && flags.raftOnly) throw invalid('--raft-only runs no broker; use --roles controller');
  const httpListen = httpListenFrom(flags);
  const tlsListener = [
    controllerListen.url.startsWith('wss:') ? '--controller-listen wss://' : null,
    broker?.listen.url.startsWith('wss:') ? '--listen wss://' : null,
    broker?.kafkaListen && usesTls(broker.kafkaListen.securityProtocol) ? `--kafka-listen ${broker.kafkaListen.securityProtocol}://` : null,
    httpListen?.url.startsWith('https:') ? '--http-listen https://' : null,
  ].find((x) => x !== null);
  if (tlsListener && !tls) throw invalid(`${tlsListener} needs ssl.keystore.location (--ssl-keystore-location): the node's certificate and key, PEM`);
  return {
    nodeId: flags.nodeId,
    roles,
    controllerListen,
    advertisedControllerUrl: flags.advertisedControllerListen === undefined ? undefined : parseAdvertised(flags.advertisedControllerListen, '--advertised-controller-listen'),
    outboundAddress: flags.outboundAddress,
    quorum,
    dataDir: path.resolve(flags.dataDir),
    clusterId: flags.clusterId,
    logLevel,
    nodeLimits: limitsFrom(flags),
    transportLimits: DEFAULT_TRANSPORT_LIMITS,
    raftOnly: flags.raftOnly === true,
    broker,
    httpListen,
    consoleAdmin: consoleAdminFrom(flags),
    clusterDefaults: parseJsonMap(flags.clusterDefaults, '--cluster-defaults'),
    authorizer: authorizerConfigFrom(flags),
    tls,
  };
}

function parseJsonMap(text: string | undefined, what: string): Record<string, string> {
  if (text === undefined) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')) return v as Record<string, string>;
  } catch { /* reported below */ }
  throw invalid(`${what} must be a JSON object of strings`);
}

/** --http-listen, or its old name --metrics-listen (both at once only when they agree). */
function httpListenFrom(flags: ServerFlags): ListenAddress | undefined {
  const http = flags.httpListen === undefined ? undefined : parseHttpListen(flags.httpListen, '--http-listen');
  const metrics = flags.metricsListen === undefined ? undefined : parseHttpListen(flags.metricsListen, '--metrics-listen');
  if (http && metrics && http.url !== metrics.url) {
    throw invalid(`--metrics-listen is the old name of --http-listen; give one of them (got ${metrics.url} and ${http.url})`);
  }
  return http ?? metrics;
}

function consoleAdminFrom(flags: ServerFlags): boolean {
  const admin = flags.consoleAdmin === true;
  if (admin && flags.httpListen === undefined && flags.metricsListen === undefined) {
    throw invalid('--console-admin needs --http-listen (the console is served there)');
  }
  return admin;
}

/** Parses http://host:port or https://host:port (port 0: any free port); `flag` names the setting in the error. */
export function parseHttpListen(text: string, flag = '--http-listen'): ListenAddress {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch { /* reported below */ }
  const port = url ? Number(url.port || NaN) : NaN;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname || !(Number.isInteger(port) && port >= 0 && port <= 65535) || (url.pathname !== '/' && url.pathname !== '')) {
    throw invalid(`${flag} must be http://host:port or https://host:port (TLS), got '${text}'`);
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port, url: `${url.protocol}//${url.host}` };
}

/** The old name of parseHttpListen (errors name --metrics-listen). */
export function parseMetricsListen(text: string): ListenAddress {
  return parseHttpListen(text, '--metrics-listen');
}

function brokerConfigFrom(flags: ServerFlags): BrokerConfig {
  if (flags.listen === undefined) throw invalid('the broker role needs --listen ws://host:port');
  const durability = (flags.durability ?? 'replication') as DurabilityMode;
  if (!DURABILITY_MODES.includes(durability)) throw invalid(`--durability must be one of ${DURABILITY_MODES.join(', ')}`);
  const lag = flags.replicaLagTimeMaxMs ?? 30_000;
  if (!(Number.isSafeInteger(lag) && lag > 0)) throw invalid('--replica-lag-time-max-ms must be a positive integer');
  let logConfig: LogConfig;
  let logManagerConfig: LogManagerConfig;
  try {
    const props = flags.logConfig === undefined ? {} : JSON.parse(flags.logConfig) as Record<string, string>;
    logConfig = logConfigFrom(props);
    logManagerConfig = logManagerConfigFrom(props);
  } catch (err) {
    throw invalid(err instanceof Error ? err.message.replace(/^INVALID_CONFIG: /, '') : String(err));
  }
  const advertisedUrl = flags.advertisedListen === undefined ? undefined : parseAdvertised(flags.advertisedListen, '--advertised-listen');
  const kafkaListen = flags.kafkaListen === undefined ? undefined : parseKafkaListen(flags.kafkaListen, '--kafka-listen');
  // The advertised address takes the listener's security protocol; only its host and port are kept.
  const advertised = flags.kafkaAdvertisedListen === undefined ? undefined : parseKafkaListen(flags.kafkaAdvertisedListen, '--kafka-advertised-listen');
  const kafkaAdvertised: HostPort | undefined = advertised ? { host: advertised.host, port: advertised.port } : undefined;
  if (kafkaAdvertised && !kafkaListen) throw invalid('--kafka-advertised-listen needs --kafka-listen');
  if (kafkaAdvertised && (kafkaAdvertised.host === '0.0.0.0' || kafkaAdvertised.host === '::' || kafkaAdvertised.port === 0)) {
    throw invalid('--kafka-advertised-listen must be an address clients can dial (no wildcard host, no port 0)');
  }
  const windowNum = flags.quotaWindowNum ?? 11;
  const windowSeconds = flags.quotaWindowSizeSeconds ?? 1;
  if (!(Number.isSafeInteger(windowNum) && windowNum >= 1)) throw invalid('--quota-window-num (quota.window.num) must be a positive integer');
  if (!(Number.isSafeInteger(windowSeconds) && windowSeconds >= 1)) throw invalid('--quota-window-size-seconds (quota.window.size.seconds) must be a positive integer');
  return {
    listen: parseListenUrl(flags.listen), advertisedUrl, replicaLagTimeMaxMs: lag, durability, logConfig, logManagerConfig,
    kafkaListen, kafkaAdvertised, autoCreateTopics: flags.autoCreateTopicsEnable ?? true,
    sasl: saslConfigFrom(flags),
    quotaWindows: { windowNum, windowSizeMs: windowSeconds * 1000 },
  };
}

/**
 * HOST:PORT (PLAINTEXT), or PROTOCOL://HOST:PORT with one of Kafka's security
 * protocols (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL); [::1]:PORT for IPv6.
 * Port 0 binds any free port.
 */
export function parseKafkaListen(text: string, flag: string): KafkaListen {
  const m = /^(?:([A-Za-z_]+):\/\/)?(\[[^\]]+\]|[^:/\s]+):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  const protocol = (m?.[1] ?? 'PLAINTEXT').toUpperCase() as SecurityProtocol;
  if (!m || !(port >= 0 && port <= 65535) || !SECURITY_PROTOCOLS.includes(protocol)) {
    throw invalid(`${flag} must be HOST:PORT or PROTOCOL://HOST:PORT with PROTOCOL one of ${SECURITY_PROTOCOLS.join(', ')}, got '${text}'`);
  }
  return { host: m[2]!.replace(/^\[|\]$/g, ''), port, securityProtocol: protocol };
}

/** An advertised ws://host:port: an address others can dial, never a wildcard host. */
function parseAdvertised(text: string, flag: string): string {
  const a = parseListenUrl(text);
  if (a.host === '0.0.0.0' || a.host === '::') throw invalid(`${flag} must be an address others can dial, not ${a.host}`);
  return a.url;
}
