// The shared body of the long simulation runs (`make sim`), outside
// `make test` (its glob is *.test.js):
//   make sim                 SLUICE_SIM_SEEDS seeds (default 2000), from seed 1
//   make sim SEEDS=5000      more seeds
//   make sim SEED=1234       replay one seed and print its full trace
// Env: SLUICE_SIM_SEEDS (count), SLUICE_SIM_SEED (one seed), SLUICE_SIM_FIRST
// (first seed of a range, default 1), SLUICE_SIM_TRACE=1 (print the full trace
// of a failing seed).
import { expect } from 'chai';
import { SimFailure } from './cluster.js';

export interface LongRun {
  /** Suite title, e.g. 'raft simulation'. */
  readonly name: string;
  /** What a seed exercises, printed before a replay. */
  readonly describeSeed: (seed: number) => string;
  /** Runs one seed; throws SimFailure on a broken invariant. */
  readonly runSeed: (seed: number, options?: { fullTrace: boolean; onTrace: (lines: string[]) => void }) => unknown;
}

const FAILURES_SHOWN = 10;

export function defineLongRun(run: LongRun): void {
  const one = process.env.SLUICE_SIM_SEED;
  const count = Number(process.env.SLUICE_SIM_SEEDS || 2000);
  const first = Number(process.env.SLUICE_SIM_FIRST || 1);

  describe(`${run.name} (long runs)`, function () {
    this.timeout(0);

    if (one !== undefined && one !== '') {
      it(`replays seed ${one}`, () => {
        const seed = Number(one);
        console.log(`seed ${seed}: ${run.describeSeed(seed)}`);
        const report = run.runSeed(seed, { fullTrace: true, onTrace: (lines) => console.log(lines.join('\n')) });
        console.log(JSON.stringify({ ...(report as object), profile: undefined }, null, 2));
      });
      return;
    }

    it(`${count} seeds from ${first} keep every invariant and make progress once healed`, () => {
      const failures: SimFailure[] = [];
      const started = Date.now();
      for (let seed = first; seed < first + count; seed++) {
        try {
          run.runSeed(seed);
        } catch (err) {
          if (!(err instanceof SimFailure)) throw err;
          failures.push(err);
          console.log(`seed ${seed} FAILED: ${err.invariant}: ${err.detail.split('\n')[0]}`);
        }
        if ((seed - first + 1) % 500 === 0) console.log(`  ${seed - first + 1} seeds, ${failures.length} failed, ${Math.round((Date.now() - started) / 1000)} s`);
      }
      for (const f of failures.slice(0, FAILURES_SHOWN)) console.log(`\n${f.message}`);
      expect(failures.map((f) => `seed ${f.seed}: ${f.invariant}`)).to.deep.equal([]);
    });
  });
}
