// Long Raft simulation runs (`make sim`); see long-run.ts for the variables.
import { defineLongRun } from './long-run.js';
import { describeProfile, profileFor, runSeed } from './random-run.js';

defineLongRun({ name: 'raft simulation', describeSeed: (seed) => describeProfile(profileFor(seed)), runSeed });
