// The simulated world the cluster runs in: lane transport's in-memory network
// and, per node, a disk. Importing this module makes it startCluster's
// default world.
//
// The disk: until lane fs's simulated disk (sim-fs.ts) is wired here, each
// node gets a private directory on the real disk under the OS temp dir,
// removed when the cluster stops — it has no crash semantics (nothing is
// lost at a crash), and its async fsyncs are real I/O, the one thing that
// can still make two runs of a seed differ.

import * as nodeFs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/util/file-system.js';
import { SimNetwork } from './sim-network.js';
import { setDefaultWorld, type ClusterDisk, type WorldFactory } from './cluster.js';

let runs = 0;

function tempDisk(host: string, root: string): ClusterDisk {
  const dataDir = path.join(root, host);
  nodeFs.mkdirSync(dataDir, { recursive: true });
  return {
    fs: NodeFileSystem, dataDir,
    crash: () => undefined,
    setSlow: () => undefined,
    dispose: () => nodeFs.rmSync(dataDir, { recursive: true, force: true }),
  };
}

export const SIM_WORLD: WorldFactory = {
  // Called once per cluster, before its disks: a fresh temp root per cluster.
  network: (opts) => {
    runs++;
    return new SimNetwork({ clock: opts.clock, scheduler: opts.scheduler, rng: opts.rng, trace: opts.trace });
  },
  disk: (opts) => tempDisk(opts.host, path.join(os.tmpdir(), `sluice-sim-${process.pid}`, String(runs))),
};

setDefaultWorld(SIM_WORLD);
