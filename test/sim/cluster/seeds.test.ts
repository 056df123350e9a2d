// The cluster simulation's slice of `make test`: SEEDS seeds (at least 200)
// of the whole cluster under the seeded fault mix, each checked on the fly
// and at the end, and a replay check (one seed run twice gives the same
// trace digest: `make sim SEED=x` replays bit for bit). Prints the rate.
import { expect } from 'chai';
import { PROFILES, formatFailure, formatLine, runSeed, type SeedResult } from './run.js';

const SEEDS = Number(process.env.SLUICE_TEST_CLUSTER_SEEDS || 200);
const FIRST = 1_000_001;
/** make test's seeds: a small world each (run.ts PROFILES.small). */
const SMALL = { ...PROFILES.small, profile: 'small' } as const;
describe('cluster simulation: seeds in make test', function () {
  this.timeout(0);

  it('replays a seed bit for bit (same seed, same trace digest)', async () => {
    const a = await runSeed({ seed: 42, ...SMALL });
    const b = await runSeed({ seed: 42, ...SMALL });
    expect(a.error, a.error ?? '').to.equal(null);
    expect(b.digest).to.equal(a.digest);
    expect(b.events).to.equal(a.events);
    const c = await runSeed({ seed: 43, ...SMALL });
    expect(c.digest, 'another seed, another history').to.not.equal(a.digest);
  });

  it(`${SEEDS} seeds keep every invariant`, async () => {
    const failures: SeedResult[] = [];
    const started = performance.now();
    let acks = 0;
    for (let i = 0; i < SEEDS; i++) {
      const r = await runSeed({ seed: FIRST + i, ...SMALL });
      acks += r.stats?.acksChecked ?? 0;
      if (!r.ok) {
        failures.push(r);
        console.log(`      ${formatLine(r)}`);
      }
    }
    const s = (performance.now() - started) / 1000;
    console.log(`      ${SEEDS} seeds in ${s.toFixed(1)} s (${(SEEDS / s * 3600).toFixed(0)} seeds/hour), ${acks} acknowledged writes checked`);
    for (const f of failures.slice(0, 3)) console.log(formatFailure(f));
    expect(failures.map((f) => `seed ${f.seed}: ${f.anomalies[0]?.type ?? f.error?.split('\n')[0]}`)).to.deep.equal([]);
  });
});
