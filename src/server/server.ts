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
import { SystemClock } from '../util/clock.js';
import { QuorumClient } from '../raft-node/quorum-client.js';
import { DEFAULT_LOG_CONFIG } from '../storage/log-config.js';
import { startBroker, type Broker } from './broker.js';
import { deriveClusterId, type ServerConfig } from './config.js';
import { lockDataDir, prepareDataDir, type MetaProperties } from './data-dir.js';

export interface Server {
  readonly meta: MetaProperties;
  readonly node: RaftNode;
  /** The controller (absent with --raft-only). */
  readonly controller: QuorumController | undefined;
  /** The broker (present with the broker role). */
  readonly broker: Broker | undefined;
  readonly transport: RaftTransport;
  /** Resolves when the node fails (a disk error or broken invariant); the process should exit non-zero. */
  readonly failed: Promise<Error>;
  stop(opts?: { transferLeadership?: boolean }): Promise<void>;
}

export async function startServer(cfg: ServerConfig, logger: Logger): Promise<Server> {
  const log = logger.child({ nodeId: cfg.nodeId });
  const clusterId = cfg.clusterId !== undefined ? { value: cfg.clusterId, explicit: true } : { value: deriveClusterId(cfg.quorum), explicit: false };
  const dir = prepareDataDir(cfg.dataDir, cfg.nodeId, clusterId, log.child({ component: 'data-dir' }));
  const unlock = lockDataDir(cfg.dataDir, log);
  const seed = randomInt(0, 2 ** 31);
  const rng = new SeededRng(seed);
  log.info({ clusterId: dir.meta.clusterId, roles: cfg.roles, seed }, 'starting node');

  const peers = new Map(cfg.quorum.filter((v) => v.id !== cfg.nodeId).map((v) => [v.id, v.url] as const));
  const transport = new RaftTransport({
    nodeId: cfg.nodeId, clusterId: dir.meta.clusterId, listen: cfg.controllerListen, peers,
    limits: cfg.transportLimits, rng: rng.fork(), logger: log.child({ component: 'transport' }),
  });
  let node: RaftNode;
  const metadata = cfg.raftOnly ? undefined : new MetadataStateMachine();
  const sm: StateMachine = metadata ?? new LogDigestStateMachine();
  try {
    await transport.listen();
    node = RaftNode.start({
      id: cfg.nodeId, voters: cfg.quorum.map((v) => v.id), raftDir: dir.raftDir, stateMachine: sm, transport,
      limits: cfg.nodeLimits, rng: rng.fork(), logger: log.child({ component: 'raft-node' }),
      endpoints: new Map(cfg.quorum.map((v) => [v.id, v.url] as const)),
    });
  } catch (err) {
    await transport.close();
    unlock();
    throw err;
  }
  let controller: QuorumController | undefined;
  let controllerApi: ControllerCallHandler | undefined;
  if (metadata) {
    controller = new QuorumController({
      quorum: node, metadata, clusterId: dir.meta.clusterId, clock: SystemClock, rng: rng.fork(),
      logger: log.child({ component: 'controller' }), endpoints: new Map(cfg.quorum.map((v) => [v.id, v.url] as const)),
    });
    controllerApi = createControllerApi(controller);
  }
  transport.start({ onRaftMessage: (m) => node.receive(m), onClientRequest: createClientService(node, sm, controllerApi) });
  const failed = new Promise<Error>((resolve) => node.once('fatal', resolve));
  let broker: Broker | undefined;
  let quorumClient: QuorumClient | undefined;
  if (cfg.broker && metadata) {
    const qc = new QuorumClient({ endpoints: cfg.quorum.map((v) => v.url), clusterId: dir.meta.clusterId, rng: rng.fork(), logger: log.child({ component: 'quorum-client' }) });
    quorumClient = qc;
    try {
      broker = await startBroker({
        nodeId: cfg.nodeId, clusterId: dir.meta.clusterId, dataDir: cfg.dataDir, metadata, rng: rng.fork(),
        settings: { listen: cfg.broker.listen, replicaLagTimeMaxMs: cfg.broker.replicaLagTimeMaxMs, durability: cfg.broker.durability, logConfig: DEFAULT_LOG_CONFIG },
        controllerId: () => node.status().leader,
        controller: (api, body) => qc.controller(api, body),
        extraEndpoints: [{ name: 'CONTROLLER', url: cfg.controllerListen.url }],
        logger: log.child({ component: 'broker' }),
      });
    } catch (err) {
      qc.close();
      controller?.stop();
      await node.stop({});
      unlock();
      throw err;
    }
  }
  let stopping: Promise<void> | undefined;
  const stop = (opts: { transferLeadership?: boolean } = {}): Promise<void> => {
    stopping ??= (async () => {
      try {
        await broker?.stop({ controlled: opts.transferLeadership !== false });
      } finally {
        quorumClient?.close();
        controller?.stop();
        await node.stop(opts).finally(unlock);
      }
    })();
    return stopping;
  };
  return { meta: dir.meta, node, controller, broker, transport, failed, stop };
}
