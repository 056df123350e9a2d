// The suite's entry points: compare.ts's flags and `sluice bench`'s command
// module (finding the compiled bench scripts, passing arguments and the exit
// code through). No servers are started here.
import { expect } from 'chai';
import fs from 'node:fs';
import { PROFILES } from '../../bench/suite/results.js';
import { parseCompareArgs } from '../../bench/suite/compare.js';
import { COMPARE_JS, RUN_JS, argsAfter, benchCommand, runNodeScript } from '../../src/cli/commands/bench.js';

describe('bench suite: compare flags', () => {
  it('defaults to the quick profile, every system and deployment, the perf tools, and bench-results/', () => {
    expect(parseCompareArgs([])).to.deep.equal({
      profile: PROFILES.quick, systems: ['sluice', 'nats', 'redis', 'kafka'], outDir: 'bench-results', only: null, perfTools: true,
    });
  });

  it('picks deployments with --only (perf-tools naming the perf-tool section) and the perf tools with --perf-tools', () => {
    expect(parseCompareArgs(['--only', 'kafka-r1,sluice-rf3-client'])).to.deep.include({ only: ['kafka-r1', 'sluice-rf3-client'], perfTools: false });
    expect(parseCompareArgs(['--only', 'perf-tools'])).to.deep.include({ only: [], perfTools: true });
    expect(parseCompareArgs(['--only', 'kafka-r3', '--perf-tools', 'on'])).to.deep.include({ only: ['kafka-r3'], perfTools: true });
    expect(parseCompareArgs(['--systems', 'sluice,nats'])).to.deep.include({ only: null, perfTools: false });
    expect(parseCompareArgs(['--perf-records', '777']).profile.perfToolRecords).to.equal(777);
    expect(PROFILES.full.perfToolRecords).to.equal(PROFILES.full.records);
  });

  it('takes a profile, systems, an out dir and size overrides, as "--x v" or "--x=v"', () => {
    const a = parseCompareArgs(['--profile=full', '--systems', 'sluice,redis', '--out', '/tmp/x', '--records', '5000', '--rates', '1000,2000', '--parallel', '0']);
    expect(a.systems).to.deep.equal(['sluice', 'redis']);
    expect(a.outDir).to.equal('/tmp/x');
    expect(a.profile).to.deep.include({ name: 'full', records: 5000, seconds: PROFILES.full.seconds, parallel: 0 });
    expect(a.profile.e2eRates).to.deep.equal([1000, 2000]);
  });

  it('refuses unknown flags and bad values', () => {
    for (const argv of [['--profile', 'huge'], ['--systems', 'kafkaa'], ['--only', 'kafka-r9'], ['--only', ''], ['--perf-tools', 'maybe'], ['--records', '-1'], ['--rates', '10,x'], ['--bogus', '1'], ['--out']]) {
      expect(() => parseCompareArgs(argv), argv.join(' ')).to.throw();
    }
  });
});

describe('bench suite: sluice bench command', () => {
  it('is a yargs command module named bench', () => {
    expect(benchCommand.command).to.equal('bench');
    expect(benchCommand.builder).to.be.a('function');
  });

  it('finds the compiled bench scripts next to its own build', () => {
    expect(fs.existsSync(COMPARE_JS), COMPARE_JS).to.equal(true);
    expect(fs.existsSync(RUN_JS), RUN_JS).to.equal(true);
  });

  it('passes on everything after the subcommand, as typed', () => {
    expect(argsAfter(['node', 'main.js', 'bench', 'run', 'produce', '--records', '10', '--json'], 'run')).to.deep.equal(['produce', '--records', '10', '--json']);
    expect(argsAfter(['node', 'main.js', 'bench', 'compare', '--', '--profile=full'], 'compare')).to.deep.equal(['--profile=full']);
    expect(argsAfter(['node', 'main.js', 'bench', 'run'], 'compare')).to.deep.equal([]);
  });

  it('ends with the script\'s exit code', async () => {
    expect(await runNodeScript(RUN_JS, ['no-such-scenario'])).to.equal(2);
    expect(await runNodeScript(COMPARE_JS, ['--profile', 'huge'])).to.equal(2);
  });
});
