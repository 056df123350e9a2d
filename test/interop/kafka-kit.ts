// Kit for the Kafka interop tests (issue 14): real Kafka clients and tools
// against a real Sluice cluster's Kafka listeners.
//
// - startKafkaTarget(): a 3-node Sluice cluster (broker-kit's start, kafka: true:
//   `--kafka-listen 127.0.0.1:<free port>` on every node), up once KafkaJS
//   sees every broker in Metadata on every Kafka listener. With
//   SLUICE_INTEROP_TARGET=kafka it is instead one real Apache Kafka broker
//   (KRaft, jars from `scripts/interop-tools.sh --kafka-broker`): the same
//   tests then check the client programs themselves; tests that need Sluice
//   (a leader to kill, the WebSocket side) skip there.
// - kafkaListenerMissing(): why Sluice cannot be tested yet (the server has
//   no --kafka-listen flag), or null. While the listener is being built it
//   serves some APIs only: the target records what ApiVersions advertises,
//   and requireApis() skips a test (saying which are missing) until every API
//   its client needs is served, so each test turns on as its APIs land.
// - findTool(): where kcat, the Java program and Kafka's tools, franz-go and
//   confluent-kafka are (scripts/interop-tools.sh puts them there), or null
//   with the reason; skipUnless() prints the reason and skips the test.
// - runTool() runs a tool to its end within a bound; spawnTool() starts a
//   long-running one (a group member) whose JSON-line events the test waits
//   on. Both kill by PID when the bound passes; stopTools() kills whatever is
//   left, and the target's stop() kills the cluster by PID.
//
// Waits are on conditions with bounds (harness.waitFor), never fixed sleeps.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { MAIN_JS, freePorts, waitFor, type ProcessCluster } from '../integration/harness.js';
import { connect, createTopic as createTopicOverWebSocket, startBrokerCluster } from '../integration/broker-kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root: <root>/dist/test/interop → <root>. */
export const REPO_ROOT = path.resolve(here, '../../..');
export const CACHE_DIR = process.env.SLUICE_INTEROP_CACHE ?? path.join(REPO_ROOT, 'node_modules/.cache/sluice-interop');

export const CLUSTER_UP_MS = 60_000;
export const TOOL_TIMEOUT_MS = 90_000;
const OUTPUT_CHARS_KEPT = 1_000_000;
const STOP_GRACE_MS = 10_000;

// ---------------------------------------------------------------- the target

export interface KafkaTarget {
  /** 'sluice': a 3-node Sluice cluster; 'kafka': one Apache Kafka broker (validating the client programs). */
  readonly kind: 'sluice' | 'kafka';
  /** host:port,... of every Kafka listener. */
  readonly bootstrap: string;
  /** Kafka listener port by node id. */
  readonly kafkaPorts: ReadonlyMap<number, number>;
  /** Replication factor for test topics: every broker. */
  readonly replicationFactor: number;
  /** The Sluice cluster (kind 'sluice'): WebSocket listeners, nodes to kill. */
  readonly cluster: ProcessCluster | null;
  /** KafkaJS admin on the target (connected); closed by stop(). */
  readonly admin: Admin;
  /** API key → [min, max] version, as the first listener's ApiVersions v0 advertises them. */
  readonly apis: ReadonlyMap<number, readonly [number, number]>;
  /** The last lines the servers printed, for a failing test's report. */
  logs(): string;
  stop(): Promise<void>;
}

let listenerProbe: string | null | undefined;

/** Why the Sluice server cannot be tested over Kafka's protocol (no --kafka-listen flag yet), or null. */
export function kafkaListenerMissing(): string | null {
  if (listenerProbe !== undefined) return listenerProbe;
  const r = spawnSync(process.execPath, [MAIN_JS, 'server', '--help'], { encoding: 'utf8', timeout: 30_000 });
  const help = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  listenerProbe = help.includes('--kafka-listen')
    ? null
    : `sluice server has no --kafka-listen flag yet (the Kafka listener, issue 14): \`sluice server --help\` does not list it`;
  return listenerProbe;
}

export function targetKind(): 'sluice' | 'kafka' {
  return process.env.SLUICE_INTEROP_TARGET === 'kafka' ? 'kafka' : 'sluice';
}

/** Why the configured target cannot be started here, or null. */
export function targetMissing(): string | null {
  if (targetKind() === 'sluice') return kafkaListenerMissing();
  const lib = path.join(CACHE_DIR, 'kafka-broker/lib');
  if (!fs.existsSync(path.join(lib, '.stamp'))) return `SLUICE_INTEROP_TARGET=kafka but no broker jars in ${lib} (run scripts/interop-tools.sh --kafka-broker)`;
  return javaMissing();
}

/**
 * In a `before` hook: the target, or a skip of the whole suite (with the reason
 * printed) when it cannot run here. Call `stop()` in `after`.
 */
export async function startOrSkip(ctx: Mocha.Context): Promise<KafkaTarget> {
  const why = targetMissing();
  if (why !== null) {
    console.log(`      skipping: ${why}`);
    ctx.skip();
  }
  return startKafkaTarget();
}

// ---------------------------------------------------------------- APIs served

/** Kafka's API keys (the ones the interop clients use). */
export const API_KEYS = {
  Produce: 0, Fetch: 1, ListOffsets: 2, Metadata: 3, OffsetCommit: 8, OffsetFetch: 9, FindCoordinator: 10,
  JoinGroup: 11, Heartbeat: 12, LeaveGroup: 13, SyncGroup: 14, DescribeGroups: 15, ListGroups: 16, ApiVersions: 18,
  CreateTopics: 19, DeleteTopics: 20, InitProducerId: 22, OffsetForLeaderEpoch: 23,
  AddPartitionsToTxn: 24, AddOffsetsToTxn: 25, EndTxn: 26, TxnOffsetCommit: 28, DescribeConfigs: 32,
  CreatePartitions: 37, DeleteGroups: 42, IncrementalAlterConfigs: 44, AlterPartitionReassignments: 45,
  ListPartitionReassignments: 46, DescribeCluster: 60,
} as const;
export type ApiName = keyof typeof API_KEYS;

/** What a client needs for a kind of work (beyond ApiVersions). */
export const NEEDS = {
  /** The kit's createTopic (over WebSocket when the listener lacks CreateTopics) and waitForLeaders. */
  topics: ['Metadata'],
  /** An idempotent producer. */
  produce: ['Metadata', 'Produce', 'InitProducerId'],
  /** Reading partitions (and the kit's end offsets). */
  read: ['Metadata', 'Fetch', 'ListOffsets'],
  /** A classic-protocol group member that commits (and the kit's committedOffsets). */
  group: ['FindCoordinator', 'JoinGroup', 'SyncGroup', 'Heartbeat', 'LeaveGroup', 'OffsetCommit', 'OffsetFetch'],
  deleteTopics: ['DeleteTopics'],
} as const satisfies Record<string, readonly ApiName[]>;

/** Skips the test, naming the APIs, unless the target serves every one of `names`. */
export function requireApis(ctx: Mocha.Context, target: KafkaTarget, ...names: ReadonlyArray<ApiName | readonly ApiName[]>): void {
  const wanted = [...new Set(names.flat())] as ApiName[];
  const missing = wanted.filter((n) => !target.apis.has(API_KEYS[n]));
  if (missing.length > 0) {
    console.log(`      skipping: the Kafka listener does not serve ${missing.join(', ')} yet`);
    ctx.skip();
  }
}

/** ApiVersions v0 on one listener, by hand (no client library): API key → [min, max]. */
export function probeApiVersions(host: string, port: number, timeoutMs = 10_000): Promise<Map<number, [number, number]>> {
  return new Promise((resolve, reject) => {
    const clientId = Buffer.from('sluice-interop-probe');
    const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
    body.writeInt16BE(API_KEYS.ApiVersions, 0);
    body.writeInt16BE(0, 2); // version 0: every broker answers it
    body.writeInt32BE(1, 4); // correlation id
    body.writeInt16BE(clientId.length, 8);
    clientId.copy(body, 10);
    const frame = Buffer.concat([Buffer.alloc(4), body]);
    frame.writeInt32BE(body.length, 0);
    let got = Buffer.alloc(0);
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => socket.destroy(new Error(`ApiVersions on ${host}:${port}: no answer in ${timeoutMs} ms`)), timeoutMs);
    socket.on('connect', () => socket.write(frame));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 4 || got.length < 4 + got.readInt32BE(0)) return;
      clearTimeout(timer);
      socket.destroy();
      // size, correlation id, error code, [api key, min, max]
      const errorCode = got.readInt16BE(8);
      if (errorCode !== 0) return reject(new Error(`ApiVersions on ${host}:${port}: error ${errorCode}`));
      const n = got.readInt32BE(10);
      const out = new Map<number, [number, number]>();
      for (let i = 0, at = 14; i < n; i++, at += 6) out.set(got.readInt16BE(at), [got.readInt16BE(at + 2), got.readInt16BE(at + 4)]);
      resolve(out);
    });
  });
}

async function advertisedApis(bootstrap: string): Promise<Map<number, [number, number]>> {
  const [host, port] = bootstrap.split(',')[0]!.split(':') as [string, string];
  return probeApiVersions(host, Number(port));
}

export function startKafkaTarget(): Promise<KafkaTarget> {
  return targetKind() === 'kafka' ? startApacheKafka() : startSluice();
}

function kafkaAdmin(bootstrap: string): Kafka {
  return new Kafka({ clientId: 'sluice-interop-kit', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 2 } });
}

/** Waits until Metadata on every listener lists `brokers` brokers; returns a connected admin. */
async function waitForBrokers(bootstrap: string, brokers: number, logs: () => string): Promise<Admin> {
  try {
    await waitFor(`${brokers} brokers in Metadata on every Kafka listener`, async () => {
      for (const hostPort of bootstrap.split(',')) {
        const admin = kafkaAdmin(hostPort).admin();
        try {
          await admin.connect();
          if ((await admin.describeCluster()).brokers.length !== brokers) return false;
        } finally {
          await admin.disconnect();
        }
      }
      return true;
    }, { timeoutMs: CLUSTER_UP_MS, intervalMs: 250 });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${logs()}`);
  }
  const admin = kafkaAdmin(bootstrap).admin();
  await admin.connect();
  return admin;
}

async function startSluice(): Promise<KafkaTarget> {
  const cluster = await startBrokerCluster(3, [], { timeoutMs: CLUSTER_UP_MS, kafka: true });
  const kafkaPorts = new Map(cluster.nodes.filter((n) => n.kafkaPort !== undefined).map((n) => [n.id, n.kafkaPort!]));
  const bootstrap = cluster.kafkaBootstrap;
  let admin: Admin;
  let apis: Map<number, [number, number]>;
  try {
    admin = await waitForBrokers(bootstrap, 3, () => cluster.dumpLogs());
    apis = await advertisedApis(bootstrap);
  } catch (err) {
    await cluster.cleanup();
    throw err;
  }
  return {
    kind: 'sluice', bootstrap, kafkaPorts, replicationFactor: 3, cluster, admin, apis,
    logs: () => cluster.dumpLogs(),
    stop: async () => {
      await admin.disconnect().catch(() => {});
      await stopTools();
      await cluster.cleanup();
    },
  };
}

/** One Apache Kafka 4.x broker in KRaft combined mode on loopback, from the Maven jars. */
async function startApacheKafka(): Promise<KafkaTarget> {
  const lib = path.join(CACHE_DIR, 'kafka-broker/lib');
  const [port, controllerPort] = await freePorts(2) as [number, number];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-kafka-peer-'));
  const props = path.join(dir, 'server.properties');
  fs.writeFileSync(props, [
    'process.roles=broker,controller', 'node.id=1',
    `controller.quorum.bootstrap.servers=127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER', 'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${path.join(dir, 'data')}`,
    'offsets.topic.replication.factor=1', 'transaction.state.log.replication.factor=1', 'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0', 'num.partitions=1', '',
  ].join('\n'));
  const cp = `${lib}/*`;
  const format = await runTool({ name: 'kafka-storage', argv: ['java', '-cp', cp, 'kafka.tools.StorageTool'] },
    ['format', '-t', 'c2x1aWNlLWludGVyb3AxMQ', '-c', props, '--standalone'], { timeoutMs: 60_000 });
  if (format.status !== 0) throw new Error(`kafka.tools.StorageTool format failed: ${format.stderr}${format.stdout}`);
  const broker = spawnTool({ name: 'kafka', argv: ['java', '-Xmx768m', '-cp', cp, 'kafka.Kafka'] }, [props], { timeoutMs: 60 * 60_000 });
  const logs = () => broker.stdout.slice(-6000) + broker.stderr.slice(-6000);
  let admin: Admin;
  let apis: Map<number, [number, number]>;
  try {
    admin = await waitForBrokers(`127.0.0.1:${port}`, 1, logs);
    apis = await advertisedApis(`127.0.0.1:${port}`);
  } catch (err) {
    await broker.kill();
    throw err;
  }
  return {
    kind: 'kafka', bootstrap: `127.0.0.1:${port}`, kafkaPorts: new Map([[1, port]]), replicationFactor: 1, cluster: null, admin, apis, logs,
    stop: async () => {
      await admin.disconnect().catch(() => {});
      await stopTools();
      await broker.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Creates a topic through KafkaJS and waits until every partition has a leader.
 * Not KafkaJS's waitForLeaders: it retries LEADER_NOT_AVAILABLE only, and a
 * broker may answer UNKNOWN_TOPIC_OR_PARTITION until it has the new metadata.
 * On a Sluice listener that does not serve CreateTopics yet, the topic is
 * created over WebSocket instead, so tests that need only Metadata run.
 */
export async function createTopic(target: KafkaTarget, topic: string, partitions: number): Promise<void> {
  if (target.cluster !== null && !target.apis.has(API_KEYS.CreateTopics)) {
    const conn = await connect(target.cluster.brokerUrls[0]!);
    try {
      await createTopicOverWebSocket(conn, topic, partitions, target.replicationFactor);
    } finally {
      conn.close();
    }
    await waitForLeaders(target, topic, partitions);
    return;
  }
  await target.admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: target.replicationFactor }], waitForLeaders: false, timeout: 30_000 });
  await waitForLeaders(target, topic, partitions);
}

/** Leader node id by partition, once every partition of `topic` has a leader. */
export async function waitForLeaders(target: KafkaTarget, topic: string, partitions: number): Promise<Map<number, number>> {
  return waitFor(`a leader for every partition of ${topic}`, async () => {
    const md = await target.admin.fetchTopicMetadata({ topics: [topic] });
    const ps = md.topics[0]?.partitions ?? [];
    if (ps.length !== partitions || !ps.every((p) => p.leader >= 0 && p.partitionErrorCode === 0)) return undefined;
    return new Map(ps.map((p) => [p.partitionId, p.leader]));
  }, { timeoutMs: 30_000, intervalMs: 200 });
}

/** Committed offsets of `group` on `topic` by partition (only partitions with a commit). */
export async function committedOffsets(target: KafkaTarget, group: string, topic: string): Promise<Map<number, number>> {
  const res = await target.admin.fetchOffsets({ groupId: group, topics: [topic] });
  const out = new Map<number, number>();
  for (const p of res[0]?.partitions ?? []) if (Number(p.offset) >= 0) out.set(p.partition, Number(p.offset));
  return out;
}

/** The log end offset (high watermark) of every partition of `topic`, summed. */
export async function endOffsetTotal(target: KafkaTarget, topic: string): Promise<number> {
  const offs = await target.admin.fetchTopicOffsets(topic);
  return offs.reduce((sum, o) => sum + Number(o.high), 0);
}

// ---------------------------------------------------------------- tools

export type ToolName = 'kcat' | 'java' | 'kafka-tools' | 'franz' | 'python';

/** A program to run: argv[0] is the executable, the rest come before the caller's arguments. */
export interface Tool {
  readonly name: string;
  readonly argv: readonly string[];
}

export interface Located {
  readonly tool: Tool | null;
  /** Why the tool is missing (when tool is null). */
  readonly reason: string;
}

function onPath(bin: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, bin);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch { /* not here */ }
  }
  return null;
}

function javaMissing(): string | null {
  return onPath('java') === null ? 'java is not on PATH (a JDK 17+ is needed)' : null;
}

const INSTALL_HINT = 'run scripts/interop-tools.sh';

/** Where `name` is, or null with the reason. */
export function findTool(name: ToolName): Located {
  const missing = (reason: string): Located => ({ tool: null, reason: `${name}: ${reason}` });
  switch (name) {
    case 'kcat': {
      const bin = onPath('kcat') ?? onPath('kafkacat');
      return bin ? { tool: { name, argv: [bin] }, reason: '' } : missing(`neither kcat nor kafkacat is on PATH (${INSTALL_HINT}: Debian's kcat package)`);
    }
    case 'java':
    case 'kafka-tools': {
      const lib = path.join(CACHE_DIR, 'java/lib');
      const classes = path.join(CACHE_DIR, 'java/classes');
      const why = javaMissing();
      if (why) return missing(why);
      if (!fs.existsSync(path.join(lib, '.stamp'))) return missing(`no kafka-clients/kafka-tools jars in ${lib} (${INSTALL_HINT})`);
      if (name === 'kafka-tools') return { tool: { name, argv: ['java', '-Xmx512m', '-cp', `${lib}/*`] }, reason: '' };
      if (!fs.existsSync(path.join(classes, '.stamp'))) return missing(`the Interop program is not compiled in ${classes} (${INSTALL_HINT})`);
      return { tool: { name, argv: ['java', '-Xmx512m', '-cp', `${lib}/*${path.delimiter}${classes}`, 'sluice.interop.Interop'] }, reason: '' };
    }
    case 'franz': {
      const bin = path.join(CACHE_DIR, 'franz/franz-interop');
      return fs.existsSync(bin) ? { tool: { name, argv: [bin] }, reason: '' } : missing(`${bin} is not built (${INSTALL_HINT}; needs go)`);
    }
    case 'python': {
      const py = path.join(CACHE_DIR, 'python-venv/bin/python');
      const script = path.join(REPO_ROOT, 'test/interop/python/interop.py');
      if (!fs.existsSync(path.join(CACHE_DIR, 'python-venv/.stamp'))) return missing(`no venv with confluent-kafka in ${path.dirname(path.dirname(py))} (${INSTALL_HINT})`);
      return { tool: { name, argv: [py, script] }, reason: '' };
    }
    default: {
      const never: never = name;
      throw new Error(`unknown tool ${String(never)}`);
    }
  }
}

/**
 * kcat with a librdkafka that has OIDC (`sasl.oauthbearer.method=oidc`, librdkafka ≥ 1.9 built with libcurl),
 * or null with the reason. Debian's kcat links the system librdkafka (2.0.2 on bookworm, built without
 * libcurl: no `oidc` in builtin.features); then the same kcat binary runs on the librdkafka that the
 * confluent-kafka wheel bundles (same soname, ABI-stable), through a `librdkafka.so.1` link in `workDir`
 * and LD_LIBRARY_PATH.
 */
export function findKcatWithOidc(workDir: string): Located {
  const kcat = findTool('kcat');
  if (kcat.tool === null) return kcat;
  const features = (env?: Record<string, string>): string => {
    const r = spawnSync(kcat.tool!.argv[0]!, ['-V'], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, ...env } });
    return /builtin\.features=([^\s)]+)/.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`)?.[1] ?? '';
  };
  if (features().split(',').includes('oidc')) return kcat;
  const venvLib = path.join(CACHE_DIR, 'python-venv/lib');
  const libs = (fs.existsSync(venvLib) ? fs.readdirSync(venvLib) : []).flatMap((py) => {
    const d = path.join('python-venv/lib', py, 'site-packages/confluent_kafka.libs');
    return fs.existsSync(path.join(CACHE_DIR, d)) ? fs.readdirSync(path.join(CACHE_DIR, d)).filter((f) => /^librdkafka.*\.so\.1$/.test(f)).map((f) => path.join(d, f)) : [];
  });
  if (libs.length === 0) return { tool: null, reason: `kcat: its librdkafka has no oidc feature and no confluent-kafka venv with a bundled librdkafka is in ${CACHE_DIR} (${INSTALL_HINT})` };
  const dir = path.join(workDir, 'librdkafka-oidc');
  fs.mkdirSync(dir, { recursive: true });
  fs.rmSync(path.join(dir, 'librdkafka.so.1'), { force: true });
  fs.symlinkSync(path.join(CACHE_DIR, libs[0]!), path.join(dir, 'librdkafka.so.1'));
  const env = { LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(path.delimiter) };
  if (!features(env).split(',').includes('oidc')) return { tool: null, reason: `kcat: neither its librdkafka nor ${libs[0]} has the oidc feature` };
  return { tool: { name: 'kcat', argv: ['env', `LD_LIBRARY_PATH=${env.LD_LIBRARY_PATH}`, kcat.tool.argv[0]!] }, reason: '' };
}

/** Kafka's tool main classes in 4.x (kafka-tools jar); run with findTool('kafka-tools'). */
export const KAFKA_TOOL_CLASSES = {
  topics: 'org.apache.kafka.tools.TopicCommand',
  consumerGroups: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  reassignPartitions: 'org.apache.kafka.tools.reassign.ReassignPartitionsCommand',
  producerPerf: 'org.apache.kafka.tools.ProducerPerformance',
  consumerPerf: 'org.apache.kafka.tools.ConsumerPerformance',
} as const;

/** The tool, or a skipped test (the reason printed first). */
export function toolOrSkip(ctx: Mocha.Context, name: ToolName): Tool {
  const { tool, reason } = findTool(name);
  if (tool === null) {
    console.log(`      skipping: ${reason}`);
    ctx.skip();
  }
  return tool;
}

/** Skips the test (printing why) unless the target is Sluice: for tests that kill a Sluice node or use its WebSocket side. */
export function sluiceOrSkip(ctx: Mocha.Context, target: KafkaTarget, what: string): ProcessCluster {
  if (target.cluster === null) {
    console.log(`      skipping: ${what} needs the Sluice cluster (target is ${target.kind})`);
    ctx.skip();
  }
  return target.cluster;
}

export interface ToolRun {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether the bound passed and the process was killed. */
  readonly timedOut: boolean;
}

/** The JSON objects among `stdout`'s lines (other lines are ignored). */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      out.push(JSON.parse(t) as Record<string, unknown>);
    } catch { /* not JSON */ }
  }
  return out;
}

export interface RunOptions {
  readonly timeoutMs?: number;
  /** Written to stdin, which is then closed (closed at once when absent). */
  readonly input?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** Runs `tool args` to its end (killed by PID past the bound) and collects its output. */
export async function runTool(tool: Tool, args: readonly string[], opts: RunOptions = {}): Promise<ToolRun> {
  const live = spawnTool(tool, args, opts);
  live.closeStdin(opts.input);
  return live.done;
}

/** A running tool: its output so far, waits on its JSON-line events, and a kill by PID. */
export class LiveTool {
  stdout = '';
  stderr = '';
  readonly done: Promise<ToolRun>;
  private timedOut = false;
  private stdinClosed = false;

  constructor(readonly tool: Tool, readonly child: ChildProcess, timeoutMs: number) {
    child.stdout?.on('data', (b: Buffer) => {
      this.stdout = keepTail(this.stdout + b.toString('utf8'));
    });
    child.stderr?.on('data', (b: Buffer) => {
      this.stderr = keepTail(this.stderr + b.toString('utf8'));
    });
    child.stdin?.on('error', () => {}); // the tool may exit before reading its input
    const timer = setTimeout(() => {
      this.timedOut = true;
      this.signal('SIGKILL');
    }, timeoutMs);
    this.done = new Promise((resolve) => {
      const finish = (status: number | null, signal: NodeJS.Signals | null) => {
        clearTimeout(timer);
        liveTools.delete(this);
        resolve({ status, signal, stdout: this.stdout, stderr: this.stderr, timedOut: this.timedOut });
      };
      child.once('error', (err) => {
        this.stderr += `\n${String(err)}`;
        finish(null, null);
      });
      child.once('close', finish);
    });
  }

  get events(): Array<Record<string, unknown>> {
    return jsonLines(this.stdout);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Writes a line to the tool's stdin. */
  write(text: string): void {
    if (!this.stdinClosed) this.child.stdin?.write(text);
  }

  /** Ends stdin (after `input`): the interop programs stop, commit and leave their group on EOF. */
  closeStdin(input?: string): void {
    if (this.stdinClosed) return;
    this.stdinClosed = true;
    this.child.stdin?.end(input ?? '');
  }

  /** Waits until `pred` holds for the events so far; returns them. Throws on timeout or if the tool exits first. */
  async waitForEvents(what: string, pred: (events: Array<Record<string, unknown>>) => boolean, timeoutMs = TOOL_TIMEOUT_MS): Promise<Array<Record<string, unknown>>> {
    return waitFor(`${this.tool.name}: ${what}`, () => {
      const evs = this.events;
      if (pred(evs)) return evs;
      if (!this.running) throw new Error(`${this.tool.name} exited (${this.child.exitCode ?? this.child.signalCode}) first; stderr: ${this.stderr.slice(-2000)}`);
      return undefined;
    }, { timeoutMs, intervalMs: 100 });
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running && this.child.pid !== undefined) {
      try {
        process.kill(this.child.pid, sig);
      } catch { /* already gone */ }
    }
  }

  /** SIGTERM by PID, SIGKILL after a grace period; resolves when it has exited. */
  async kill(): Promise<ToolRun> {
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), STOP_GRACE_MS);
    try {
      return await this.done;
    } finally {
      clearTimeout(timer);
    }
  }
}

function keepTail(s: string): string {
  return s.length > OUTPUT_CHARS_KEPT ? s.slice(s.length - OUTPUT_CHARS_KEPT) : s;
}

const liveTools = new Set<LiveTool>();
process.once('exit', () => {
  for (const t of liveTools) t.signal('SIGKILL');
});

/** Starts `tool args` with stdin open; killed by PID once `timeoutMs` (default TOOL_TIMEOUT_MS) passes. */
export function spawnTool(tool: Tool, args: readonly string[], opts: RunOptions = {}): LiveTool {
  const [bin, ...pre] = tool.argv;
  const child = spawn(bin!, [...pre, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1', ...(opts.env ?? {}) },
  });
  const live = new LiveTool(tool, child, opts.timeoutMs ?? TOOL_TIMEOUT_MS);
  liveTools.add(live);
  return live;
}

/** Kills every tool still running (by PID) and waits for them. */
export async function stopTools(): Promise<void> {
  await Promise.all([...liveTools].map((t) => t.kill()));
}

/** A name unique to this run, for topics and groups. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.floor(Math.random() * 1e9).toString(36)}`;
}
