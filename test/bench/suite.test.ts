// One small end-to-end run of the suite's runner: Sluice RF=1 only, a tiny
// profile, every workload of the plan. Checks the shape of the results (what
// the JSON file and the reports rely on), that every acknowledged record was
// read back, and that no server process outlives the run. No timing is
// asserted: figures only have to exist.
import { expect } from 'chai';
import { catalogue } from '../../bench/suite/catalogue.js';
import { renderHtml } from '../../bench/suite/report-html.js';
import { renderMarkdown } from '../../bench/suite/report-md.js';
import { planWorkloads, type Profile, type SuiteResults } from '../../bench/suite/results.js';
import { isAlive, runSuite } from '../../bench/suite/runner.js';

const TINY: Profile = {
  name: 'tiny', records: 5_000, seconds: 20, smallValueBytes: 100, largeValueBytes: 1024, parallel: 3, e2eRates: [1_000], e2eSeconds: 1, e2eWarmupSeconds: 1,
};

describe('bench suite: runner end to end (Sluice RF=1, tiny profile)', function () {
  this.timeout(240_000);
  let results: SuiteResults;

  before(async () => {
    const rf1 = catalogue().filter((e) => e.key === 'sluice-rf1');
    results = await runSuite({ profile: TINY, deployments: rf1, progress: 'none' });
  });

  it('runs every workload of the plan, in order, without failures', () => {
    expect(results.failures, JSON.stringify(results.deployments.map((d) => d.workloads.map((w) => w.error)))).to.equal(0);
    expect(results.deployments.map((d) => [d.key, d.system, d.status])).to.deep.equal([['sluice-rf1', 'sluice', 'ok']]);
    const d = results.deployments[0]!;
    expect(d.variant).to.equal('RF=1 acks=1');
    expect(d.workloads.map((w) => w.id)).to.deep.equal(planWorkloads(TINY).map((w) => w.id));
    expect(d.workloads.every((w) => w.status === 'ok')).to.equal(true);
    expect(results.machine.cores).to.be.greaterThan(0);
    expect(Date.parse(results.finishedAt)).to.be.at.least(Date.parse(results.startedAt));
  });

  it('reads back every acknowledged record, with one consumer and with a group', () => {
    const w = new Map(results.deployments[0]!.workloads.map((x) => [x.id, x]));
    const produced = w.get('produce-100B')!.throughput!;
    expect(produced.records).to.be.greaterThan(0).and.at.most(TINY.records);
    expect(produced.bytes).to.equal(produced.records * 100);
    expect(w.get('consume-1')!.throughput!.records).to.equal(produced.records);
    const parallel = w.get('produce-100B-x3')!.throughput!;
    expect(w.get('consume-group-3')!.throughput!.records).to.be.at.least(parallel.records);
    expect(w.get('produce-1KiB')!.throughput!.bytes).to.equal(w.get('produce-1KiB')!.throughput!.records * 1024);
    for (const t of [produced, parallel]) expect(t.timeline.at(-1)!.records).to.equal(t.records);
  });

  it('measures e2e latency with a percentile curve', () => {
    const l = results.deployments[0]!.workloads.find((x) => x.kind === 'e2e')!.latency!;
    expect(l.records).to.be.greaterThan(0);
    expect(l.p50Ms).to.be.at.most(l.p99Ms);
    expect(l.p99Ms).to.be.at.most(l.maxMs);
    expect(l.curve.at(-1)).to.deep.equal({ percentile: 100, ms: l.maxMs });
  });

  it('samples the three server processes during every workload', () => {
    for (const w of results.deployments[0]!.workloads) {
      expect(w.servers, w.id).to.have.length(3);
      expect(w.servers.every((p) => p.pid > 0 && p.peakRssMb > 0 && p.rssTimeline.length >= 2), w.id).to.equal(true);
      expect(w.serverCpuUsPerRecord, w.id).to.not.equal(null);
      expect(w.peakServerRssMb).to.be.greaterThan(0);
    }
  });

  it('leaves no server process running', () => {
    const pids = new Set(results.deployments[0]!.workloads.flatMap((w) => w.servers.map((p) => p.pid)));
    expect(pids.size).to.equal(3);
    expect([...pids].filter(isAlive)).to.deep.equal([]);
  });

  it('renders its results as Markdown and HTML', () => {
    expect(renderMarkdown(results)).to.include('Sluice RF=1 acks=1');
    expect(renderHtml(results)).to.include('RSS over time: Sluice RF=1 acks=1');
  });
});
