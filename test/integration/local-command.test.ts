// `sluice local` as an operator meets it: a 3-node cluster that becomes
// ready, serves clients on the printed endpoints, stops cleanly on SIGINT
// leaving no node behind, and resumes from the same data dir with the same
// cluster id, topic and records; a port in use and bad flags are refused
// before anything starts.
//
// Every process is signalled by PID; the after hook SIGKILLs the `sluice
// local` processes and every node PID their tables printed.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MAIN_JS, waitFor } from './harness.js';
import { CLUSTER_UP_MS, Connections, brokerUrls, connect, createTopic, produceOk, readPartition, waitForFullIsr } from './broker-kit.js';
import { serverNodeFlags } from '../../src/server/runtime-flags.js';
import { HTTP_PORT_OFFSET, KAFKA_PORT_OFFSET } from '../../src/cli/local-plan.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';

/** Generous: three node processes starting on a loaded CI machine. */
const READY_WAIT_MS = 90_000;
const EXIT_WAIT_MS = 60_000;
/** Scanned for consecutive free ports: below Linux's ephemeral range (32768+), so the OS does not hand them out meanwhile. */
const PORT_SCAN_FIRST = 20_000;
const PORT_SCAN_LAST = 32_000;

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * The first port of `n` consecutive ports on 127.0.0.1 that are free right
 * now, whose Kafka and HTTP listeners (KAFKA_PORT_OFFSET and HTTP_PORT_OFFSET above each broker port) are free too.
 */
async function consecutiveFreePorts(n: number): Promise<number> {
  // Start at a pid-dependent place so parallel runs are unlikely to race for the same range.
  const span = PORT_SCAN_LAST - PORT_SCAN_FIRST - n;
  const offset = (process.pid * 97) % span;
  for (let tried = 0; tried < span; tried += n) {
    const base = PORT_SCAN_FIRST + ((offset + tried) % span);
    let ok = true;
    for (let p = base; p < base + n && ok; p++) ok = await portFree(p) && await portFree(p + KAFKA_PORT_OFFSET) && await portFree(p + HTTP_PORT_OFFSET);
    if (ok) return base;
  }
  throw new Error(`no ${n} consecutive free ports in ${PORT_SCAN_FIRST}-${PORT_SCAN_LAST}`);
}

interface TableRow {
  readonly id: number;
  readonly brokerUrl: string;
  readonly kafkaAddress: string;
  readonly controllerUrl: string;
  readonly dataDir: string;
  readonly pid: number;
}

const nodePids = new Set<number>();
const locals = new Set<ChildProcess>();

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One `sluice local` process, its output, and the table it printed. */
class LocalRun {
  stdout = '';
  stderr = '';
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [MAIN_JS, 'local', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    locals.add(this.child);
    this.child.stdout?.on('data', (c: Buffer) => { this.stdout += c.toString('utf8'); });
    this.child.stderr?.on('data', (c: Buffer) => { this.stderr += c.toString('utf8'); });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => {
      locals.delete(this.child);
      resolve(code);
    }));
  }

  /** Waits for the ready table; fails early (with the output) if the process exits first. */
  async ready(): Promise<{ rows: TableRow[]; clusterId: string }> {
    let exitCode: number | null | undefined;
    void this.exited.then((code) => { exitCode = code; });
    await waitFor('the ready table on stdout', () => {
      if (exitCode !== undefined) throw new Error(`sluice local exited ${exitCode}: ${this.stderr}`);
      return /^\s+bootstrap\s/m.test(this.stdout);
    }, { timeoutMs: READY_WAIT_MS, intervalMs: 50 }).catch((err: Error) => {
      throw new Error(`${err.message}\nstderr:\n${this.stderr}\nstdout:\n${this.stdout}`);
    });
    const rows = [...this.stdout.matchAll(/^\s+(\d+)\s+broker,controller\s+(wss?:\S+)\s+(\S+:\d+)\s+(wss?:\S+)\s+(\S+)\s+(\d+)\s*$/gm)].map((m) => ({
      id: Number(m[1]), brokerUrl: m[2]!, kafkaAddress: m[3]!, controllerUrl: m[4]!, dataDir: m[5]!, pid: Number(m[6]),
    }));
    for (const r of rows) nodePids.add(r.pid);
    const clusterId = /cluster id (\S+)/.exec(this.stdout)?.[1] ?? '';
    return { rows, clusterId };
  }

  /** SIGINT by PID; resolves with the exit code (bounded). */
  async interrupt(): Promise<number | null> {
    if (this.child.pid !== undefined) process.kill(this.child.pid, 'SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`sluice local did not exit within ${EXIT_WAIT_MS} ms of SIGINT:\n${this.stderr}`)), EXIT_WAIT_MS);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function local(args: string[]) {
  return spawnSync(process.execPath, [MAIN_JS, 'local', ...args], { encoding: 'utf8', timeout: 20_000 });
}

describe('sluice local command', function () {
  this.timeout(240_000);
  let tmp: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-local-'));
  });

  afterEach(() => {
    for (const c of locals) if (c.pid !== undefined) killPid(c.pid);
    for (const pid of nodePids) killPid(pid);
    nodePids.clear();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('starts 3 nodes, serves clients, stops on SIGINT with no node left, and resumes from the same data dir', async () => {
    const dataDir = path.join(tmp, 'data');
    const base = await consecutiveFreePorts(6);
    const args = ['--nodes', '3', '--data-dir', dataDir, '--base-port', String(base)];

    const first = new LocalRun(args);
    const { rows, clusterId } = await first.ready();
    expect(rows.map((r) => r.id)).to.deep.equal([1, 2, 3]);
    expect(rows.map((r) => [r.brokerUrl, r.controllerUrl])).to.deep.equal([0, 1, 2].map((i) => [
      `ws://127.0.0.1:${base + 2 * i}`, `ws://127.0.0.1:${base + 2 * i + 1}`,
    ]));
    expect(rows.map((r) => r.kafkaAddress)).to.deep.equal([0, 1, 2].map((i) => `127.0.0.1:${base + 2 * i + KAFKA_PORT_OFFSET}`));
    expect(first.stdout).to.include(`bootstrap.servers=${rows.map((r) => r.kafkaAddress).join(',')}`);
    expect(first.stdout).to.include(`console    http://127.0.0.1:${base + HTTP_PORT_OFFSET}/console/`);
    const consoleConfig = await (await fetch(`http://127.0.0.1:${base + HTTP_PORT_OFFSET}/console/config.json`)).json() as { bootstrap: string[]; admin: boolean };
    expect([consoleConfig.bootstrap[0], consoleConfig.admin]).to.deep.equal([rows[0]!.brokerUrl, false]);
    expect(rows.map((r) => r.dataDir)).to.deep.equal([1, 2, 3].map((i) => path.join(dataDir, `node-${i}`)));
    expect(clusterId).to.match(/^[A-Za-z0-9_-]{22}$/);
    expect(first.stderr).to.match(/waiting for a metadata leader/).and.match(/3\/3 unfenced/);
    for (const r of rows) {
      const argv = fs.readFileSync(`/proc/${r.pid}/cmdline`, 'utf8').split('\0');
      expect(argv, `node ${r.id} runs with the server's node flags`).to.include.members(serverNodeFlags());
    }

    const conn = await connect(rows[0]!.brokerUrl);
    const conns = new Connections();
    try {
      // Ready means every broker already lists all three: no wait here.
      expect((await conn.metadata([])).brokers.map((b) => b.nodeId).sort()).to.deep.equal([1, 2, 3]);
      const kafka = await RawKafkaClient.connect('127.0.0.1', base + KAFKA_PORT_OFFSET);
      try {
        const md = await kafka.request(metadata, 12, { topics: null });
        expect((md.brokers as Array<{ port: number }>).map((b) => b.port).sort()).to.deep.equal([0, 1, 2].map((i) => base + 2 * i + KAFKA_PORT_OFFSET));
      } finally {
        kafka.close();
      }
      await createTopic(conn, 'local-topic', 1, 3);
      await produceOk(conns, conn, 'local-topic', 0, [{ value: Buffer.from('kept across restarts') }]);
    } finally {
      conn.close();
      conns.closeAll();
    }
    expect(await first.interrupt()).to.equal(0);
    expect(first.stderr).to.match(/stopped 3 node\(s\)/);
    for (const r of rows) expect(alive(r.pid), `node ${r.id} (pid ${r.pid}) still running`).to.equal(false);
    for (const r of rows) expect(fs.statSync(path.join(r.dataDir, 'server.log')).size).to.be.greaterThan(0);

    const second = new LocalRun(args);
    const again = await second.ready();
    expect(again.clusterId).to.equal(clusterId);
    const conn2 = await connect(again.rows[0]!.brokerUrl);
    try {
      const [p0] = await waitForFullIsr(conn2, 'local-topic', 1);
      const leaderUrl = (await brokerUrls(conn2)).get(p0!.leader)!;
      const leader = await connect(leaderUrl);
      try {
        const content = await waitFor('the record back from the leader', async () => {
          const c = await readPartition(leader, 'local-topic', 0);
          return c.records.length > 0 ? c : undefined;
        }, { timeoutMs: CLUSTER_UP_MS, intervalMs: 100 });
        expect(content.records.map((r) => Buffer.from(r.value ?? []).toString('utf8'))).to.deep.equal(['kept across restarts']);
      } finally {
        leader.close();
      }
    } finally {
      conn2.close();
    }
    expect(await second.interrupt()).to.equal(0);
    for (const r of again.rows) expect(alive(r.pid), `node ${r.id} (pid ${r.pid}) still running`).to.equal(false);
  });

  it('--tls: every listener on TLS with a throw-away CA; the printed export line makes the CLI work', async () => {
    const dataDir = path.join(tmp, 'data');
    const base = await consecutiveFreePorts(2);
    const run = new LocalRun(['--nodes', '1', '--data-dir', dataDir, '--base-port', String(base), '--tls']);
    const { rows } = await run.ready();
    expect(rows.map((r) => [r.brokerUrl, r.controllerUrl])).to.deep.equal([[`wss://127.0.0.1:${base}`, `wss://127.0.0.1:${base + 1}`]]);
    const exportLine = /export (SLUICE_BOOTSTRAP=\S+ SLUICE_TLS_CA=\S+ SLUICE_TLS_CERT=\S+ SLUICE_TLS_KEY=\S+)/.exec(run.stdout)?.[1];
    expect(exportLine, run.stdout).to.be.a('string');
    const env = { ...process.env, ...Object.fromEntries(exportLine!.split(' ').map((kv) => kv.split('=') as [string, string])) };
    expect(fs.existsSync(env.SLUICE_TLS_CA!)).to.equal(true);
    const cli = (args: string[], input?: string) => spawnSync(process.execPath, [MAIN_JS, ...args], { encoding: 'utf8', timeout: 30_000, env, ...(input ? { input } : {}) });
    expect(cli(['topics', 'create', '--topic', 'tls-demo', '--partitions', '1', '--replication-factor', '1']).status).to.equal(0);
    expect(cli(['produce', '--topic', 'tls-demo'], 'hello over tls\n').status).to.equal(0);
    const read = cli(['consume', '--topic', 'tls-demo', '--from-beginning', '--max-messages', '1']);
    expect(read.stdout.trim(), read.stderr).to.equal('hello over tls');
    // Without the client certificate the broker refuses the connection (ssl.client.auth=required).
    const refused = spawnSync(process.execPath, [MAIN_JS, 'topics', 'list', '--bootstrap', env.SLUICE_BOOTSTRAP!, '--tls-ca', env.SLUICE_TLS_CA!, '--request-timeout-ms', '3000'],
      { encoding: 'utf8', timeout: 30_000 });
    expect(refused.status).to.equal(1);
    expect(refused.stderr).to.match(/cannot connect to wss:/);
    expect(await run.interrupt()).to.equal(0);
  });

  it('--tls --auth: logins and ACLs; the printed admin login works, anonymous and wrong passwords are refused, a new user gets only its ACLs', async () => {
    const dataDir = path.join(tmp, 'data');
    const base = await consecutiveFreePorts(4);
    const run = new LocalRun(['--nodes', '2', '--data-dir', dataDir, '--base-port', String(base), '--tls', '--auth']);
    await run.ready();
    expect(run.stdout).to.include('security.protocol=SASL_SSL');
    const exportLine = /export (SLUICE_BOOTSTRAP=\S+ SLUICE_TLS_CA=\S+ SLUICE_SASL_MECHANISM=\S+ SLUICE_SASL_USERNAME=\S+ SLUICE_SASL_PASSWORD=\S+)/.exec(run.stdout)?.[1];
    expect(exportLine, run.stdout).to.be.a('string');
    const printed = Object.fromEntries(exportLine!.split(' ').map((kv) => kv.split('=') as [string, string]));
    // The admin's password is kept with the CA (mode 0600) for the next run and for --command-config.
    const props = fs.readFileSync(path.join(dataDir, 'tls', 'admin.properties'), 'utf8');
    expect(props).to.include(`sasl.password=${printed.SLUICE_SASL_PASSWORD}`);
    expect(fs.statSync(path.join(dataDir, 'tls', 'admin.properties')).mode & 0o077).to.equal(0);
    const plainEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SLUICE_')));
    const cli = (env: Record<string, string>, args: string[], input?: string) => spawnSync(process.execPath, [MAIN_JS, ...args, '--request-timeout-ms', '5000'],
      { encoding: 'utf8', timeout: 30_000, env: { ...plainEnv, ...env }, ...(input ? { input } : {}) });
    const admin = printed;
    const ok = (r: ReturnType<typeof cli>) => expect(r.status, `${r.stdout}\n${r.stderr}`).to.equal(0);

    ok(cli(admin, ['topics', 'create', '--topic', 'demo', '--partitions', '1', '--replication-factor', '2']));
    ok(cli(admin, ['produce', '--topic', 'demo'], 'hello as admin\n'));
    const read = cli(admin, ['consume', '--topic', 'demo', '--from-beginning', '--max-messages', '1']);
    expect(read.stdout.trim(), read.stderr).to.equal('hello as admin');
    // The nodes replicate to each other by their certificates on the login-only broker listener: the ISR is full.
    await waitFor('a full ISR on demo', () => {
      const d = cli(admin, ['topics', 'describe', '--topic', 'demo', '--json']);
      return d.status === 0 && (JSON.parse(d.stdout) as Array<{ partitions: Array<{ isr: number[] }> }>)[0]!.partitions[0]!.isr.length === 2;
    }, { timeoutMs: 30_000, intervalMs: 500 });

    const anonymous = cli({ SLUICE_BOOTSTRAP: admin.SLUICE_BOOTSTRAP!, SLUICE_TLS_CA: admin.SLUICE_TLS_CA! }, ['topics', 'list']);
    expect(anonymous.status).to.equal(1);
    expect(anonymous.stderr).to.match(/before SASL authentication/);
    const wrong = cli({ ...admin, SLUICE_SASL_PASSWORD: 'not-the-password' }, ['topics', 'list']);
    expect(wrong.status).to.equal(1);
    expect(wrong.stderr).to.match(/SASL_AUTHENTICATION_FAILED/);

    ok(cli({ ...admin, SLUICE_USER_PASSWORD: 'alice-secret' }, ['users', 'create', 'alice']));
    ok(cli(admin, ['acls', 'add', '--allow-principal', 'User:alice', '--operation', 'Write', '--operation', 'Create', '--topic', 'alice-', '--resource-pattern-type', 'prefixed']));
    const alice = { ...admin, SLUICE_SASL_MECHANISM: 'SCRAM-SHA-256', SLUICE_SASL_USERNAME: 'alice', SLUICE_SASL_PASSWORD: 'alice-secret' };
    ok(cli(alice, ['topics', 'create', '--topic', 'alice-orders', '--partitions', '1', '--replication-factor', '2']));
    ok(cli(alice, ['produce', '--topic', 'alice-orders'], 'from alice\n'));
    const elsewhere = cli(alice, ['produce', '--topic', 'demo'], 'not allowed\n');
    expect(elsewhere.status).to.equal(1);
    expect(elsewhere.stderr).to.match(/TOPIC_AUTHORIZATION_FAILED/);
    const notRead = cli(alice, ['consume', '--topic', 'alice-orders', '--from-beginning', '--max-messages', '1', '--timeout-ms', '5000']);
    expect(notRead.status, notRead.stdout).to.equal(1);
    expect(notRead.stderr).to.match(/TOPIC_AUTHORIZATION_FAILED/);
    // Nothing of the refused produce reached demo; alice's record is in her topic.
    const demo = cli(admin, ['consume', '--topic', 'demo', '--from-beginning', '--max-messages', '2', '--timeout-ms', '3000']);
    expect(demo.stdout.trim()).to.equal('hello as admin');
    const mine = cli(admin, ['consume', '--topic', 'alice-orders', '--from-beginning', '--max-messages', '1']);
    expect(mine.stdout.trim(), mine.stderr).to.equal('from alice');
    expect(await run.interrupt()).to.equal(0);
  });

  it('refuses a port in use with one line naming it, before creating anything', async () => {
    const base = await consecutiveFreePorts(6);
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(base + 3, '127.0.0.1', () => resolve()));
    try {
      const dataDir = path.join(tmp, 'data');
      const r = local(['--nodes', '3', '--data-dir', dataDir, '--base-port', String(base)]);
      expect(r.status).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.include(`port ${base + 3} `).and.match(/in use/);
      expect(r.stdout).to.equal('');
      expect(fs.existsSync(dataDir)).to.equal(false);
    } finally {
      blocker.close();
    }
  });

  it('exits 2 with usage for bad flags', () => {
    for (const bad of [['--nodes', '0'], ['--nodes', '10'], ['--nodes', 'two'], ['--base-port', '80'], ['--base-port', '65534'], ['--no-such-flag']]) {
      const r = local([...bad, '--data-dir', path.join(tmp, 'data')]);
      expect(r.status, bad.join(' ')).to.equal(2);
      expect(r.stderr, bad.join(' ')).to.match(/sluice local \[--nodes 3\]/).and.match(/^sluice: /m);
    }
    const noTls = local(['--auth', '--data-dir', path.join(tmp, 'data')]);
    expect(noTls.status).to.equal(2);
    expect(noTls.stderr).to.match(/--auth needs --tls/);
    expect(fs.existsSync(path.join(tmp, 'data'))).to.equal(false);
  });

  it('exits 2 with one line when the data dir holds a cluster of another size', () => {
    const dataDir = path.join(tmp, 'data');
    for (const id of [1, 2, 3]) {
      fs.mkdirSync(path.join(dataDir, `node-${id}`), { recursive: true });
      fs.writeFileSync(path.join(dataDir, `node-${id}`, 'meta.properties'), `version=1\nnode.id=${id}\ncluster.id=abc\n`);
    }
    const r = local(['--nodes', '2', '--data-dir', dataDir, '--base-port', '20000']);
    expect(r.status).to.equal(2);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.match(/holds node-1, node-2, node-3/).and.match(/--nodes 3/);
  });
});
