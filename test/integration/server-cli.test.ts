// `sluice server` as an operator meets it: exit codes and one-line reasons for
// bad flags, unavailable roles, unusable data dirs, ports in use and a second
// process on the same data dir; a clean exit 0 on SIGTERM.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { META_PROPERTIES, METADATA_LOG_DIR } from '../../src/server/data-dir.js';
import { MAIN_JS, ProcessCluster, freePorts, waitFor } from './harness.js';

function server(args: string[]) {
  return spawnSync(process.execPath, [MAIN_JS, 'server', ...args], { encoding: 'utf8', timeout: 20_000 });
}

describe('sluice server command', function () {
  this.timeout(60_000);
  let tmp: string;
  let port: number;
  let flags: (dir: string) => string[];

  beforeEach(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-'));
    [port = 0] = await freePorts(1);
    flags = (dir) => ['--node-id', '1', '--roles', 'controller', '--controller-listen', `ws://127.0.0.1:${port}`,
      '--controller-quorum', `1@127.0.0.1:${port}`, '--data-dir', dir];
  });

  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('exits 2 with usage for missing or malformed flags', () => {
    const missing = server(['--node-id', '1']);
    expect(missing.status).to.equal(2);
    expect(missing.stderr).to.match(/Missing required arguments/);
    const badQuorum = server([...flags(tmp).slice(0, 6), '--controller-quorum', '1@nohost', '--data-dir', tmp]);
    expect(badQuorum.status).to.equal(2);
    expect(badQuorum.stderr).to.match(/host:port/);
    const notVoter = server([...flags(tmp).slice(0, 6), '--controller-quorum', `2@127.0.0.1:${port}`, '--data-dir', tmp]);
    expect(notVoter.status).to.equal(2);
    expect(notVoter.stderr).to.match(/not in --controller-quorum/);
  });

  it('exits 2 with one line for a broker without --listen, --listen without the broker role, a bad durability mode', () => {
    const noListen = server([...flags(tmp).slice(0, 2), '--roles', 'broker,controller', ...flags(tmp).slice(4)]);
    expect(noListen.status).to.equal(2);
    expect(noListen.stderr.trim().split('\n')).to.have.length(1);
    expect(noListen.stderr).to.match(/broker role needs --listen/);
    const listenOnly = server([...flags(tmp), '--listen', 'ws://127.0.0.1:1']);
    expect(listenOnly.status).to.equal(2);
    expect(listenOnly.stderr).to.match(/add broker to --roles/);
    const badMode = server([...flags(tmp).slice(0, 2), '--roles', 'broker,controller', ...flags(tmp).slice(4), '--listen', 'ws://127.0.0.1:1', '--durability', 'maybe']);
    expect(badMode.status).to.equal(2);
    expect(badMode.stderr).to.match(/durability/);
  });

  it('exits 1 with one line for an unusable data dir', () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'x');
    const r = server(flags(path.join(file, 'data')));
    expect(r.status).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.match(/data dir .* is not usable/);
  });

  it('exits 1 with one line when the port is in use, leaving the data dir unlocked', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', () => resolve()));
    try {
      const r = server(flags(tmp));
      expect(r.status).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.match(/address in use/);
      expect(fs.existsSync(path.join(tmp, '.lock'))).to.equal(false);
    } finally {
      blocker.close();
    }
  });

  it('formats the data dir, refuses a second process on it, and stops cleanly on SIGTERM', async () => {
    const cluster = await ProcessCluster.create({ size: 1, extraArgs: ['--raft-only'] });
    try {
      cluster.startAll();
      const client = cluster.client();
      await cluster.waitForLeader(client, { timeoutMs: 20_000 });
      const ack = await client.propose(Buffer.from('hello'));
      expect(ack.index).to.be.greaterThan(0);
      const node = cluster.node(1);
      const meta = fs.readFileSync(path.join(node.dataDir, META_PROPERTIES), 'utf8');
      expect(meta).to.match(/^node\.id=1$/m).and.match(/^cluster\.id=[A-Za-z0-9_-]{22}$/m).and.match(/^version=1$/m);
      expect(fs.statSync(path.join(node.dataDir, METADATA_LOG_DIR)).isDirectory()).to.equal(true);
      const [otherPort] = await freePorts(1);
      const second = server(['--node-id', '1', '--roles', 'controller', '--controller-listen', `ws://127.0.0.1:${otherPort}`,
        '--controller-quorum', cluster.quorum, '--data-dir', node.dataDir]);
      expect(second.status).to.equal(1);
      expect(second.stderr).to.match(/in use by process/);
      expect(await node.kill('SIGTERM')).to.equal(0);
      // A clean restart finds its data and the applied entry again.
      node.start();
      await cluster.waitForLeader(client, { timeoutMs: 20_000 });
      const status = await client.status(node.url);
      expect((status.stateMachine as { appliedCount: number }).appliedCount).to.equal(1);
    } finally {
      await cluster.cleanup();
    }
  });

  it('reads a .properties or JSON config file with Kafka\'s names; flags win; unknown keys are refused', async () => {
    const [brokerPort = 0, controllerPort = 0] = await freePorts(2);
    const props = path.join(tmp, 'node.properties');
    fs.writeFileSync(props, [
      '# one combined node', 'node.id=1', 'process.roles=broker,controller',
      `listeners=BROKER://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}`,
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`, `log.dirs=${path.join(tmp, 'data')}`,
      'log.segment.bytes=1048576', 'replica.lag.time.max.ms=5000', 'log.level=nonsense', 'num.partitions=4',
    ].join('\n'));
    // The file's bad log.level is overridden by the flag: flags win.
    const child = spawn(process.execPath, [MAIN_JS, 'server', '--config', props, '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    try {
      await waitFor('the broker listener from the config file', () => /broker listener up/.test(out) || undefined, { timeoutMs: 20_000 });
      expect(out).to.include(`ws://127.0.0.1:${brokerPort}`);
      // A cluster-wide key of the file seeds the cluster's config (it had no value of its own).
      await waitFor('num.partitions=4 in the cluster config', () => {
        const r = spawnSync(process.execPath, [MAIN_JS, 'configs', 'describe', '--cluster', '--json', '--bootstrap', `ws://127.0.0.1:${brokerPort}`], { encoding: 'utf8', timeout: 15_000 });
        if (r.status !== 0) return undefined;
        const c = (JSON.parse(r.stdout) as { configs: Array<{ name: string; value: string; source: string }> }).configs.find((x) => x.name === 'num.partitions');
        return (c?.value === '4' && c.source === 'cluster') || undefined;
      }, { timeoutMs: 30_000, intervalMs: 200 });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    const json = path.join(tmp, 'node.json');
    fs.writeFileSync(json, JSON.stringify({ 'node.id': 1, 'process.roles': 'controller', 'no.such.key': 'x' }));
    const refused = server(['--config', json]);
    expect(refused.status, refused.stderr + refused.stdout.slice(-300)).to.equal(2);
    expect(refused.stderr).to.match(/unknown key 'no\.such\.key'/);
    const badLog = path.join(tmp, 'bad.properties');
    fs.writeFileSync(badLog, fs.readFileSync(props, 'utf8').replace('log.level=nonsense', 'log.segment.bytes=12'));
    const tooSmall = server(['--config', badLog]);
    expect(tooSmall.status).to.equal(2);
    expect(tooSmall.stderr).to.match(/log\.segment\.bytes/);
  });

  it('logs JSON lines when piped and readable lines with --log-format pretty', async () => {
    const run = async (extra: string[]): Promise<string> => {
      const child = spawn(process.execPath, [MAIN_JS, 'server', ...flags(tmp), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
      try {
        await waitFor('the node to log that it started', () => /raft node started/.test(out) || undefined, { timeoutMs: 20_000 });
      } finally {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      return out;
    };
    const piped = await run([]);
    expect(piped.split('\n').filter((l) => l.length > 0).every((l) => /^\{"level":\d+,/.test(l)), 'JSON lines').to.equal(true);
    // Started by hand without the node flags sluice local passes: it says so.
    expect(piped).to.match(/"level":40,.*"missing":\["--initial-old-space-size=128","--v8-pool-size=\d"\]/);
    const pretty = await run(['--log-format', 'pretty']);
    expect(pretty).to.match(/INFO.*raft node started/).and.not.match(/^\{"level"/m);
  });
});
