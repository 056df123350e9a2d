// tx_money's short chaos round in `make test` (issue 18): one round of about
// 25 s of coordinator, partition-leader and controller kills (the fault plan
// always starts with one of each) on a real 3-node cluster, under transfer
// transactions, zombie instances and the read-process-write audit stage. It
// must end with zero anomalies, committed transfers verified, zombies tried
// and refused, and inputs checked as copied exactly once. `make chaos-money`
// runs the long form.
//
// On failure the test prints the round's report (seed, schedule, history
// path) and keeps its run dir; on success the run dir is removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { moneyFailed, moneyReport, runMoneyRound } from './money-run.js';

const FAULT_SECONDS = 25;
const SEED = 18;

describe('chaos: tx_money on a real cluster', function () {
  // ~10 s up, the faults (the last may run over), recovery, the audit stage's drain, settling, the final reads.
  this.timeout(240_000);

  it(`seed ${SEED}: transfers stay whole, zombies are fenced, the audit copy is exactly once after ${FAULT_SECONDS} s of kills`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-money-test-'));
    const lines: string[] = [];
    const r = await runMoneyRound({ seed: SEED, seconds: FAULT_SECONDS, dir, log: (l) => lines.push(l) });
    if (moneyFailed(r)) console.log([...lines, ...moneyReport(r)].join('\n'));
    expect(r.error, 'the round ran to its check').to.equal(null);
    expect(r.crashes, 'node processes that exited by themselves').to.deep.equal([]);
    expect(r.anomalies.map((a) => `${a.type}: ${a.detail}`)).to.deep.equal([]);
    expect(r.stats!.commitsVerified, 'committed transactions verified').to.be.greaterThan(0);
    expect(r.stats!.zombieTxns, 'zombie transactions tried').to.be.greaterThan(0);
    expect(r.stats!.zombieRefused, 'zombie transactions refused').to.equal(r.stats!.zombieTxns);
    expect(r.stats!.eosInputsChecked, 'inputs copied exactly once').to.be.greaterThan(0);
    expect(r.faults['kill-coordinator'] ?? 0, 'coordinator kills').to.be.greaterThan(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
