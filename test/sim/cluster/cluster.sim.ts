// Long whole-cluster simulation runs (`make sim`), outside `make test`:
//   make sim                 SLUICE_SIM_SEEDS seeds (default 200) from SLUICE_SIM_FIRST (default 1)
//   make sim SEEDS=5000      more seeds
//   make sim SEED=1234       replay one seed bit for bit, with its full trace
//   SLUICE_SIM_PROFILE=small|mutant make sim SEED=1234   a seed of make test's or the mutants' shape
// Each failing seed prints its report (run.ts formatFailure): the seed, the
// replay command, the anomalies, the fault plan and the trace's tail.
import { expect } from 'chai';
import { PROFILES, formatFailure, formatLine, runSeed, seedsFromEnv, type ProfileName, type SeedResult } from './run.js';

const FAILURES_SHOWN = 5;

describe('cluster simulation (long runs)', function () {
  this.timeout(0);
  const seeds = seedsFromEnv(200);
  const one = process.env.SLUICE_SIM_SEED !== undefined && process.env.SLUICE_SIM_SEED !== '';
  const profile = (process.env.SLUICE_SIM_PROFILE || 'long') as ProfileName;
  if (!(profile in PROFILES)) throw new Error(`SLUICE_SIM_PROFILE must be one of ${Object.keys(PROFILES).join(', ')}`);

  it(one ? `replays seed ${seeds[0]}` : `${seeds.length} seeds from ${seeds[0]} keep every invariant`, async () => {
    const failures: SeedResult[] = [];
    const started = performance.now();
    let simMs = 0;
    for (const [i, seed] of seeds.entries()) {
      const r = await runSeed({ seed, ...PROFILES[profile], profile, fullTrace: one, ...(one ? { traceTail: 1_000_000 } : {}) });
      simMs += r.simMs;
      if (one) console.log(formatFailure(r));
      else if (!r.ok) console.log(formatLine(r));
      if (!r.ok) failures.push(r);
      if ((i + 1) % 50 === 0) {
        const s = (performance.now() - started) / 1000;
        console.log(`  ${i + 1} seeds, ${failures.length} failed, ${s.toFixed(0)} s (${((i + 1) / s * 3600).toFixed(0)} seeds/hour, ${(simMs / 1000 / s).toFixed(1)}x real time)`);
      }
    }
    if (!one) for (const f of failures.slice(0, FAILURES_SHOWN)) console.log(`\n${formatFailure(f)}`);
    expect(failures.map((f) => `seed ${f.seed}: ${f.anomalies[0]?.type ?? f.error?.split('\n')[0]}`)).to.deep.equal([]);
  });
});
