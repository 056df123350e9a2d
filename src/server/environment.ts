// What one node takes from the world it runs in: time, timers, randomness,
// the network and the disk. The process composes the
// real ones once, in startServer (server.ts, a process entry point); the cluster simulation
// (test/sim/cluster/) passes a simulated world instead, so the same
// startServer runs every node of a simulated cluster in one process. Nothing
// below the composition picks a default of its own: each part is handed the
// environment's clock, scheduler, a fork of its rng, its transport and its file system.

import type { Clock, Scheduler } from '../util/clock.js';
import type { Rng } from '../util/rng.js';
import type { Transport } from '../net/transport.js';
import type { Logger } from '../util/logger.js';
import type { FileSystem } from '../util/file-system.js';

export interface NodeEnvironment {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** The node's root generator; each component gets a fork, in a fixed order. */
  readonly rng: Rng;
  /** Every listener and every dial of the node (broker, controller, replica and quorum links). */
  readonly transport: Transport;
  /** The disk: data dir, partition logs, the metadata log (the simulation's loses unsynced writes at a crash). */
  readonly fs: FileSystem;
  /**
   * Takes the data dir for this process (a lock file naming its pid); returns
   * the release. A simulation, where every node is the same process, keeps
   * its own table of locks that a crash clears.
   */
  readonly lockDataDir: (dataDir: string, logger: Logger) => () => void;
}
