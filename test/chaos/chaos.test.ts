// The short chaos profile that `make test` runs (issue 9): two rounds of
// about 40 s of faults on real clusters, one per profile, with fixed seeds
// whose schedules between them kill leaders, followers and the active
// controller, tear a tail, pause a leader past its session, partition the
// cluster (majority/minority, the controller isolated), slow links, and
// reassign and add partitions during faults. Each round must end with zero
// anomalies, acknowledged records, and faults actually injected.
//
// On failure the test prints the round's report (seed, schedule, history
// path) and keeps its run dir; on success the run dir is removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Profile } from './cluster.js';
import { failed, report, runRound } from './run.js';

const FAULT_SECONDS = 40;
const ROUNDS: ReadonlyArray<{ readonly seed: number; readonly profile: Profile }> = [
  { seed: 4, profile: 'combined' },
  { seed: 9, profile: 'with-brokers' },
];

describe('chaos: short profile on real clusters', function () {
  // Per round: ~10 s up, 40 s of faults (the last one may run over), healing, settling, checking.
  this.timeout(240_000);

  for (const { seed, profile } of ROUNDS) {
    it(`seed ${seed}, ${profile}: no anomaly after ${FAULT_SECONDS} s of faults`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chaos-test-'));
      const lines: string[] = [];
      const r = await runRound({ seed, seconds: FAULT_SECONDS, profile, dir, rate: 60, log: (l) => lines.push(l) });
      if (failed(r) || (r.stats?.sendsOk ?? 0) === 0 || r.faultsInjected === 0) console.log([...lines, ...report(r)].join('\n'));
      expect(r.error, 'the round ran to its check').to.equal(null);
      expect(r.crashes, 'node processes that exited by themselves').to.deep.equal([]);
      expect(r.anomalies.map((a) => `${a.type}: ${a.detail}`)).to.deep.equal([]);
      expect(r.stats!.sendsOk, 'acknowledged records').to.be.greaterThan(0);
      expect(r.stats!.acksChecked, 'acknowledged records checked at their offsets').to.be.greaterThan(0);
      expect(r.faultsInjected, 'faults injected').to.be.greaterThan(0);
      expect(r.stats!.compactedKeysChecked, 'keys of the compacted topic checked against their last acknowledged write').to.be.greaterThan(0);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
});
