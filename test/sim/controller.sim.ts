// Long controller simulation runs (`make sim` runs these and raft.sim.ts);
// see long-run.ts for the variables.
import { defineLongRun } from './long-run.js';
import { controllerProfileFor, describeControllerProfile, runControllerSeed } from './controller-sim.js';

defineLongRun({ name: 'controller simulation', describeSeed: (seed) => describeControllerProfile(controllerProfileFor(seed)), runSeed: runControllerSeed });
