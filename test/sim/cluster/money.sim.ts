// Long runs of the tx_money profile of the whole-cluster simulation (`make sim-money`, and `make sim`):
//   make sim-money                 SLUICE_SIM_SEEDS seeds (default 100) from SLUICE_SIM_FIRST (default 1)
//   make sim-money SEED=1234       replay one seed bit for bit, with its full trace
//   SLUICE_SIM_PROFILE=small make sim-money SEED=1234   a seed of make test's shape
import { expect } from 'chai';
import { seedsFromEnv } from './run.js';
import { MONEY_PROFILES, formatMoneyFailure, formatMoneyLine, runMoneySeed, type MoneyProfileName, type MoneySeedResult } from './money.js';

describe('cluster simulation: tx_money (long runs)', function () {
  this.timeout(0);
  const seeds = seedsFromEnv(100);
  const one = process.env.SLUICE_SIM_SEED !== undefined && process.env.SLUICE_SIM_SEED !== '';
  const profile = (process.env.SLUICE_SIM_PROFILE || 'long') as MoneyProfileName;
  if (!(profile in MONEY_PROFILES)) throw new Error(`SLUICE_SIM_PROFILE must be one of ${Object.keys(MONEY_PROFILES).join(', ')} for the tx_money runs`);

  it(one ? `replays tx_money seed ${seeds[0]}` : `${seeds.length} tx_money seeds from ${seeds[0]} keep every invariant`, async () => {
    const failures: MoneySeedResult[] = [];
    const started = performance.now();
    for (const [i, seed] of seeds.entries()) {
      const r = await runMoneySeed({ seed, ...MONEY_PROFILES[profile], profile, fullTrace: one, ...(one ? { traceTail: 1_000_000 } : {}) });
      if (one) console.log(formatMoneyFailure(r));
      else if (!r.ok) console.log(formatMoneyLine(r));
      if (!r.ok) failures.push(r);
      if ((i + 1) % 20 === 0) console.log(`  ${i + 1} seeds, ${failures.length} failed, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    if (!one) for (const f of failures.slice(0, 5)) console.log(`\n${formatMoneyFailure(f)}`);
    expect(failures.map((f) => `seed ${f.seed}: ${f.anomalies[0]?.type ?? f.error?.split('\n')[0]}`)).to.deep.equal([]);
  });
});
