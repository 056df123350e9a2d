// The tx_money profile's slice of `make test` (issue 18): SLUICE_TEST_MONEY_SEEDS
// seeds (default 8) of a small world — transfer transactions, zombie
// instances, the exactly-once audit stage and a read_committed reader on the
// real client, under the cluster simulation's faults plus coordinator crashes
// and cut-offs — each checked by the monitors and the money checker, and a
// replay check (one seed twice, one trace digest). Across the seeds the
// coordinator must have been crashed, zombies tried and refused, and inputs
// copied exactly once, or the slice proves nothing.
import { expect } from 'chai';
import { MONEY_PROFILES, formatMoneyFailure, formatMoneyLine, runMoneySeed, type MoneySeedResult } from './money.js';

const SEEDS = Number(process.env.SLUICE_TEST_MONEY_SEEDS || 8);
const FIRST = 1_800_001;
const SMALL = { ...MONEY_PROFILES.small, profile: 'small' } as const;

describe('cluster simulation: tx_money seeds in make test', function () {
  this.timeout(0);

  it('replays a tx_money seed bit for bit', async () => {
    const a = await runMoneySeed({ seed: 18, ...SMALL });
    const b = await runMoneySeed({ seed: 18, ...SMALL });
    expect(a.error, a.error ?? '').to.equal(null);
    expect(b.digest).to.equal(a.digest);
  });

  it(`${SEEDS} tx_money seeds keep every invariant`, async () => {
    const failures: MoneySeedResult[] = [];
    const started = performance.now();
    let zombies = 0;
    let refused = 0;
    let copied = 0;
    let coordinatorCrashes = 0;
    for (let i = 0; i < SEEDS; i++) {
      const r = await runMoneySeed({ seed: FIRST + i, ...SMALL });
      zombies += r.stats?.zombieTxns ?? 0;
      refused += r.stats?.zombieRefused ?? 0;
      copied += r.stats?.eosInputsChecked ?? 0;
      coordinatorCrashes += r.faults?.byKind['coordinator-crash'] ?? 0;
      if (!r.ok) {
        failures.push(r);
        console.log(`      ${formatMoneyLine(r)}`);
      }
    }
    console.log(`      ${SEEDS} tx_money seeds in ${((performance.now() - started) / 1000).toFixed(1)} s: ${zombies} zombie transactions (${refused} refused), ${copied} inputs copied exactly once, ${coordinatorCrashes} coordinator crashes`);
    for (const f of failures.slice(0, 3)) console.log(formatMoneyFailure(f));
    expect(failures.map((f) => `seed ${f.seed}: ${f.anomalies[0]?.type ?? f.error?.split('\n')[0]}`)).to.deep.equal([]);
    expect(zombies, 'zombie transactions tried').to.be.greaterThan(0);
    expect(refused, 'zombie transactions refused').to.equal(zombies);
    expect(copied, 'inputs copied exactly once').to.be.greaterThan(0);
    expect(coordinatorCrashes, 'coordinator crashes').to.be.greaterThan(0);
  });
});
