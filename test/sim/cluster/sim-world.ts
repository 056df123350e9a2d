// The simulated world the cluster runs in: lane transport's in-memory network
// (sim-network.ts) and, per node, lane fs's simulated disk (sim-fs.ts), which
// loses what was not synced at a crash and can tear unsynced tails.
// Importing this module makes it startCluster's default world.

import { SimNetwork } from './sim-network.js';
import { simDisk } from './sim-fs.js';
import { setDefaultWorld, type WorldFactory } from './cluster.js';

export const SIM_WORLD: WorldFactory = {
  network: (opts) => new SimNetwork({ clock: opts.clock, scheduler: opts.scheduler, rng: opts.rng, trace: opts.trace }),
  disk: (opts) => simDisk(opts),
};

setDefaultWorld(SIM_WORLD);
