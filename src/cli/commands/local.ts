// `sluice local`: N combined nodes on 127.0.0.1 as children of this process,
// in the foreground, until Ctrl-C. The plan (ports, dirs, text) lives in
// ../local-plan.ts, the processes in ../local-cluster.ts; this file is the
// operator's view: checks before anything starts, progress on stderr, the
// table on stdout once ready, and the stop.
//
// Exit codes: 2 for bad flags (usage) and for a --data-dir that holds a
// cluster of another size than --nodes (the fix is a flag: one line, no
// usage); 1 for operating failures (data dir unusable or in use, a port in
// use, not ready within readyTimeoutMs, a node that died, a node that did
// not stop cleanly, a second Ctrl-C); 0 after Ctrl-C/SIGTERM stopped every
// node cleanly. Progress and one-line reasons go to stderr; stdout carries
// only the ready table, so it can be piped.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import {
  LOCAL_BASE_PORT_DEFAULT, LOCAL_DATA_DIR_DEFAULT, LOCAL_HOST, LOCAL_NODES_DEFAULT, LOCAL_NODES_MAX,
  dataDirMismatch, planLocalCluster, readyReport, validateLocalFlags, type LocalOptions, type LocalPlan, type RunningNode,
} from '../local-plan.js';
import { LocalCluster, inspectDataDir, type DataDirState, type NodeExit } from '../local-cluster.js';
import { firstBusyPort } from '../port-check.js';

/** How long start-up may take before `sluice local` gives up and stops every node. */
const READY_TIMEOUT_MS = 60_000;
/** How long the nodes get for their controlled shutdown before SIGKILL. */
const STOP_GRACE_MS = 30_000;
/** The `sluice` entry point the nodes run: this build's main.js (<out>/src/cli/commands/local.js → <out>/src/cli/main.js). */
const MAIN_JS = fileURLToPath(new URL('../main.js', import.meta.url));

interface LocalFlags {
  readonly nodes: number;
  readonly dataDir: string;
  readonly basePort: number;
  readonly consoleAdmin?: boolean;
  readonly tls: boolean;
  readonly auth: boolean;
}

function builder(y: Argv): Argv<LocalFlags> {
  return y
    .usage('$0 local [--nodes 3] [--data-dir ./data] [--base-port 9092] [--tls [--auth]]\n\n'
      + 'Runs N combined (broker,controller) nodes on 127.0.0.1 in the foreground; Ctrl-C stops them. '
      + 'Node i listens on base-port+2(i-1) (broker) and base-port+2(i-1)+1 (controller); '
      + 'its data and server.log are in <data-dir>/node-<i>. Running it again resumes the same cluster.')
    .option('nodes', { type: 'number', default: LOCAL_NODES_DEFAULT, describe: `number of nodes, 1-${LOCAL_NODES_MAX} (all of them quorum voters)` })
    .option('data-dir', { type: 'string', default: LOCAL_DATA_DIR_DEFAULT, describe: 'parent of the node-<i> data dirs' })
    .option('base-port', { type: 'number', default: LOCAL_BASE_PORT_DEFAULT, describe: 'first port; the nodes use 2 x nodes consecutive ports from here (plus Kafka listeners 100 and HTTP listeners 200 above the broker ports)' })
    .option('tls', { type: 'boolean', default: false, describe: 'every listener on TLS (wss://, Kafka SSL://) with a throw-away CA and certificates in <data-dir>/tls; nodes require each other\'s certificates' })
    .option('auth', { type: 'boolean', default: false, describe: 'with --tls: ACLs on, SASL logins (SCRAM) required on every client listener, the nodes and an admin user as super users; prints the admin\'s password' })
    .option('console-admin', { type: 'boolean', default: false, describe: 'let the web consoles (http://127.0.0.1:<base-port+200>/console/) produce records and run admin actions' })
    .example('$0 local', '3 nodes, brokers on ws://127.0.0.1:9092, :9094, :9096')
    .example('$0 local --tls', 'the same on TLS: brokers on wss://127.0.0.1:9092, ...; prints the CA and client certificate to use')
    .example('$0 local --tls --auth', 'the same with logins and ACLs: prints the admin user\'s password and how to create users')
    .example('$0 local --nodes 1 --data-dir /tmp/sluice --base-port 19092', 'one node elsewhere')
    .check((args) => {
      const why = validateLocalFlags({ nodes: args.nodes, basePort: args.basePort, dataDir: args.dataDir, tls: args.tls, auth: args.auth });
      if (why) throw new Error(why);
      return true;
    }) as unknown as Argv<LocalFlags>;
}

/** How this process was started, for commands printed to be pasted: `sluice` when run as the linked binary. */
function invokedAs(): string {
  const script = process.argv[1] ?? '';
  if (path.basename(script) !== 'main.js') return 'sluice';
  const rel = path.relative(process.cwd(), script);
  return `node ${rel.startsWith('..') ? script : rel}`;
}

function progress(line: string): void {
  process.stderr.write(`sluice local: ${line}\n`);
}

function failLine(message: string): void {
  process.stderr.write(`sluice: ${message}\n`);
}

/** Checks that need no process: the data dir fits the flags and is free, every port is free. Exit code or undefined. */
async function preflight(opts: LocalOptions, plan: LocalPlan): Promise<number | undefined> {
  let state: DataDirState;
  try {
    state = inspectDataDir(plan);
  } catch (err) {
    failLine(`data dir ${opts.dataDir} is not usable: ${(err as Error).message}`);
    return 1;
  }
  const mismatch = dataDirMismatch(opts, state.formatted);
  if (mismatch) {
    failLine(mismatch);
    return 2;
  }
  if (state.lockedBy) {
    failLine(`data dir ${state.lockedBy.dataDir} is in use by process ${state.lockedBy.pid} (another sluice local or server on the same --data-dir?)`);
    return 1;
  }
  const busy = await firstBusyPort(plan.ports, LOCAL_HOST);
  if (busy) {
    failLine(busy);
    return 1;
  }
  return undefined;
}

function describeExit(exit: NodeExit): string {
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  const last = exit.stderrTail.at(-1);
  return `node ${exit.node.id} (pid ${exit.pid}) exited unexpectedly (${how})${last ? `: ${last}` : ''}; its log: ${exit.node.logFile}`;
}

/** One line on how the stop went; `clean` when every node exited 0 by itself. */
function stopSummary(exits: readonly NodeExit[], failed: NodeExit | undefined): { line: string; clean: boolean } {
  const unclean = exits.filter((e) => e !== failed && (e.killed || e.code !== 0));
  const stopped = exits.filter((e) => e !== failed).length;
  if (unclean.length === 0) return { line: `stopped ${stopped} node(s)`, clean: true };
  const which = unclean.map((e) => `node ${e.node.id} (${e.killed ? `SIGKILL after ${STOP_GRACE_MS / 1000} s` : `exit code ${e.code ?? e.signal}`}; log: ${e.node.logFile})`);
  return { line: `stopped ${stopped} node(s); not cleanly: ${which.join(', ')}`, clean: false };
}

/** Starts the cluster and resolves with the exit code once it is stopped. */
function run(plan: LocalPlan): Promise<number> {
  return new Promise<number>((resolve) => {
    let phase: 'starting' | 'running' | 'stopping' = 'starting';
    let failed: NodeExit | undefined;
    let killing = false;

    const shutdown = async (code: number): Promise<void> => {
      if (phase === 'stopping') return;
      phase = 'stopping';
      progress(`stopping ${cluster.liveCount} node(s) (Ctrl-C again to kill them at once)`);
      const summary = stopSummary(await cluster.stop(STOP_GRACE_MS), failed);
      if (killing) return;
      progress(summary.line);
      resolve(summary.clean ? code : 1);
    };
    const cluster = new LocalCluster(plan, MAIN_JS, (exit) => {
      failed = exit;
      failLine(describeExit(exit));
      void shutdown(1);
    });
    const onSignal = (signal: NodeJS.Signals) => {
      if (phase !== 'stopping') {
        progress(`${signal}: stopping`);
        void shutdown(0);
        return;
      }
      if (killing) return;
      killing = true;
      progress(`${signal} again: killing every node`);
      void cluster.killNow().then(() => resolve(1));
    };
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);

    let running: RunningNode[];
    try {
      running = cluster.start();
    } catch (err) {
      failLine(`cannot start the nodes: ${(err as Error).message}`);
      phase = 'stopping';
      resolve(1);
      return;
    }
    progress(`starting ${plan.nodes.length} node(s) (pids ${running.map((r) => r.pid).join(', ')}; logs in ${plan.dataDir}/node-<id>/server.log)`);
    cluster.waitReady(progress, READY_TIMEOUT_MS).then(async (clusterId) => {
      let adminPassword: string | undefined;
      try {
        adminPassword = plan.auth ? await ensureAdminUser(plan) : undefined;
      } catch (err) {
        if (phase !== 'starting') return;
        failLine(`cannot set the admin user: ${(err as Error).message}`);
        void shutdown(1);
        return;
      }
      if (phase !== 'starting') return;
      phase = 'running';
      process.stdout.write(readyReport(plan, running, clusterId, invokedAs(), adminPassword));
      progress('running; Ctrl-C stops every node');
    }, (err: Error) => {
      if (phase !== 'starting') return; // a signal or a dead node is already being handled
      failLine(`cluster not ready: ${err.message} (limit ${READY_TIMEOUT_MS / 1000} s); see ${plan.nodes.map((n) => n.logFile).join(', ')}`);
      void shutdown(1);
    });
  });
}

async function handler(args: ArgumentsCamelCase<LocalFlags>): Promise<void> {
  const opts: LocalOptions = { nodes: args.nodes, dataDir: args.dataDir, basePort: args.basePort, tls: args.tls, auth: args.auth, consoleAdmin: args.consoleAdmin === true };
  const plan = planLocalCluster(opts);
  const refused = await preflight(opts, plan);
  if (refused !== undefined) process.exit(refused);
  if (plan.tls) await ensureTlsFiles(plan);
  process.exit(await run(plan));
}

/** The CA and certificates of a --tls cluster: made on the first run, kept on later ones (the nodes resume with them). */
async function ensureTlsFiles(plan: LocalPlan): Promise<void> {
  const t = plan.tls!;
  const have = [t.caFile, t.clientCert, t.clientKey, ...plan.nodes.map((n) => t.nodeKeystore(n.id))].every((f) => fs.existsSync(f));
  if (have) {
    progress(`TLS: using the CA and certificates in ${t.dir}`);
    return;
  }
  progress(`TLS: making a throw-away CA and certificates in ${t.dir}`);
  // Loaded here only: every other command starts without node-forge.
  const { writeLocalTlsFiles } = await import('../../net/tls-certs.js');
  writeLocalTlsFiles(t.dir, plan.nodes.map((n) => n.id), LOCAL_HOST);
}

/** The admin's password: the one in its properties file from an earlier run, or a new random one written there (mode 0600). */
function adminPassword(plan: LocalPlan): string {
  const a = plan.auth!;
  try {
    const m = /^sasl\.password=(.+)$/m.exec(fs.readFileSync(a.adminProperties, 'utf8'));
    if (m?.[1]) return m[1].trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const password = randomBytes(18).toString('base64url');
  const t = plan.tls!;
  fs.writeFileSync(a.adminProperties, [
    '# sluice local --auth: the admin login (a super user). For `sluice --command-config` and Kafka clients.',
    'security.protocol=SASL_SSL',
    `sasl.mechanism=${a.mechanism}`,
    `sasl.username=${a.adminUser}`,
    `sasl.password=${password}`,
    `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${a.adminUser}" password="${password}";`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${t.caFile}`,
    '',
  ].join('\n'), { mode: 0o600 });
  return password;
}

/**
 * The admin SCRAM user, set (again) on every start through the CLI's client
 * certificate — a super user that needs no SASL login, so the first user has
 * no chicken-and-egg problem. Setting it on each start also repairs a
 * deleted user. Resolves with the password.
 */
async function ensureAdminUser(plan: LocalPlan): Promise<string> {
  const a = plan.auth!;
  const t = plan.tls!;
  const password = adminPassword(plan);
  const { Client } = await import('../../index.js');
  const client = new Client({
    bootstrap: plan.nodes.map((n) => n.brokerUrl), clientId: 'sluice-local',
    tls: { ca: fs.readFileSync(t.caFile, 'utf8'), cert: fs.readFileSync(t.clientCert, 'utf8'), key: fs.readFileSync(t.clientKey, 'utf8') },
  });
  try {
    await client.admin().alterUserScramCredentials({
      upsertions: (['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const).map((mechanism) => ({ user: a.adminUser, mechanism, password })),
    });
  } finally {
    await client.close();
  }
  progress(`auth: SCRAM user ${a.adminUser} set (its password is in ${a.adminProperties})`);
  return password;
}

export const localCommand: CommandModule<object, LocalFlags> = {
  command: 'local',
  describe: 'Run a local cluster of N combined nodes in the foreground',
  builder,
  handler,
};
