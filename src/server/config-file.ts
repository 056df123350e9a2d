// `sluice server --config FILE`: a node's settings from a file with Kafka's
// names, as a `.properties` file (key=value lines, # comments) or JSON (an
// object of the same keys). The result is the flags' values, which yargs
// merges under the command line: flags win over the file.
//
// Keys (docs/operations.md lists them): node.id, process.roles,
// controller.quorum.voters, log.dirs (one directory), listeners
// (BROKER://host:port for the broker listener, CONTROLLER://host:port for the
// controller listener; PLAINTEXT is taken as BROKER), advertised.listeners
// (same shape, the URLs others dial), outbound.address, cluster.id,
// replica.lag.time.max.ms, durability, http.listen (old name metrics.listen),
// console.admin.enable, log.level, authorizer.class.name, super.users,
// allow.everyone.if.no.acl.found, the TLS
// keys (ssl.keystore.location, ssl.truststore.location, ssl.client.auth, ...,
// and listener.security.protocol.map to make a listener wss://), and the
// broker-level log keys (log.segment.bytes, log.retention.ms, ...), and
// cluster-wide keys (num.partitions, default.replication.factor,
// min.insync.replicas, broker.session.timeout.ms, ...) which live in the
// metadata log: a node offers them as the cluster's initial values, written
// only where the cluster has no value of its own yet. An
// unknown key, a bad value or an unreadable file is an INVALID_CONFIG error
// naming the key and the file: nothing starts with a half-understood config.

import fs from 'node:fs';
import { Errors, SluiceError } from '../util/errors.js';
import { LOG_CONFIG_KEYS, LOG_MANAGER_CONFIG_KEYS } from '../storage/log-config.js';
import { brokerConfigDef, configValueProblem } from '../metadata/config-defs.js';

function invalid(file: string, message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, `${file}: ${message}`);
}

/** Kafka name → the `sluice server` flag it sets (yargs' camelCase key). */
const DIRECT: ReadonlyMap<string, { flag: string; numeric: boolean }> = new Map([
  ['node.id', { flag: 'nodeId', numeric: true }],
  ['process.roles', { flag: 'roles', numeric: false }],
  ['controller.quorum.voters', { flag: 'controllerQuorum', numeric: false }],
  ['cluster.id', { flag: 'clusterId', numeric: false }],
  ['replica.lag.time.max.ms', { flag: 'replicaLagTimeMaxMs', numeric: true }],
  ['durability', { flag: 'durability', numeric: false }],
  ['http.listen', { flag: 'httpListen', numeric: false }],
  ['metrics.listen', { flag: 'metricsListen', numeric: false }],
  ['outbound.address', { flag: 'outboundAddress', numeric: false }],
  ['log.level', { flag: 'logLevel', numeric: false }],
  ['kafka.listeners', { flag: 'kafkaListen', numeric: false }],
  ['kafka.advertised.listeners', { flag: 'kafkaAdvertisedListen', numeric: false }],
  ['authorizer.class.name', { flag: 'authorizer', numeric: false }],
  ['super.users', { flag: 'superUsers', numeric: false }],
  ['ssl.keystore.location', { flag: 'sslKeystoreLocation', numeric: false }],
  ['ssl.key.password', { flag: 'sslKeyPassword', numeric: false }],
  ['ssl.truststore.location', { flag: 'sslTruststoreLocation', numeric: false }],
  ['ssl.client.auth', { flag: 'sslClientAuth', numeric: false }],
  ['listener.name.broker.ssl.client.auth', { flag: 'brokerSslClientAuth', numeric: false }],
  ['listener.name.kafka.ssl.client.auth', { flag: 'kafkaSslClientAuth', numeric: false }],
  ['ssl.principal.mapping.rules', { flag: 'sslPrincipalMappingRules', numeric: false }],
  ['ssl.endpoint.identification.algorithm', { flag: 'sslEndpointIdentificationAlgorithm', numeric: false }],
  ['ssl.reload.interval.ms', { flag: 'sslReloadIntervalMs', numeric: true }],
  ['sasl.enabled.mechanisms', { flag: 'saslEnabledMechanisms', numeric: false }],
  ['connections.max.reauth.ms', { flag: 'connectionsMaxReauthMs', numeric: true }],
  ['sasl.authentication.timeout.ms', { flag: 'saslAuthenticationTimeoutMs', numeric: true }],
  ['sasl.oauthbearer.jwks.file', { flag: 'saslOauthbearerJwksFile', numeric: false }],
  ['sasl.oauthbearer.expected.audience', { flag: 'saslOauthbearerExpectedAudience', numeric: false }],
  ['sasl.oauthbearer.expected.issuer', { flag: 'saslOauthbearerExpectedIssuer', numeric: false }],
  ['sasl.oauthbearer.clock.skew.seconds', { flag: 'saslOauthbearerClockSkewSeconds', numeric: true }],
  ['sasl.oauthbearer.sub.claim.name', { flag: 'saslOauthbearerSubClaimName', numeric: false }],
  ['quota.window.num', { flag: 'quotaWindowNum', numeric: true }],
  ['quota.window.size.seconds', { flag: 'quotaWindowSizeSeconds', numeric: true }],
  ['sasl.mechanism.inter.broker.protocol', { flag: 'saslMechanismInterBrokerProtocol', numeric: false }],
  ['inter.broker.sasl.username', { flag: 'interBrokerSaslUsername', numeric: false }],
  ['inter.broker.sasl.password', { flag: 'interBrokerSaslPassword', numeric: false }],
]);

/** Boolean keys → their flags. */
const BOOLEANS: ReadonlyMap<string, string> = new Map([
  ['auto.create.topics.enable', 'autoCreateTopicsEnable'],
  ['sasl.plain.allow.plaintext', 'saslPlainAllowPlaintext'],
  ['ws.sasl.required', 'wsSaslRequired'],
  ['console.admin.enable', 'consoleAdmin'],
  ['allow.everyone.if.no.acl.found', 'allowEveryoneIfNoAclFound'],
]);

/** Kafka's store-type keys: only PEM files are read, so PEM is the only value accepted. */
const PEM_ONLY_KEYS: ReadonlySet<string> = new Set(['ssl.keystore.type', 'ssl.truststore.type']);

/** The broker's log defaults and its log manager's settings (timers, tail cache): both go to --log-config. */
const LOG_KEYS: ReadonlySet<string> = new Set([
  ...LOG_CONFIG_KEYS.map((k) => k.brokerKey), ...LOG_MANAGER_CONFIG_KEYS.map((k) => k.brokerKey),
  // The per-log and cleaner settings that are not integers (log-config.ts parses them itself).
  'log.cleanup.policy', 'log.cleaner.min.cleanable.ratio', 'log.cleaner.enable',
]);

/** Parses .properties text: key=value (or key: value) lines; # and ! start comments. */
export function parseProperties(text: string, file: string): Map<string, string> {
  const out = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) return;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (!m) throw invalid(file, `line ${i + 1} is not key=value: ${line.slice(0, 60)}`);
    out.set(m[1]!, m[2]!.trim());
  });
  return out;
}

function entriesOf(file: string): Map<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw invalid(file, `cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!file.endsWith('.json')) return parseProperties(text, file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(file, `not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(file, 'must hold a JSON object');
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw invalid(file, `${k} must be a string or a number`);
    out.set(k, String(v));
  }
  return out;
}

/** listener.security.protocol.map=BROKER:SSL,CONTROLLER:SSL → which listener names speak TLS. */
function protocolMap(value: string, file: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const part of value.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const m = /^([A-Za-z_]+):([A-Za-z_]+)$/.exec(part);
    const protocol = m?.[2]?.toUpperCase();
    if (!m || (protocol !== 'PLAINTEXT' && protocol !== 'SSL')) {
      throw invalid(file, `listener.security.protocol.map entry '${part}' is not NAME:PLAINTEXT or NAME:SSL`);
    }
    out.set(m[1]!.toUpperCase(), protocol === 'SSL');
  }
  return out;
}

/**
 * listeners=BROKER://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093 → the two listener flags;
 * advertised.listeners (same shape) → the two advertised ones. A listener
 * named SSL, or mapped to SSL by listener.security.protocol.map, is wss://.
 */
function listenersFlags(value: string, file: string, key: 'listeners' | 'advertised.listeners', tlsNames: ReadonlyMap<string, boolean>): Record<string, string> {
  const flags = key === 'listeners'
    ? { broker: 'listen', controller: 'controllerListen' }
    : { broker: 'advertisedListen', controller: 'advertisedControllerListen' };
  const out: Record<string, string> = {};
  for (const part of value.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const m = /^([A-Za-z_]+):\/\/(.+)$/.exec(part);
    if (!m) throw invalid(file, `${key} entry '${part}' is not NAME://host:port`);
    const name = m[1]!.toUpperCase();
    const flag = name === 'BROKER' || name === 'PLAINTEXT' || name === 'SSL' ? flags.broker : name === 'CONTROLLER' ? flags.controller : null;
    if (!flag) throw invalid(file, `${key} entry '${part}': the listener name must be BROKER (or PLAINTEXT, or SSL) or CONTROLLER`);
    out[flag] = `${(tlsNames.get(name) ?? name === 'SSL') ? 'wss' : 'ws'}://${m[2]}`;
  }
  return out;
}

/** The flag values a config file sets (yargs config parser: flags on the command line win). */
export function readServerConfigFile(file: string): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  const logConfig: Record<string, string> = {};
  const clusterDefaults: Record<string, string> = {};
  const entries = entriesOf(file);
  const tlsNames = protocolMap(entries.get('listener.security.protocol.map') ?? '', file);
  for (const [key, value] of entries) {
    const direct = DIRECT.get(key);
    if (direct) {
      if (direct.numeric && !/^-?\d+$/.test(value)) throw invalid(file, `${key} must be an integer, got '${value}'`);
      flags[direct.flag] = direct.numeric ? Number(value) : value;
    } else if (BOOLEANS.has(key)) {
      if (value !== 'true' && value !== 'false') throw invalid(file, `${key} must be true or false, got '${value}'`);
      flags[BOOLEANS.get(key)!] = value === 'true';
    } else if (key === 'log.dirs') {
      if (value.includes(',')) throw invalid(file, 'log.dirs names more than one directory; a node has one data directory');
      flags.dataDir = value;
    } else if (key === 'listeners' || key === 'advertised.listeners') {
      Object.assign(flags, listenersFlags(value, file, key, tlsNames));
    } else if (key === 'listener.security.protocol.map') {
      // read above, before the listeners it qualifies
    } else if (PEM_ONLY_KEYS.has(key)) {
      if (value.toUpperCase() !== 'PEM') throw invalid(file, `${key} must be PEM (Sluice reads PEM files only), got '${value}'`);
    } else if (LOG_KEYS.has(key)) {
      logConfig[key] = value;
    } else if (brokerConfigDef(key)) {
      const problem = configValueProblem(brokerConfigDef(key)!, value);
      if (problem) throw invalid(file, problem);
      clusterDefaults[key] = value;
    } else {
      throw invalid(file, `unknown key '${key}' (docs/operations.md lists the keys a node reads)`);
    }
  }
  // As one JSON string: yargs would split dotted keys of an object into nested ones.
  if (Object.keys(logConfig).length > 0) flags.logConfig = JSON.stringify(logConfig);
  if (Object.keys(clusterDefaults).length > 0) flags.clusterDefaults = JSON.stringify(clusterDefaults);
  return flags;
}
