// A tiny run of the scale and failover benchmarks (bench/scale.bench.ts,
// bench/failover.bench.ts): the results have the shape the suite runner
// reads, the counts follow from the options, and no server process the run
// started outlives it. Timings are reported by the benchmarks, never asserted.
import fs from 'node:fs';
import { expect } from 'chai';
import { runScaleBench } from '../../bench/scale.bench.js';
import { runFailoverBench } from '../../bench/failover.bench.js';

const SESSION_TIMEOUT_MS = 2_000;

/** PIDs of this process's live children running `sluice server`, from /proc. */
function serverChildren(): Set<number> {
  const out = new Set<number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, ...
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== process.pid || state === 'Z') continue;
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd.includes('server') && cmd.some((a) => a.endsWith('main.js'))) out.add(Number(entry));
    } catch { /* exited while we looked */ }
  }
  return out;
}

describe('bench: scale and failover (tiny runs)', function () {
  this.timeout(150_000);
  const lines: string[] = [];
  const log = (line: string): void => void lines.push(line);
  let before: Set<number>;

  beforeEach(() => {
    lines.length = 0;
    before = serverChildren();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(lines.join('\n'));
  });

  const leaked = (): number[] => [...serverChildren()].filter((pid) => !before.has(pid));

  it('scale: partitions created, memory per broker, restart and failover measured; no process left', async () => {
    const r = await runScaleBench({ partitions: 100, sessionTimeoutMs: SESSION_TIMEOUT_MS, waitTimeoutMs: 60_000, log });
    expect(r.partitions).to.equal(100);
    expect(r.replicationFactor).to.equal(3);
    expect(r.create.servingSeconds).to.be.a('number').and.at.least(r.create.committedSeconds);
    expect(r.memory.brokers.map((b) => b.nodeId)).to.deep.equal([1, 2, 3]);
    for (const b of r.memory.brokers) {
      expect(b.replicas, `broker ${b.nodeId} hosts a replica of each partition`).to.equal(100);
      expect(b.rssBeforeMb, `broker ${b.nodeId} RSS read`).to.be.greaterThan(0);
      expect(b.peakRssMb, `broker ${b.nodeId} peak RSS at least its RSS`).to.be.at.least(Math.max(b.rssBeforeMb, b.rssAfterCreateMb, b.rssAfterRestartMb));
    }
    expect(r.restart.servingMs).to.be.at.least(r.restart.unfencedMs);
    expect(r.restart.unfencedMs).to.be.at.least(r.restart.quorumMs);
    expect(r.failover.victim).to.be.oneOf([1, 2, 3]);
    expect(r.failover.sessionTimeoutMs).to.equal(SESSION_TIMEOUT_MS);
    expect(r.failover.partitionsMoved).to.be.within(0, 100);
    expect(leaked(), 'server processes left running').to.deep.equal([]);
  });

  it('failover: controller, partition-leader kill and controlled shutdown measured; no process left', async () => {
    const r = await runFailoverBench({
      controllerKills: 1, leaderKills: 1, controlledShutdowns: 1, sessionTimeoutMs: SESSION_TIMEOUT_MS, settleMs: 300, waitTimeoutMs: 60_000, log,
    });
    expect(r.controller.kills).to.equal(1);
    expect(r.controller.samplesMs).to.have.length(1);
    expect(r.leaderKill.kills).to.equal(1);
    expect(r.leaderKill.samplesMs).to.have.length(1);
    expect(r.leaderKill.maxMs).to.equal(r.leaderKill.samplesMs[0]);
    expect(r.leaderKill.sessionTimeoutMs).to.equal(SESSION_TIMEOUT_MS);
    expect(r.controlledShutdown.shutdowns).to.equal(1);
    expect(r.controlledShutdown.gapsMs).to.have.length(1);
    expect(r.controlledShutdown.toNewLeaderMs).to.have.length(1);
    expect(r.controlledShutdown.cleanExits).to.be.within(0, 1);
    expect(r.controlledShutdown.nonRetriableErrors).to.be.a('number');
    expect(r.controlledShutdown.retriableErrors).to.be.an('object');
    expect(leaked(), 'server processes left running').to.deep.equal([]);
  });
});
