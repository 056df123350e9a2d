// `sluice server` as an operator meets it: exit codes and one-line reasons for
// bad flags, unavailable roles, unusable data dirs, ports in use and a second
// process on the same data dir; a clean exit 0 on SIGTERM.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { META_PROPERTIES, METADATA_LOG_DIR } from '../../src/server/data-dir.js';
import { MAIN_JS, ProcessCluster, freePorts } from './harness.js';

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
});
