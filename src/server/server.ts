// Composition and lifecycle of one node: data dir → metadata log (RaftDisk,
// inside RaftNode) → metadata state machine → controller listener + peer
// links → Raft driver → the controller (active while this node leads) and its
// request API → with the broker role, the broker (broker.ts) fed by the same
// metadata image, reaching the active controller through a QuorumClient.
// With --raft-only the state machine is a digest of raw proposals and no
// controller runs (for measuring consensus alone).
//
// Startup either completes or undoes itself: a failure at any step (port in
// use, unusable data dir, corrupt log) closes what was opened and releases
// the data-dir lock before the error reaches the caller.
// stop() is a controlled shutdown: the broker's first (its leaderships move
// while the controller still runs), then Raft leadership is handed off when
// this node leads, then the transport and the disk close, then the lock goes.

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import { randomInt } from 'node:crypto';
import type { Logger } from '../util/logger.js';
import { SeededRng } from '../util/rng.js';
import { LogDigestStateMachine } from '../raft-node/log-digest-state-machine.js';
import { RaftNode } from '../raft-node/node.js';
import { RaftTransport } from '../raft-node/transport.js';
import { createClientService, type ControllerCallHandler } from '../raft-node/client-service.js';
import type { StateMachine } from '../raft-node/state-machine.js';
import { MetadataStateMachine } from '../metadata/state-machine.js';
import { QuorumController } from '../controller/service/quorum-controller.js';
import { createControllerApi } from '../controller/service/controller-api.js';
import { withDescribeQuorum } from '../raft-node/describe-quorum.js';
import { authorizeControllerCalls } from './access-control.js';
import { SystemClock, SystemScheduler } from '../util/clock.js';
import { WsTransport } from '../net/ws-transport.js';
import type { NodeEnvironment } from './environment.js';
import { NodeFileSystem } from '../util/file-system.js';
import { TlsContext } from '../net/tls.js';
import { QuorumClient } from '../raft-node/quorum-client.js';
import { authorizerOver, startBroker, type Broker } from './broker.js';
import { syncObserverPeers } from './observer-peers.js';
import { offerClusterDefaults } from './cluster-defaults.js';
import { METADATA_ENDPOINT } from '../raft-node/observers.js';
import { NodeMetrics, nodeSources } from './metrics.js';
import { readiness, startMetricsServer, type MetricsServer } from './metrics-http.js';
import type { MetadataImage } from '../metadata/image.js';
import { BROKER_ENDPOINT } from '../replication/replica-fetcher.js';

/** Request timeout of a broker's heartbeats and AlterPartition calls (well under broker.session.timeout.ms). */
const CONTROL_REQUEST_TIMEOUT_MS = 2_000;
import { deriveClusterId, type ServerConfig } from './config.js';
import { lockDataDir, prepareDataDir, type MetaProperties } from './data-dir.js';

export interface Server {
  readonly meta: MetaProperties;
  readonly node: RaftNode;
  /** The metadata image's state machine (absent with --raft-only): what this node's replay has applied. */
  readonly metadata: MetadataStateMachine | undefined;
  /** The controller (absent with --raft-only). */
  readonly controller: QuorumController | undefined;
  /** The broker (present with the broker role). */
  readonly broker: Broker | undefined;
  readonly transport: RaftTransport;
  /** The HTTP listener: metrics, health, the web console (present with --http-listen). */
  readonly metrics: MetricsServer | undefined;
  /** Resolves when the node fails (a disk error or broken invariant); the process should exit non-zero. */
  readonly failed: Promise<Error>;
  stop(opts?: { transferLeadership?: boolean }): Promise<void>;
}

/**
 * The environment a node runs in; each part absent takes the process's own
 * (system clock and timers, a generator seeded from the OS, WebSockets). The
 * cluster simulation passes all of them.
 */
export type NodeEnvironmentInput = Partial<NodeEnvironment> & { readonly logger?: Logger };

/** Fills the parts of an environment the caller left out with the process's own. */
function composeEnvironment(injected: NodeEnvironmentInput): NodeEnvironment & { readonly seed: number | undefined } {
  const seed = injected.rng ? undefined : randomSeed();
  return {
    clock: injected.clock ?? SystemClock,
    scheduler: injected.scheduler ?? SystemScheduler,
    rng: injected.rng ?? new SeededRng(seed!),
    transport: injected.transport ?? new WsTransport(),
    fs: injected.fs ?? NodeFileSystem,
    lockDataDir: injected.lockDataDir ?? lockDataDir,
    seed,
  };
}

/** The one place a node draws an OS-random seed (the process entry's composition); a simulation injects its rng. */
function randomSeed(): number {
  return randomInt(0, 2 ** 31);
}

export async function startServer(cfg: ServerConfig, logger: Logger, injected: NodeEnvironmentInput = {}): Promise<Server> {
  const env = composeEnvironment(injected);
  const { clock, scheduler, rng, seed } = env;
  const log = (injected.logger ?? logger).child({ nodeId: cfg.nodeId });
  const clusterId = cfg.clusterId !== undefined ? { value: cfg.clusterId, explicit: true } : { value: deriveClusterId(cfg.quorum), explicit: false };
  const dir = prepareDataDir(cfg.dataDir, cfg.nodeId, clusterId, log.child({ component: 'data-dir' }), env.fs);
  const unlock = env.lockDataDir(cfg.dataDir, log);
  const voters = cfg.quorum.map((v) => v.id);
  const isVoter = voters.includes(cfg.nodeId);
  log.info({ clusterId: dir.meta.clusterId, roles: cfg.roles, seed, metadata: isVoter ? 'voter' : 'observer' }, 'starting node');
  if (!isVoter && cfg.roles.includes('controller')) {
    log.info({ nodeId: cfg.nodeId }, 'not in --controller-quorum: following the metadata log until `sluice cluster add-controller` promotes this node');
  }

  let tls: TlsContext | undefined;
  try {
    tls = cfg.tls ? new TlsContext(cfg.tls, log.child({ component: 'tls' }), scheduler) : undefined;
  } catch (err) {
    unlock();
    throw err;
  }
  tls?.start();
  // A broker-only node dials the voters too: it follows the metadata log as an observer.
  const peers = new Map(cfg.quorum.filter((v) => v.id !== cfg.nodeId).map((v) => [v.id, v.url] as const));
  const transport = new RaftTransport({
    nodeId: cfg.nodeId, clusterId: dir.meta.clusterId, listen: cfg.controllerListen, peers,
    limits: cfg.transportLimits, rng: rng.fork(), logger: log.child({ component: 'transport' }), transport: env.transport, clock, scheduler,
    ...(cfg.outboundAddress !== undefined ? { localAddress: cfg.outboundAddress } : {}),
    ...(tls && cfg.controllerListen.url.startsWith('wss:') ? { tls } : {}),
  });
  let node: RaftNode;
  const metadata = cfg.raftOnly ? undefined : new MetadataStateMachine();
  const sm: StateMachine = metadata ?? new LogDigestStateMachine();
  try {
    await transport.listen();
    node = RaftNode.start({
      id: cfg.nodeId, voters, raftDir: dir.raftDir, stateMachine: sm, transport,
      limits: cfg.nodeLimits, rng: rng.fork(), clock, scheduler, fs: env.fs, logger: log.child({ component: 'raft-node' }),
      endpoints: new Map(cfg.quorum.map((v) => [v.id, v.url] as const)),
    });
  } catch (err) {
    await transport.close();
    tls?.stop();
    unlock();
    throw err;
  }
  const metrics = cfg.httpListen ? new NodeMetrics() : undefined;
  let controller: QuorumController | undefined;
  let controllerApi: ControllerCallHandler | undefined;
  if (metadata && cfg.roles.includes('controller')) {
    controller = new QuorumController({
      quorum: metrics ? metrics.timeProposals(node) : node, metadata, clusterId: dir.meta.clusterId, clock, scheduler, rng: rng.fork(),
      logger: log.child({ component: 'controller' }), endpoints: new Map(cfg.quorum.map((v) => [v.id, v.url] as const)),
    });
    controllerApi = withDescribeQuorum(createControllerApi(controller), node);
  } else if (metadata) {
    // A broker-only node: controller calls that reach it are sent on to the active controller by the hint.
    controllerApi = () => Promise.reject(node.notController('this node runs no controller'));
  }
  if (controllerApi && metadata && cfg.authorizer) controllerApi = authorizeControllerCalls(controllerApi, authorizerOver(cfg.authorizer, () => metadata.image));
  transport.start({ onRaftMessage: (m) => node.receive(m), onClientRequest: createClientService(node, sm, controllerApi) });
  // Controllers dial every metadata follower (a joining controller too: it may lead once promoted).
  const unsyncPeers = metadata && cfg.roles.includes('controller')
    ? syncObserverPeers({ metadata, transport, nodeId: cfg.nodeId, voters, logger: log.child({ component: 'observer-peers' }) })
    : undefined;
  const failed = new Promise<Error>((resolve) => node.once('fatal', resolve));
  const clients: QuorumClient[] = [];
  const quorumClient = (requestTimeoutMs?: number): QuorumClient => {
    const c = new QuorumClient({
      endpoints: cfg.quorum.map((v) => v.url), clusterId: dir.meta.clusterId, rng: rng.fork(),
      logger: log.child({ component: 'quorum-client' }), ...(requestTimeoutMs ? { limits: { requestTimeoutMs } } : {}),
      transport: env.transport, clock, scheduler,
      ...(cfg.outboundAddress !== undefined ? { localAddress: cfg.outboundAddress } : {}),
      ...(tls ? { tls } : {}),
    });
    clients.push(c);
    return c;
  };
  const closeDown = async (opts: { transferLeadership?: boolean }): Promise<void> => {
    for (const c of clients) c.close();
    unsyncPeers?.();
    controller?.stop();
    tls?.stop();
    await node.stop(opts).finally(unlock);
  };
  let broker: Broker | undefined;
  if (cfg.broker && metadata) {
    // Heartbeats and AlterPartition must not wait long on a silent controller:
    // well within the session timeout they give up and try the next one.
    const control = quorumClient(CONTROL_REQUEST_TIMEOUT_MS);
    const admin = quorumClient();
    try {
      broker = await startBroker({
        nodeId: cfg.nodeId, clusterId: dir.meta.clusterId, dataDir: cfg.dataDir, metadata, rng: rng.fork(), clock, scheduler, fs: env.fs,
        ...(injected.transport ? { transport: env.transport } : {}),
        settings: {
          listen: cfg.broker.listen, replicaLagTimeMaxMs: cfg.broker.replicaLagTimeMaxMs, durability: cfg.broker.durability, logConfig: cfg.broker.logConfig, logManagerConfig: cfg.broker.logManagerConfig,
          ...(cfg.broker.advertisedUrl !== undefined ? { advertisedUrl: cfg.broker.advertisedUrl } : {}),
          ...(cfg.outboundAddress !== undefined ? { outboundAddress: cfg.outboundAddress } : {}),
          ...(cfg.broker.kafkaListen !== undefined ? { kafkaListen: cfg.broker.kafkaListen } : {}),
          ...(cfg.broker.kafkaAdvertised !== undefined ? { kafkaAdvertised: cfg.broker.kafkaAdvertised } : {}),
          autoCreateTopics: cfg.broker.autoCreateTopics,
          ...(tls ? { tls, listenTls: cfg.broker.listen.url.startsWith('wss:') } : {}),
          sasl: cfg.broker.sasl,
          quotaWindows: cfg.broker.quotaWindows,
        },
        controllerId: () => node.status().leader,
        control: (api, body) => control.controller(api, body),
        admin: (api, body) => admin.controller(api, body),
        extraEndpoints: [{ name: METADATA_ENDPOINT, url: cfg.advertisedControllerUrl ?? cfg.controllerListen.url }],
        logger: log.child({ component: 'broker' }),
        ...(metrics ? { instrument: metrics } : {}),
        authorizer: cfg.authorizer,
      });
    } catch (err) {
      await closeDown({});
      throw err;
    }
  }
  let metricsServer: MetricsServer | undefined;
  if (metrics && cfg.httpListen) {
    try {
      metricsServer = await serveHttp(metrics, cfg, { node, metadata, controller, broker }, log, tls);
    } catch (err) {
      await broker?.stop({ controlled: false }).catch(() => undefined);
      await closeDown({});
      throw err;
    }
  }
  let stopping: Promise<void> | undefined;
  if (metadata && Object.keys(cfg.clusterDefaults).length > 0) {
    const seeding = quorumClient();
    void offerClusterDefaults(cfg.clusterDefaults, (api, body) => seeding.controller(api, body), log.child({ component: 'cluster-defaults' }), { clock, scheduler }, { stopped: () => stopping !== undefined });
  }
  const stop = (opts: { transferLeadership?: boolean } = {}): Promise<void> => {
    stopping ??= (async () => {
      try {
        await metricsServer?.close();
        await broker?.stop({ controlled: opts.transferLeadership !== false });
      } finally {
        await closeDown(opts);
      }
    })();
    return stopping;
  };
  return { meta: dir.meta, node, metadata, controller, broker, transport, metrics: metricsServer, failed, stop };
}

/** Starts the HTTP listener: scrape sources and readiness read the node's parts; the console's config reads the image. */
async function serveHttp(
  metrics: NodeMetrics, cfg: ServerConfig, parts: Parameters<typeof nodeSources>[0], log: Logger, tls: TlsContext | undefined,
): Promise<MetricsServer> {
  const sources = nodeSources(parts);
  metrics.attach(sources);
  const listen = cfg.httpListen!;
  const own = cfg.broker ? cfg.broker.advertisedUrl ?? cfg.broker.listen.url : undefined;
  const server = await startMetricsServer({
    host: listen.host, port: listen.port, metrics, logger: log.child({ component: 'http' }),
    ...(listen.url.startsWith('https:') && tls ? { tls } : {}),
    readiness: () => {
      const r = sources.raft();
      return readiness({ leader: r.leader, commit: r.commit, applied: r.applied, brokerState: sources.broker?.state() });
    },
    console: {
      config: () => ({ nodeId: cfg.nodeId, admin: cfg.consoleAdmin, bootstrap: consoleBootstrap(own, parts.metadata?.image), sasl: consoleSasl(cfg) }),
    },
  });
  // "metrics listener up" was this line's message before the console; tests and scripts read either.
  log.info({ url: server.url, console: `${server.url}/console/`, consoleAdmin: cfg.consoleAdmin }, 'http listener up');
  return server;
}

/** Mechanisms of the broker listener a login form can use: a user name and a password (SCRAM, PLAIN). */
const TYPED_MECHANISMS: ReadonlySet<string> = new Set(['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN']);

function consoleSasl(cfg: ServerConfig): { mechanisms: string[]; required: boolean } | null {
  const sasl = cfg.broker?.sasl;
  if (!sasl) return null;
  // PLAIN sends the password: the listener offers it without TLS only when told to.
  const plainOk = sasl.plainWithoutTls || cfg.broker!.listen.url.startsWith('wss:');
  return { mechanisms: sasl.mechanisms.filter((m) => TYPED_MECHANISMS.has(m) && (m !== 'PLAIN' || plainOk)), required: sasl.wsRequired };
}

/** The console's WebSocket bootstrap: this node's broker listener first, then every live broker's. */
function consoleBootstrap(own: string | undefined, image: MetadataImage | undefined): string[] {
  const urls = new Set<string>(own ? [own] : []);
  for (const b of image?.unfencedBrokers() ?? []) {
    const url = b.endpoints.find((e) => e.name === BROKER_ENDPOINT)?.url;
    if (url) urls.add(url);
  }
  return [...urls];
}
