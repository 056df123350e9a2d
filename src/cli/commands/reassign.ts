// `sluice reassign`: move partition replicas between brokers, typically onto
// brokers added to a running cluster. Four modes, exactly one per run:
//
//   --generate  reads the current replicas (Metadata) and proposes a balanced
//               plan with generateReassignmentPlan, computed here in the CLI;
//               it changes nothing. The plan lists only partitions that move,
//               and carries their current replicas under "current" so an
//               operator keeps a way back.
//   --execute   starts the plan's moves (AlterPartitionReassignments); the
//               copying happens in the background.
//   --verify    per partition: complete (replicas equal the target, all in the
//               ISR, no move listed), in progress, or failed. Exit 0 only when
//               every partition is complete, 1 otherwise, so scripts can poll.
//   --cancel    cancels the plan's moves that are still running (replicas null),
//               which restores each partition's original replicas.
//
// A plan file is JSON: { version: 1, partitions: [{ topic, partition,
// replicas }] } (extra keys such as "current" are ignored). It is validated
// before any connection; a bad one is a one-line error, exit 1.
//
// --execute --throttle BYTES/s sets the cluster's
// leader.replication.throttled.rate: leaders send replicas a reassignment is
// adding at most that many bytes/s (other replication is not limited). A
// --verify that finds every move complete removes the throttle, as Kafka's
// tool does.

import fs from 'node:fs';
import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { Admin, TopicDescription } from '../../client/admin.js';
import { generateReassignmentPlan, type PlanInput } from '../../controller/decisions/reassignment-plan.js';
import { Errors, SluiceError, isSluiceError } from '../../util/errors.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { idList, renderTable } from '../table.js';

export const PLAN_VERSION = 1;

export interface PlanPartition {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
}

/** What --generate prints and --execute/--verify/--cancel read. */
export interface ReassignmentPlan {
  readonly version: number;
  readonly partitions: readonly PlanPartition[];
  /** The moved partitions' replicas before the plan: a plan that rolls it back. */
  readonly current?: readonly PlanPartition[];
}

export type PartitionState = 'complete' | 'in-progress' | 'failed';

export interface VerifiedPartition {
  readonly topic: string;
  readonly partition: number;
  readonly state: PartitionState;
  readonly target: readonly number[];
  /** Current replicas; null when the partition no longer exists. */
  readonly replicas: readonly number[] | null;
  readonly isr: readonly number[] | null;
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
  readonly reason: string;
}

export interface VerifyResult {
  readonly total: number;
  readonly complete: number;
  readonly inProgress: number;
  readonly failed: number;
  readonly partitions: readonly VerifiedPartition[];
}

interface ReassignFlags extends ClientFlags {
  readonly generate: boolean;
  readonly brokers?: string;
  readonly topics?: string;
  readonly execute?: string;
  readonly verify?: string;
  readonly cancel?: string;
  readonly throttle?: number;
}

const MODES = ['generate', 'execute', 'verify', 'cancel'] as const;

/** `1,2,3` → [1, 2, 3]; throws a usage error naming the flag on anything else. */
export function parseIdList(text: string, flag: string): number[] {
  const ids = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (ids.length === 0 || ids.some((s) => !/^\d+$/.test(s))) throw new Error(`--${flag} needs broker ids like 1,2,3 (got "${text}")`);
  return [...new Set(ids.map(Number))];
}

function parseNames(text: string): string[] {
  return [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
}

/** Validates a parsed plan file; throws INVALID_REQUEST naming the first problem. */
export function parsePlan(json: unknown, file: string): ReassignmentPlan {
  const bad = (why: string) => new SluiceError(Errors.INVALID_REQUEST, `bad plan file ${file}: ${why}`);
  if (typeof json !== 'object' || json === null) throw bad('not a JSON object');
  const o = json as Record<string, unknown>;
  if (o.version !== PLAN_VERSION) throw bad(`"version" must be ${PLAN_VERSION}`);
  if (!Array.isArray(o.partitions)) throw bad('"partitions" must be an array');
  const seen = new Set<string>();
  const partitions = o.partitions.map((p: unknown, i: number): PlanPartition => {
    const e = p as Record<string, unknown> | null;
    const at = `partitions[${i}]`;
    if (typeof e !== 'object' || e === null) throw bad(`${at} is not an object`);
    if (typeof e.topic !== 'string' || e.topic === '') throw bad(`${at}.topic must be a topic name`);
    if (!Number.isSafeInteger(e.partition) || (e.partition as number) < 0) throw bad(`${at}.partition must be a partition number`);
    const r = e.replicas;
    if (!Array.isArray(r) || r.length === 0 || r.some((b) => !Number.isSafeInteger(b) || (b as number) < 0)) throw bad(`${at}.replicas must be a non-empty list of broker ids`);
    if (new Set(r).size !== r.length) throw bad(`${at}.replicas lists a broker twice`);
    const k = `${e.topic}-${String(e.partition)}`;
    if (seen.has(k)) throw bad(`${k} is listed twice`);
    seen.add(k);
    return { topic: e.topic, partition: e.partition as number, replicas: r as number[] };
  });
  return { version: PLAN_VERSION, partitions };
}

function readPlan(file: string): ReassignmentPlan {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SluiceError(Errors.INVALID_REQUEST, `cannot read plan file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SluiceError(Errors.INVALID_REQUEST, `bad plan file ${file}: not valid JSON`);
  }
  return parsePlan(json, file);
}

/** One line on stderr, exit 1: for errors found before any connection (no bootstrap to name). */
function failEarly(err: unknown): never {
  process.stderr.write(`sluice: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

const tp = (topic: string, partition: number) => `${topic}-${partition}`;

// ---- generate -------------------------------------------------------------------

async function generate(admin: Admin, brokers: readonly number[], topicNames: readonly string[]): Promise<ReassignmentPlan> {
  const cluster = await admin.describeCluster();
  const known = new Set(cluster.brokers.map((b) => b.nodeId));
  const unknown = brokers.filter((b) => !known.has(b));
  if (unknown.length > 0) {
    throw new SluiceError(Errors.INVALID_REPLICA_ASSIGNMENT, `unknown broker ids ${idList(unknown)} (registered: ${idList([...known])})`);
  }
  const topics = await admin.describeTopics({ topics: topicNames });
  const inputs: PlanInput[] = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition, replicas: p.replicas })));
  const widest = inputs.find((p) => p.replicas.length > brokers.length);
  if (widest) {
    throw new SluiceError(Errors.INVALID_REPLICATION_FACTOR, `${tp(widest.topic, widest.partition)} has ${widest.replicas.length} replicas but --brokers names only ${brokers.length}`);
  }
  const moved = generateReassignmentPlan(inputs, brokers).filter((e) => e.moved);
  return {
    version: PLAN_VERSION,
    partitions: moved.map((e) => ({ topic: e.topic, partition: e.partition, replicas: [...e.replicas] })),
    current: moved.map((e) => ({ topic: e.topic, partition: e.partition, replicas: [...e.current] })),
  };
}

// ---- execute / cancel -----------------------------------------------------------

/** Current replicas of the plan's partitions; unknown topics or partitions fail the run. */
async function currentReplicas(admin: Admin, plan: ReassignmentPlan): Promise<Map<string, readonly number[]>> {
  const names = [...new Set(plan.partitions.map((p) => p.topic))];
  const topics = names.length === 0 ? [] : await admin.describeTopics({ topics: names });
  const out = new Map<string, readonly number[]>();
  for (const t of topics) for (const p of t.partitions) out.set(tp(t.name, p.partition), p.replicas);
  const missing = plan.partitions.find((p) => !out.has(tp(p.topic, p.partition)));
  if (missing) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `no partition ${tp(missing.topic, missing.partition)}`);
  return out;
}

const THROTTLE_KEY = 'leader.replication.throttled.rate';

async function execute(flags: ReassignFlags, admin: Admin, plan: ReassignmentPlan): Promise<void> {
  const before = await currentReplicas(admin, plan);
  if (flags.throttle !== undefined) {
    await admin.alterConfigs({ resources: [{ resourceType: 'cluster', resourceName: '', set: { [THROTTLE_KEY]: String(flags.throttle) } }] });
    if (!flags.json) process.stderr.write(`Reassignment traffic throttled to ${flags.throttle} bytes/s (removed by a --verify that finds every move complete).\n`);
  }
  if (plan.partitions.length > 0) await admin.alterPartitionReassignments({ partitions: plan.partitions });
  const started = plan.partitions.map((p) => ({ topic: p.topic, partition: p.partition, from: before.get(tp(p.topic, p.partition))!, to: p.replicas }));
  print(flags, { started }, () => (started.length === 0 ? 'The plan moves nothing.' : [
    `Started ${started.length} reassignment(s):`,
    renderTable(['TOPIC', 'PARTITION', 'FROM', 'TO'], started.map((s) => [s.topic, s.partition, idList(s.from), idList(s.to)])),
    `Follow progress with: sluice reassign --verify ${flags.execute}`,
  ].join('\n')));
}

/** Removes the reassignment throttle once the moves are done (a no-op when none is set). */
async function removeThrottle(admin: Admin, quiet: boolean): Promise<void> {
  const configs = await admin.describeConfigs({ resourceType: 'cluster', resourceName: '' });
  if (configs.find((c) => c.name === THROTTLE_KEY)?.source !== 'cluster') return;
  await admin.alterConfigs({ resources: [{ resourceType: 'cluster', resourceName: '', delete: [THROTTLE_KEY] }] });
  if (!quiet) process.stderr.write('Every move is complete: the reassignment throttle was removed.\n');
}

async function cancel(flags: ReassignFlags, admin: Admin, plan: ReassignmentPlan): Promise<void> {
  const ongoing = new Set((await admin.listPartitionReassignments()).map((r) => tp(r.topic, r.partition)));
  const running = plan.partitions.filter((p) => ongoing.has(tp(p.topic, p.partition)));
  if (running.length > 0) await admin.alterPartitionReassignments({ partitions: running.map((p) => ({ topic: p.topic, partition: p.partition, replicas: null })) });
  const cancelled = running.map((p) => ({ topic: p.topic, partition: p.partition }));
  const notRunning = plan.partitions.filter((p) => !ongoing.has(tp(p.topic, p.partition))).map((p) => ({ topic: p.topic, partition: p.partition }));
  print(flags, { cancelled, notRunning }, () => [
    `Cancelled ${cancelled.length} reassignment(s)${cancelled.length > 0 ? `: ${cancelled.map((c) => tp(c.topic, c.partition)).join(' ')}` : ''}`,
    ...(notRunning.length > 0 ? [`Not in progress (nothing to cancel): ${notRunning.map((c) => tp(c.topic, c.partition)).join(' ')}`] : []),
  ].join('\n'));
}

// ---- verify ---------------------------------------------------------------------

/** Describes each topic on its own so a deleted topic fails only its partitions. */
async function describeEach(admin: Admin, names: readonly string[]): Promise<Map<string, TopicDescription | null>> {
  const out = new Map<string, TopicDescription | null>();
  await Promise.all(names.map(async (name) => {
    try {
      out.set(name, (await admin.describeTopics({ topics: [name] }))[0]!);
    } catch (err) {
      if (!isSluiceError(err) || err.code !== Errors.UNKNOWN_TOPIC_OR_PARTITION.code) throw err;
      out.set(name, null);
    }
  }));
  return out;
}

const sameList = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export async function verify(admin: Admin, plan: ReassignmentPlan): Promise<VerifyResult> {
  const ongoing = new Map((await admin.listPartitionReassignments()).map((r) => [tp(r.topic, r.partition), r]));
  const topics = await describeEach(admin, [...new Set(plan.partitions.map((p) => p.topic))]);
  const partitions = plan.partitions.map((p): VerifiedPartition => {
    const info = topics.get(p.topic)?.partitions.find((x) => x.partition === p.partition);
    const move = ongoing.get(tp(p.topic, p.partition));
    const base = { topic: p.topic, partition: p.partition, target: p.replicas, replicas: info?.replicas ?? null, isr: info?.isr ?? null, addingReplicas: move?.addingReplicas ?? [], removingReplicas: move?.removingReplicas ?? [] };
    if (!info) return { ...base, state: 'failed', reason: 'the partition no longer exists' };
    if (move) {
      if (sameList(move.target, p.replicas)) {
        const caughtUp = move.addingReplicas.filter((b) => info.isr.includes(b));
        return { ...base, state: 'in-progress', reason: `${caughtUp.length}/${move.addingReplicas.length} new replicas in the ISR` };
      }
      return { ...base, state: 'failed', reason: `another reassignment, to ${idList(move.target)}, is running` };
    }
    if (!sameList(info.replicas, p.replicas)) return { ...base, state: 'failed', reason: 'no reassignment is running and the replicas differ from the plan (cancelled, or never started)' };
    if (!p.replicas.every((b) => info.isr.includes(b))) return { ...base, state: 'in-progress', reason: 'replicas in place, waiting for all of them to be in the ISR' };
    return { ...base, state: 'complete', reason: '' };
  });
  const count = (s: PartitionState) => partitions.filter((p) => p.state === s).length;
  return { total: partitions.length, complete: count('complete'), inProgress: count('in-progress'), failed: count('failed'), partitions };
}

export function progressLine(r: VerifyResult): string {
  return `Reassignment: ${r.complete}/${r.total} complete, ${r.inProgress} in progress, ${r.failed} failed`;
}

function renderVerify(r: VerifyResult): string {
  const rows = r.partitions.map((p) => [p.topic, p.partition, p.state, idList(p.target), p.replicas && idList(p.replicas), p.isr && idList(p.isr), p.reason]);
  return `${renderTable(['TOPIC', 'PARTITION', 'STATE', 'TARGET', 'REPLICAS', 'ISR', 'NOTE'], rows)}\n${progressLine(r)}`;
}

// ---- the command ----------------------------------------------------------------

function checkFlags(args: Record<string, unknown>): true {
  const chosen = MODES.filter((m) => (m === 'generate' ? args.generate === true : args[m] !== undefined));
  if (chosen.length !== 1) throw new Error(`Give exactly one of --generate, --execute, --verify, --cancel${chosen.length > 1 ? ` (got ${chosen.map((m) => `--${m}`).join(', ')})` : ''}`);
  for (const m of ['execute', 'verify', 'cancel']) {
    if (args[m] !== undefined && (typeof args[m] !== 'string' || args[m] === '')) throw new Error(`--${m} needs a plan file`);
  }
  if (args.generate === true) {
    if (typeof args.brokers !== 'string' || typeof args.topics !== 'string') throw new Error('--generate needs --brokers 1,2,3 and --topics a,b');
    parseIdList(args.brokers, 'brokers');
    if (parseNames(args.topics).length === 0) throw new Error('--topics needs topic names like a,b');
  } else if (args.brokers !== undefined || args.topics !== undefined) {
    throw new Error('--brokers and --topics go with --generate');
  }
  if (args.throttle !== undefined) {
    if (args.execute === undefined) throw new Error('--throttle goes with --execute');
    if (!(Number.isSafeInteger(args.throttle) && (args.throttle as number) > 0)) throw new Error('--throttle needs a positive whole number of bytes/s');
  }
  return true;
}

export const reassignCommand: CommandModule<object, ReassignFlags> = {
  command: 'reassign',
  describe: 'Generate, execute, verify or cancel a partition reassignment plan',
  builder: (y) => withClientFlags(y)
    .usage('$0 reassign --generate --brokers IDS --topics NAMES | --execute PLAN | --verify PLAN | --cancel PLAN')
    .option('generate', { type: 'boolean', default: false, describe: 'print a balanced plan (JSON) for --topics over --brokers; changes nothing' })
    .option('brokers', { type: 'string', describe: 'with --generate: broker ids the replicas may live on, e.g. 1,2,3,4' })
    .option('topics', { type: 'string', describe: 'with --generate: topics to plan for, e.g. orders,audit' })
    .option('execute', { type: 'string', describe: 'start the moves in a plan file' })
    .option('verify', { type: 'string', describe: 'report each partition of a plan: complete, in progress or failed (exit 0 when all complete)' })
    .option('cancel', { type: 'string', describe: 'cancel the plan\'s moves that are still running' })
    .option('throttle', { type: 'number', describe: 'with --execute: limit reassignment traffic to BYTES/s (leader.replication.throttled.rate)' })
    .check(checkFlags)
    .example('$0 reassign --generate --brokers 1,2,3,4 --topics orders > plan.json', 'spread orders over brokers 1-4')
    .example('$0 reassign --execute plan.json --throttle 10000000', 'start the moves, copying at most 10 MB/s')
    .example('until $0 reassign --verify plan.json; do sleep 5; done', 'wait until every move is complete')
    .example('$0 reassign --cancel plan.json', 'stop the moves still running; their partitions keep the old replicas') as unknown as Argv<ReassignFlags>,
  handler: (args: ArgumentsCamelCase<ReassignFlags>) => {
    if (args.generate) return runGenerate(args);
    const file = (args.execute ?? args.verify ?? args.cancel)!;
    let plan: ReassignmentPlan;
    try {
      plan = readPlan(file);
    } catch (err) {
      failEarly(err);
    }
    return runClientCommand(args, async (client) => {
      const admin = client.admin();
      if (args.execute !== undefined) return execute(args, admin, plan);
      if (args.cancel !== undefined) return cancel(args, admin, plan);
      const result = await verify(admin, plan);
      print(args, result, () => renderVerify(result));
      if (result.complete === result.total) await removeThrottle(admin, args.json);
      if (result.complete !== result.total) {
        client.close();
        process.exit(1);
      }
    });
  },
};

function runGenerate(args: ArgumentsCamelCase<ReassignFlags>): Promise<never> {
  const brokers = parseIdList(args.brokers!, 'brokers');
  const topics = parseNames(args.topics!);
  return runClientCommand(args, async (client) => {
    const plan = await generate(client.admin(), brokers, topics);
    process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
    if (!args.json) {
      const rollback = { version: PLAN_VERSION, partitions: plan.current };
      process.stderr.write(`Plan moves ${plan.partitions.length} partition(s) of ${topics.join(',')} over brokers ${idList(brokers)}.\n`);
      process.stderr.write(`Current assignment (save it to roll back): ${JSON.stringify(rollback)}\n`);
    }
  });
}
