// The broker role of a node: partition logs, the replica manager driven by
// the metadata image, the client listener, and the broker's life with the
// controller (register → fenced while catching up → running → controlled
// shutdown). The metadata image comes from this node's Raft state machine —
// as a voter on a combined node, as an observer on a broker-only node — so
// the same replay path feeds controllers and brokers.
//
// start: logs open (recovering torn tails) → listener up → registration →
// once caught up (running), the replica manager follows the image. stop (SIGTERM): controlled shutdown
// first (the controller moves this broker's leaderships away while it still
// serves), then fetchers and waiters stop, the listener closes, and the logs
// close with their checkpoints written. Startup failures undo what was opened.

import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import type { Clock, Scheduler } from '../util/clock.js';
import type { FileSystem } from '../util/file-system.js';
import { webSocketFactoryOver, type Transport } from '../net/transport.js';
import { LogManager } from '../storage/log-manager.js';
import type { LogConfig, LogManagerConfig } from '../storage/log-config.js';
import type { MetadataStateMachine } from '../metadata/state-machine.js';
import type { Endpoint } from '../metadata/records.js';
import { WsServer } from '../net/ws-server.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../net/limits.js';
import { ReplicaManager, type AlterPartitionAnswer, type AlterPartitionCall, type DurabilityMode } from '../replication/replica-manager.js';
import { BROKER_ENDPOINT, replicaLinkFactory } from '../replication/replica-fetcher.js';
import { BrokerLifecycle } from './broker-lifecycle.js';
import { brokerResponseEncoder, createBrokerApi, type BrokerApiDeps, type ControllerCall } from './broker-api.js';
import { describeLogDirs } from './log-dirs.js';
import { ProducerIdManager } from './producer-ids.js';
import { GroupCoordinator } from '../groups/coordinator.js';
import { TransactionCoordinator } from '../transactions/coordinator.js';
import { BrokerLinks } from '../transactions/broker-links.js';
import { markerChannel } from '../transactions/markers.js';
import { TransactionVerifier } from '../transactions/verifier.js';
import type { TxnVerifier } from '../replication/txn-seams.js';
import type { RequestHandler } from '../net/server-connection.js';
import type { WebSocketFactory } from '../net/client-link.js';
import { DEFAULT_KAFKA_LIMITS, KafkaServer, type KafkaConnectionLimits } from '../net/kafka-server.js';
import { createKafkaFrameHandler } from './kafka/dispatch.js';
import { Authorizer, type AuthorizerConfig } from '../security/authorizer.js';
import { KAFKA_ENDPOINT, kafkaEndpointUrl } from './kafka/cluster-view.js';
import { usesTls, type HostPort, type KafkaListen } from './config.js';
import type { TlsContext } from '../net/tls.js';
import { SaslGate, scramNonce } from './sasl-gate.js';
import { bearerOnConnect } from './ws-sasl.js';
import { jwtValidatorFrom, type SaslConfig } from './sasl-config.js';
import type { SaslSettings } from '../security/sasl/authenticator.js';
import { SCRAM_MECHANISM_IDS } from '../security/sasl/mechanism.js';
import type { CredentialLookup } from '../security/sasl/scram-credential.js';
import type { MetadataImage } from '../metadata/image.js';
import { ClientQuotas, type ThrottleObserver } from './quotas.js';
import { DEFAULT_QUOTA_WINDOWS, type QuotaWindowConfig } from '../security/quota-manager.js';

/** Sends an ISR change to the controller; an accepted one is counted as a shrink or expand. */
async function alterPartition(opts: BrokerOptions, req: AlterPartitionCall): Promise<AlterPartitionAnswer> {
  const oldSize = opts.metadata.image.topicsById.get(req.topicId)?.partitions.get(req.partition)?.isr.length;
  const answer = await opts.control<AlterPartitionAnswer>('alterPartition', { ...req, newIsr: [...req.newIsr] });
  if (answer.errorCode === 0 && oldSize !== undefined) opts.instrument?.onIsrChange(oldSize, req.newIsr.length);
  return answer;
}

export interface BrokerSettings {
  readonly listen: { readonly host: string; readonly port: number };
  /** The URL registered for clients and followers (--advertised-listen); the bound listener's when absent. */
  readonly advertisedUrl?: string;
  /** The local address replica fetchers dial from (--outbound-address). */
  readonly outboundAddress?: string;
  readonly replicaLagTimeMaxMs: number;
  readonly durability: DurabilityMode;
  readonly logConfig: LogConfig;
  /** Timers and the tail cache of the log manager; defaults when absent. */
  readonly logManagerConfig?: LogManagerConfig;
  readonly connectionLimits?: ConnectionLimits;
  readonly heartbeatIntervalMs?: number;
  readonly rack?: string | null;
  /** The Kafka-protocol listener (TCP; TLS for SSL and SASL_SSL), none when absent. */
  readonly kafkaListen?: KafkaListen;
  /** The host:port registered for Kafka clients; the bound listener's when absent. */
  readonly kafkaAdvertised?: HostPort;
  readonly kafkaLimits?: KafkaConnectionLimits;
  /** auto.create.topics.enable for Kafka clients' Metadata requests (default true). */
  readonly autoCreateTopics?: boolean;
  /** The node's TLS identity: replica fetchers present it to wss:// leaders; TLS listeners serve it. */
  readonly tls?: TlsContext;
  /** The broker listener speaks wss:// (needs `tls`). */
  readonly listenTls?: boolean;
  /** SASL settings of both listeners (sasl-config.ts); absent: the defaults (authentication optional on the WebSocket listener). */
  readonly sasl?: SaslConfig;
  /** quota.window.num / quota.window.size.seconds (default 11 × 1 s, as in Kafka). */
  readonly quotaWindows?: QuotaWindowConfig;
}

/** Largest message a replica link accepts from a leader (a fetch answer's record batches). */
const REPLICA_FRAME_BYTES_MAX = 256 * 1024 * 1024;
const REPLICA_CONNECT_TIMEOUT_MS = 10_000;

/** How replica fetchers dial leaders: through the injected transport, else ws from --outbound-address / with TLS, else the default. */
function fetcherFactory(opts: BrokerOptions): { factory?: WebSocketFactory } {
  const s = opts.settings;
  if (opts.transport) {
    return {
      factory: webSocketFactoryOver(opts.transport, {
        frameBytesMax: REPLICA_FRAME_BYTES_MAX, connectTimeoutMs: REPLICA_CONNECT_TIMEOUT_MS,
        ...(s.outboundAddress !== undefined ? { localAddress: s.outboundAddress } : {}), ...(s.tls ? { tls: s.tls } : {}),
      }),
    };
  }
  return s.outboundAddress !== undefined || s.tls ? { factory: replicaLinkFactory(s.outboundAddress, s.tls) } : {};
}

/** SCRAM credentials as the mechanisms want them, read from the current metadata image. */
function credentialLookup(image: () => MetadataImage): CredentialLookup {
  return (user, mechanism) => {
    const c = image().scramCredential(user, SCRAM_MECHANISM_IDS[mechanism]);
    return c ? { mechanism, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey, iterations: c.iterations } : undefined;
  };
}

/** The two listeners' SASL gates: the WebSocket one always, the Kafka one on SASL_* only. */
function saslGates(s: BrokerSettings, image: () => MetadataImage, time: { clock: Clock; scheduler: Scheduler }, log: Logger): { ws: SaslGate; kafka: SaslGate | undefined } {
  const cfg = s.sasl ?? { interBroker: null, mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'], plainWithoutTls: false, reauthMs: 0, authTimeoutMs: 10_000, wsRequired: false, oauth: null };
  const base: Omit<SaslSettings, 'required'> = {
    mechanisms: cfg.mechanisms, plainWithoutTls: cfg.plainWithoutTls, reauthMs: cfg.reauthMs, authTimeoutMs: cfg.authTimeoutMs,
    credentials: credentialLookup(image), jwt: cfg.oauth ? jwtValidatorFrom(cfg.oauth) : null, nonce: scramNonce,
  };
  const protocol = s.kafkaListen?.securityProtocol ?? 'PLAINTEXT';
  const gate = (required: boolean, component: string, clientCertAuthenticates: boolean): SaslGate =>
    new SaslGate({ ...base, required, clientCertAuthenticates }, time.clock, time.scheduler, log.child({ component }));
  // On the WebSocket listener a verified client certificate is a login (nodes and the CLI use theirs); Kafka's SASL_SSL wants SASL.
  return { ws: gate(cfg.wsRequired, 'ws-sasl', true), kafka: protocol.startsWith('SASL_') ? gate(true, 'kafka-sasl', false) : undefined };
}

export interface BrokerOptions {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly dataDir: string;
  readonly settings: BrokerSettings;
  readonly metadata: MetadataStateMachine;
  readonly controllerId: () => number;
  /** Calls to the active controller for this broker's own business (heartbeats, AlterPartition): short timeouts. */
  readonly control: ControllerCall;
  /** Admin requests forwarded for clients (topics, configs, reassignments). */
  readonly admin: ControllerCall;
  /** Further endpoints to register (e.g. this node's CONTROLLER listener, for observers). */
  readonly extraEndpoints?: readonly Endpoint[];
  readonly rng: Rng;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** The disk the partition logs live on. */
  readonly fs: FileSystem;
  /**
   * The network the client listener listens on and replica fetchers dial
   * through (the simulation's in-memory one); absent, WebSockets.
   */
  readonly transport?: Transport;
  readonly logger: Logger;
  /** Metrics hooks (metrics.ts); absent, nothing is measured. */
  readonly instrument?: BrokerInstrumentation;
  /** ACL enforcement on both client listeners (docs/security.md); absent: every request allowed. */
  readonly authorizer?: AuthorizerConfig | null;
}

/** Where metrics watch the broker: its request handler, and ISR changes the controller accepted. */
export interface BrokerInstrumentation {
  wrapHandler(handler: RequestHandler): RequestHandler;
  onIsrChange(oldSize: number, newSize: number): void;
  /** A client quota throttled a request (quotas.ts). */
  onThrottle?: ThrottleObserver;
}

export interface Broker {
  readonly url: string;
  /** The Kafka listener's advertised PROTOCOL://host:port (PLAINTEXT, SSL, ...), null without one. */
  readonly kafkaUrl: string | null;
  readonly lifecycle: BrokerLifecycle;
  readonly replicas: ReplicaManager;
  readonly logs: LogManager;
  readonly groups: GroupCoordinator;
  readonly transactions: TransactionCoordinator;
  /** Controlled shutdown (leaderships handed over first unless `controlled` is false), then close. */
  stop(opts?: { controlled?: boolean }): Promise<void>;
}

/** The authorizer over the current image's ACLs, made again only when the ACLs change. */
export function authorizerOver(config: AuthorizerConfig, image: () => MetadataImage): () => Authorizer {
  let last: Authorizer | undefined;
  return () => {
    const index = image().aclIndex();
    if (!last || last.acls !== index) last = new Authorizer(config, index);
    return last;
  };
}

export async function startBroker(opts: BrokerOptions): Promise<Broker> {
  const log = opts.logger;
  const s = opts.settings;
  const logs = LogManager.open({
    dataDir: opts.dataDir, logConfig: s.logConfig, clock: opts.clock, scheduler: opts.scheduler, fs: opts.fs, logger: log, ...(s.logManagerConfig ? { managerConfig: s.logManagerConfig } : {}),
  });
  // The lifecycle needs the bound URL, so it is made after the listener; the replica manager reads its epoch later.
  // The verifier needs the transaction coordinator, which needs the replica manager: both read it through ref.
  const ref: { lifecycle?: BrokerLifecycle; verifier?: TxnVerifier } = {};
  const replicas = new ReplicaManager({
    brokerId: opts.nodeId, logs, brokerLogConfig: s.logConfig, clock: opts.clock, scheduler: opts.scheduler, logger: log.child({ component: 'replicas' }),
    replicaLagTimeMaxMs: s.replicaLagTimeMaxMs, durability: s.durability,
    alterPartition: (req) => alterPartition(opts, req),
    brokerEpoch: () => ref.lifecycle?.epoch ?? -1,
    txnVerifier: () => ref.verifier,
    fetcher: {
      ...fetcherFactory(opts),
      onLeaderLink: (leaderId, reachable) => ref.lifecycle?.leaderLink(leaderId, reachable), // fast failover: heartbeats report dead leaders
      ...(s.sasl?.interBroker ? { sasl: s.sasl.interBroker } : {}),
    },
  });
  // Follows this broker's leadership of __consumer_offsets partitions from the replica manager's first image on.
  const groups = new GroupCoordinator({
    brokerId: opts.nodeId, replicas, image: () => opts.metadata.image, admin: opts.admin, clock: opts.clock, scheduler: opts.scheduler, rng: opts.rng.fork(),
    logger: log.child({ component: 'groups' }), txnVerifier: () => ref.verifier ?? null,
  });
  groups.start();
  const producerIds = new ProducerIdManager({
    brokerId: opts.nodeId, brokerEpoch: () => ref.lifecycle?.epoch ?? -1, control: opts.control, logger: log.child({ component: 'producer-ids' }),
  });
  // The transaction coordinator's calls to other brokers (markers, KIP-890 checks), dialled as the replica fetchers dial leaders.
  const links = new BrokerLinks({
    brokerId: opts.nodeId, image: () => opts.metadata.image, ...fetcherFactory(opts), ...(s.sasl?.interBroker ? { sasl: s.sasl.interBroker } : {}),
    scheduler: opts.scheduler, logger: log.child({ component: 'broker-links' }),
  });
  // Follows this broker's leadership of __transaction_state partitions, as the group coordinator does.
  const transactions = new TransactionCoordinator({
    brokerId: opts.nodeId, replicas, image: () => opts.metadata.image, admin: opts.admin, producerIds, markers: markerChannel(opts.nodeId, replicas, links),
    clock: opts.clock, scheduler: opts.scheduler, rng: opts.rng.fork(), logger: log.child({ component: 'transactions' }),
    ensureOffsetsTopic: () => groups.ensureOffsetsTopic(),
  });
  ref.verifier = new TransactionVerifier(opts.nodeId, transactions, links);
  transactions.start();
  const gates = saslGates(s, () => opts.metadata.image, opts, log);
  const apiDeps: BrokerApiDeps = {
    image: () => opts.metadata.image, controllerId: opts.controllerId, replicas, controller: opts.admin, sasl: gates.ws,
    logDirs: (req) => describeLogDirs(logs, req),
    producerIds,
    groups,
    transactions,
    txnOffsets: groups,
    txnMarkers: { writeTxnMarkers: async (req) => replicas.writeTxnMarkers(req) },
    ...(opts.authorizer ? { authorizer: authorizerOver(opts.authorizer, () => opts.metadata.image) } : {}),
  };
  const quotas = new ClientQuotas(opts.clock, s.quotaWindows ?? DEFAULT_QUOTA_WINDOWS, opts.instrument?.onThrottle);
  quotas.applyImage(opts.metadata.image);
  const unsubscribeQuotas = opts.metadata.subscribe((image, changes) => {
    if (changes === null || changes.clientQuotas) quotas.applyImage(image);
  });
  const api = quotas.wrapHandler(createBrokerApi(apiDeps));
  const handler = opts.instrument ? opts.instrument.wrapHandler(api) : api;
  const listenerTls = s.listenTls ? s.tls : undefined;
  const listener = new WsServer(handler, log.child({ component: 'listener' }), s.connectionLimits ?? DEFAULT_CONNECTION_LIMITS, brokerResponseEncoder, listenerTls, (conn, protocols) => {
    const close = gates.ws.open(conn);
    bearerOnConnect(gates.ws, conn, protocols);
    return close;
  }, opts.scheduler, opts.transport);
  const kafkaLog = log.child({ component: 'kafka-listener' });
  const kafkaTls = s.kafkaListen && usesTls(s.kafkaListen.securityProtocol) ? s.tls : undefined;
  const kafkaGate = gates.kafka;
  const kafkaListener = s.kafkaListen
    ? new KafkaServer(
      createKafkaFrameHandler({ ...apiDeps, sasl: kafkaGate, autoCreateTopics: s.autoCreateTopics ?? true, quotas }, kafkaLog), kafkaLog, s.kafkaLimits ?? DEFAULT_KAFKA_LIMITS,
      kafkaTls, kafkaGate ? (conn) => kafkaGate.open(conn) : undefined,
    )
    : null;
  let bound;
  let kafkaUrl: string | null = null;
  try {
    bound = await listener.listen(s.listen);
    if (kafkaListener && s.kafkaListen) {
      const k = await kafkaListener.listen(s.kafkaListen);
      kafkaUrl = kafkaEndpointUrl(s.kafkaAdvertised?.host ?? k.host, s.kafkaAdvertised?.port ?? k.port, s.kafkaListen.securityProtocol);
    }
  } catch (err) {
    await listener.close().catch(() => undefined);
    transactions.stop();
    links.close();
    groups.stop();
    logs.close();
    throw err;
  }
  const url = s.advertisedUrl ?? `${listenerTls ? 'wss' : 'ws'}://${bound.host}:${bound.port}`;
  replicas.start();
  logs.start();
  const lc = new BrokerLifecycle({
    brokerId: opts.nodeId, clusterId: opts.clusterId, rack: s.rack ?? null,
    endpoints: [{ name: BROKER_ENDPOINT, url }, ...(kafkaUrl ? [{ name: KAFKA_ENDPOINT, url: kafkaUrl }] : []), ...(opts.extraEndpoints ?? [])],
    call: opts.control, metadataOffset: () => opts.metadata.image.offset, rng: opts.rng, scheduler: opts.scheduler,
    logger: log.child({ component: 'lifecycle' }), heartbeatIntervalMs: s.heartbeatIntervalMs,
  });
  ref.lifecycle = lc;
  // Replicas act on the image only once the controller saw this broker catch
  // up with the metadata log: a restarted node's own stale image may still
  // name it leader of partitions that moved on while it was down.
  let unsubscribe = (): void => undefined;
  let stopped = false;
  void lc.when('running').then(() => {
    if (stopped) return;
    replicas.applyImage(opts.metadata.image, null);
    unsubscribe = opts.metadata.subscribe((image, changes) => replicas.applyImage(image, changes));
    const n = replicas.deleteStrayLogs(opts.metadata.image);
    if (n > 0) log.info({ deleted: n }, 'deleted logs of partitions no longer assigned here');
  });
  lc.start();
  log.info({ url, ...(kafkaUrl ? { kafkaUrl } : {}) }, 'broker listener up');

  let stopping: Promise<void> | undefined;
  const stop = ({ controlled = true } = {}): Promise<void> => {
    stopping ??= (async () => {
      if (controlled) await lc.shutdown();
      else lc.stop();
      stopped = true;
      unsubscribe();
      unsubscribeQuotas();
      transactions.stop();
      links.close();
      groups.stop();
      await replicas.stop();
      await listener.close();
      await kafkaListener?.close();
      logs.close();
    })();
    return stopping;
  };
  return { url, kafkaUrl, lifecycle: lc, replicas, logs, groups, transactions, stop };
}
