// The chaos harness's pure parts: the fault schedule is a deterministic,
// printable function of the seed that covers every fault kind across seeds
// and keeps to its time budget; node logs are read for Raft leadership per
// term (lines torn by a SIGKILL are skipped).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { leaderTermsInLog } from './cluster.js';
import { formatSchedule, planSchedule } from './nemesis.js';

describe('chaos nemesis schedule', () => {
  it('is the same for the same seed and differs across seeds', () => {
    expect(planSchedule(7, 120, 'combined')).to.deep.equal(planSchedule(7, 120, 'combined'));
    expect(formatSchedule(planSchedule(7, 120, 'combined'))).to.not.equal(formatSchedule(planSchedule(8, 120, 'combined')));
  });

  it('starts every step within the run, in time order, main-lane steps one after another', () => {
    for (let seed = 0; seed < 50; seed++) {
      const plan = planSchedule(seed, 60, 'with-brokers');
      expect(plan.length).to.be.greaterThan(0);
      plan.forEach((s, i) => {
        if (i > 0) expect(s.atMs).to.be.at.least(plan[i - 1]!.atMs);
      });
      const main = plan.filter((s) => s.lane === 'main');
      for (const s of main) expect(s.atMs).to.be.below(60_000);
      main.forEach((s, i) => {
        if (i > 0) expect(s.atMs).to.be.at.least(main[i - 1]!.atMs + main[i - 1]!.durationMs);
      });
    }
  });

  it('covers every fault kind, target and partition shape across seeds', () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 200; seed++) {
      for (const s of planSchedule(seed, 600, 'with-brokers')) {
        seen.add(s.kind);
        if (s.target) seen.add(`target ${s.target}`);
        if (s.shape) seen.add(`shape ${s.shape}`);
      }
    }
    for (const want of ['kill', 'pause', 'partition', 'slow-network', 'torn-tail', 'rolling-restart', 'reassign', 'add-partitions',
      'target controller', 'target leader', 'target follower', 'target minority', 'shape majority-minority', 'shape isolate-controller',
      'shape isolate-leader', 'shape one-way', 'shape deaf-node', 'shape bridge']) {
      expect(seen, want).to.include(want);
    }
  });

  it('prints one line per step', () => {
    const plan = planSchedule(3, 60, 'combined');
    const lines = formatSchedule(plan).split('\n');
    expect(lines).to.have.length(plan.length);
    expect(lines[0]).to.match(/^ +\+ +2\.0s +\S/);
  });
});

describe('chaos node logs', () => {
  it('yield the terms in which the node became Raft leader', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chaos-log-'));
    try {
      const file = path.join(dir, 'node-2.log');
      fs.writeFileSync(file, [
        JSON.stringify({ chaos: 'start', nodeId: 2 }),
        JSON.stringify({ level: 30, nodeId: 2, role: 'candidate', term: 3, msg: 'role changed' }),
        JSON.stringify({ level: 30, nodeId: 2, role: 'leader', term: 3, leader: 2, msg: 'role changed' }),
        JSON.stringify({ level: 30, nodeId: 2, leader: 1, term: 4, msg: 'leader changed' }),
        '{"level":30,"nodeId":2,"role":"leader","term":5,"msg":"role cha', // torn by a SIGKILL
        JSON.stringify({ level: 30, nodeId: 2, role: 'leader', term: 7, msg: 'role changed' }),
      ].join('\n'));
      expect(leaderTermsInLog(2, file)).to.deep.equal([{ nodeId: 2, term: 3 }, { nodeId: 2, term: 7 }]);
      expect(leaderTermsInLog(2, path.join(dir, 'missing.log'))).to.deep.equal([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
