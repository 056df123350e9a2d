// `sluice produce|consume|groups` without a cluster: usage errors exit 2 with a
// reason, --help shows examples, a dead bootstrap is one line and exit 1.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, '../../src/cli/main.js');

function sluice(args: string[], input = '') {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 30_000, input });
}

async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('sluice produce, consume, groups: flags', function () {
  this.timeout(60_000);

  const usage: Array<[string, string[], RegExp]> = [
    ['produce without --topic', ['produce'], /Missing required argument: topic/],
    ['produce --acks 2', ['produce', '--topic', 't', '--acks', '2'], /Invalid values/],
    ['produce bad --headers', ['produce', '--topic', 't', '--headers', 'novalue'], /k=v/],
    ['produce negative --partition', ['produce', '--topic', 't', '--partition', '-1'], /--partition/],
    ['produce unknown flag', ['produce', '--topic', 't', '--bogus'], /Unknown argument: bogus/],
    ['produce --transaction-records without --transactional-id', ['produce', '--topic', 't', '--transaction-records', '5'], /needs --transactional-id/],
    ['produce --transactional-id with --acks 1', ['produce', '--topic', 't', '--transactional-id', 'x', '--acks', '1'], /needs --acks all/],
    ['produce --transaction-records 0', ['produce', '--topic', 't', '--transactional-id', 'x', '--transaction-records', '0'], /--transaction-records must be/],
    ['consume bad --isolation-level', ['consume', '--topic', 't', '--isolation-level', 'dirty'], /Invalid values/],
    ['transactions without a subcommand', ['transactions'], /Name a transactions command/],
    ['transactions describe without an id', ['transactions', 'describe'], /Missing required argument: transactional-id/],
    ['transactions list bad --producer-id', ['transactions', 'list', '--producer-id', '-3'], /--producer-id/],
    ['consume --offset without --partition', ['consume', '--topic', 't', '--offset', '3'], /--offset needs --partition/],
    ['consume --offset with --from-beginning', ['consume', '--topic', 't', '--partition', '0', '--offset', '3', '--from-beginning'], /give one/],
    ['consume --max-messages 0', ['consume', '--topic', 't', '--max-messages', '0'], /--max-messages/],
    ['consume bad --format', ['consume', '--topic', 't', '--format', 'xml'], /Invalid values/],
    ['groups without a subcommand', ['groups'], /Name a groups command/],
    ['groups unknown subcommand', ['groups', 'frobnicate'], /Unknown argument|Unknown command/],
    ['groups describe without --group', ['groups', 'describe'], /Missing required argument: group/],
    ['reset-offsets without a target', ['groups', 'reset-offsets', '--group', 'g', '--topic', 't'], /exactly one of/],
    ['reset-offsets with two targets', ['groups', 'reset-offsets', '--group', 'g', '--topic', 't', '--to-earliest', '--to-latest'], /exactly one of/],
    ['reset-offsets bad --partitions', ['groups', 'reset-offsets', '--group', 'g', '--topic', 't', '--to-latest', '--partitions', '0,x'], /--partitions/],
  ];
  for (const [what, args, reason] of usage) {
    it(`exits 2 for ${what}`, () => {
      const r = sluice(args);
      expect(r.status, r.stderr).to.equal(2);
      expect(r.stderr).to.match(reason);
      expect(r.stdout).to.equal('');
    });
  }

  it('shows examples in --help', () => {
    for (const cmd of [['produce'], ['consume'], ['groups', 'reset-offsets'], ['groups', 'describe'], ['transactions', 'list'], ['transactions', 'describe']]) {
      const r = sluice([...cmd, '--help']);
      expect(r.status).to.equal(0);
      expect(r.stdout).to.contain('Examples:');
      expect(r.stdout).to.contain('--bootstrap');
    }
  });

  it('fails with one line naming a dead bootstrap, exit 1', async () => {
    const url = `ws://127.0.0.1:${await deadPort()}`;
    for (const args of [['produce', '--topic', 't'], ['consume', '--topic', 't', '--timeout-ms', '1000'], ['groups', 'list']]) {
      const r = sluice([...args, '--bootstrap', url], 'x\n');
      expect(r.status, `${args[0]}: ${r.stderr}`).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.contain(url);
      expect(r.stderr).not.to.match(/\n\s+at /);
    }
  });
});
