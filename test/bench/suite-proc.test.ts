// The suite's process sampling (/proc CPU time and RSS) on this test process
// and on a child it starts and kills, and the machine description.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { machineInfo, describeMachine } from '../../bench/suite/machine.js';
import { ProcSampler, readProc } from '../../bench/suite/proc-stats.js';
import { waitFor } from '../integration/harness.js';

const BUSY_SLICE_MS = 20;

function burnCpu(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* spin */ }
}

describe('bench suite: process stats', function () {
  before(function () {
    if (!ProcSampler.supported) this.skip();
  });

  it('samples its own process: CPU time grows with work, RSS is positive, the timeline has every sample', async () => {
    const sampler = ProcSampler.start([process.pid]);
    await waitFor('CPU time of this process to register', () => {
      burnCpu(BUSY_SLICE_MS);
      sampler.sampleNow();
      return sampler.current()[0]!.cpuSeconds > 0;
    }, { timeoutMs: 20_000, intervalMs: 1 });
    const [s] = sampler.stop();
    expect(s!.pid).to.equal(process.pid);
    expect(s!.cpuSeconds).to.be.greaterThan(0);
    expect(s!.peakRssMb).to.be.greaterThan(0);
    expect(s!.lifetimePeakRssMb).to.be.at.least(s!.peakRssMb);
    expect(s!.rssTimeline.length).to.be.at.least(3); // start, the waits, stop
    expect(s!.exited).to.equal(false);
    const ts = s!.rssTimeline.map((p) => p.tS);
    expect(ts).to.deep.equal([...ts].sort((a, b) => a - b));
  });

  it('keeps the last sample of a child that exits mid-run', async () => {
    // The child says when it runs: before that, /proc shows the forked copy of this process in the middle of exec.
    const child = spawn(process.execPath, ['-e', 'process.stdout.write("up\\n"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await new Promise((resolve) => child.stdout!.once('data', resolve));
      const pid = child.pid!;
      expect(readProc(pid)?.rssKb).to.be.greaterThan(0);
      const sampler = ProcSampler.start([pid]);
      sampler.sampleNow();
      const before = sampler.current()[0]!;
      expect(before.peakRssMb).to.be.greaterThan(0);
      child.kill('SIGKILL');
      await exited;
      const [after] = sampler.stop();
      expect(after!.exited).to.equal(true);
      expect(after!.peakRssMb).to.equal(before.peakRssMb);
      expect(after!.rssTimeline).to.deep.equal(before.rssTimeline);
      expect(after!.cpuSeconds).to.equal(before.cpuSeconds);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('reports zeros for a PID that never existed', () => {
    const [s] = ProcSampler.start([2 ** 22 + 12345]).stop();
    expect(s).to.include({ cpuSeconds: 0, peakRssMb: 0, exited: false });
    expect(s!.rssTimeline).to.deep.equal([]);
  });
});

describe('bench suite: machine', () => {
  it('names CPU, cores, memory, Node, OS and kernel', () => {
    const m = machineInfo();
    expect(m.cores).to.be.greaterThan(0);
    expect(m.memoryMb).to.be.greaterThan(0);
    expect(m.node).to.equal(process.version);
    expect(m.kernel.length).to.be.greaterThan(0);
    expect(describeMachine(m)).to.include(`${m.cores} cores`);
  });
});
