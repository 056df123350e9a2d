// Long runs of the real-shell Raft simulation (raft-node-sim.ts), picked up by
// `make sim` (its glob is *.sim.js), outside `make test`:
//   SLUICE_SIM_SHELL_SEEDS=N   seeds from SLUICE_SIM_FIRST (default 1); default 100
//                              (about 2 s a seed on a loaded 2-core machine)
//   SLUICE_SIM_SEED=S          replays one seed and prints its full trace
import { expect } from 'chai';
import { RaftNodeSimFailure, runRaftNodeSeed } from './raft-node-sim.js';

const one = process.env.SLUICE_SIM_SEED;
const count = Number(process.env.SLUICE_SIM_SHELL_SEEDS || 100);
const first = Number(process.env.SLUICE_SIM_FIRST || 1);

describe('raft simulation of the real shell (long runs)', function () {
  this.timeout(0);

  if (one !== undefined && one !== '') {
    it(`replays seed ${one}`, async () => {
      try {
        console.log(JSON.stringify(await runRaftNodeSeed(Number(one), { fullTrace: true }), null, 2));
      } catch (err) {
        if (err instanceof RaftNodeSimFailure) console.log(err.traceTail.join('\n'));
        throw err;
      }
    });
    return;
  }

  it(`${count} seeds from ${first} keep every invariant and make progress once healed`, async () => {
    const failed: string[] = [];
    const started = Date.now();
    for (let seed = first; seed < first + count; seed++) {
      try {
        await runRaftNodeSeed(seed);
      } catch (err) {
        if (!(err instanceof RaftNodeSimFailure)) throw err;
        failed.push(`seed ${seed}: ${err.invariant}`);
        console.log(err.message);
      }
    }
    const seconds = (Date.now() - started) / 1000;
    console.log(`  ${count} seeds in ${Math.round(seconds)} s (${(count / seconds).toFixed(2)} seeds/s), ${failed.length} failed`);
    expect(failed).to.deep.equal([]);
  });
});
