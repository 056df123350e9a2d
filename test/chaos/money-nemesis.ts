// The faults of a tx_money chaos round: process kills aimed at the parts a
// transaction crosses — the partition leaders it writes, the transaction
// coordinator (the leader of the __transaction_state partition its
// transactional id hashes to) and the active controller — plus a paused,
// an isolated and a gracefully restarted coordinator.
//
// planMoneyFaults() is pure (seed, seconds) → steps. The first three steps
// are a coordinator kill, a leader kill and a controller kill in a
// seed-chosen order, so even a short round has each; the rest are drawn by
// weight. One fault at a time, one node at a time (never a voter majority);
// the node is chosen when the step runs, from the cluster's state then
// (`pick` chooses among candidates), and what was done goes into the history.

import { Client, type Admin } from '../../src/index.js';
import { coordinatorPartition } from '../../src/groups/placement.js';
import { TRANSACTION_STATE_TOPIC } from '../../src/protocol/apis/transactions.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import type { ChaosCluster } from './cluster.js';
import type { MoneyEntry } from './money-history.js';

export type MoneyFaultKind = 'kill-coordinator' | 'kill-leader' | 'kill-controller' | 'pause-coordinator' | 'isolate-coordinator' | 'restart-coordinator';

export interface MoneyFault {
  readonly atMs: number;
  readonly kind: MoneyFaultKind;
  /** How long the node stays down, paused or cut off. */
  readonly durationMs: number;
  readonly pick: number;
}

const FIRST: readonly MoneyFaultKind[] = ['kill-coordinator', 'kill-leader', 'kill-controller'];
const WEIGHTS: ReadonlyArray<readonly [MoneyFaultKind, number]> = [
  ['kill-coordinator', 4], ['kill-leader', 3], ['kill-controller', 2], ['pause-coordinator', 1], ['isolate-coordinator', 1], ['restart-coordinator', 1],
];
const DURATION_MS: Record<MoneyFaultKind, { min: number; max: number }> = {
  'kill-coordinator': { min: 1_000, max: 6_000 },
  'kill-leader': { min: 1_000, max: 6_000 },
  'kill-controller': { min: 1_000, max: 6_000 },
  // Longer than the broker session (cluster.ts: 6 s): the coordinator is fenced and its partitions move while it sleeps.
  'pause-coordinator': { min: 7_000, max: 10_000 },
  'isolate-coordinator': { min: 4_000, max: 9_000 },
  'restart-coordinator': { min: 0, max: 0 },
};
const FIRST_FAULT_MS = 2_000;
const GAP_MS = { min: 1_500, max: 4_000 };
const LOOKUP_TIMEOUT_MS = 3_000;

export function planMoneyFaults(seed: number, seconds: number): MoneyFault[] {
  const rng = new SeededRng((seed ^ 0x70ae7) >>> 0);
  const first = shuffle(rng, FIRST);
  const plan: MoneyFault[] = [];
  for (let t = FIRST_FAULT_MS, n = 0; t < seconds * 1000; n++) {
    const kind = n < first.length ? first[n]! : weighted(rng, WEIGHTS);
    const d = DURATION_MS[kind];
    const durationMs = rng.range(d.min, d.max);
    plan.push({ atMs: t, kind, durationMs, pick: rng.int(2 ** 30) });
    t += durationMs + rng.range(GAP_MS.min, GAP_MS.max);
  }
  return plan;
}

export function formatMoneyPlan(plan: readonly MoneyFault[]): string {
  return plan.map((f) => `  +${(f.atMs / 1000).toFixed(1).padStart(6)}s  ${f.kind}${f.durationMs > 0 ? ` for ${(f.durationMs / 1000).toFixed(1)}s` : ''}  pick ${f.pick}`).join('\n');
}

export interface MoneyNemesisDeps {
  readonly cluster: ChaosCluster;
  /** The workload's transactional ids and money topic (targets). */
  readonly transactionalIds: readonly string[];
  readonly topic: string;
  readonly record: (e: MoneyEntry) => void;
  readonly clock: () => number;
  readonly log?: (line: string) => void;
}

export class MoneyNemesis {
  faultsInjected = 0;
  readonly byKind: Record<string, number> = {};
  private readonly client: Client;
  private readonly admin: Admin;

  constructor(private readonly deps: MoneyNemesisDeps) {
    this.client = new Client({
      bootstrap: deps.cluster.bootstrap, clientId: 'money-nemesis', requestTimeoutMs: LOOKUP_TIMEOUT_MS, connectTimeoutMs: 2_000,
      metadataMaxAgeMs: 1_000, retry: { retries: 1, initialRetryTimeMs: 100, maxRetryTimeMs: 500 },
    });
    this.admin = this.client.admin();
  }

  /** Runs the steps that start within `seconds`; returns once the last one healed. */
  async run(plan: readonly MoneyFault[], seconds: number): Promise<void> {
    const start = performance.now();
    try {
      for (const step of plan) {
        const now = performance.now() - start;
        if (now >= seconds * 1000) break;
        if (step.atMs > now) await sleep(step.atMs - now);
        this.deps.log?.(`nemesis +${((performance.now() - start) / 1000).toFixed(1)}s: ${step.kind}`);
        await this.step(step);
      }
    } finally {
      this.client.close();
    }
  }

  private async step(s: MoneyFault): Promise<void> {
    const c = this.deps.cluster;
    const { id, why } = await this.target(s);
    switch (s.kind) {
      case 'kill-coordinator':
      case 'kill-leader':
      case 'kill-controller':
        await this.fault(s.kind, `SIGKILL node ${id} (${why})`, () => c.kill(id));
        await sleep(s.durationMs);
        await this.fault('start', `node ${id}`, () => c.start(id), false);
        return;
      case 'pause-coordinator':
        await this.fault(s.kind, `SIGSTOP node ${id} (${why}) for ${s.durationMs} ms`, () => c.pause(id));
        await sleep(s.durationMs);
        await this.fault('resume', `node ${id}`, () => c.resume(id), false);
        return;
      case 'isolate-coordinator':
        await this.fault(s.kind, `node ${id} (${why}) cut off from every node and client`, () => c.proxy.isolate(id, { mode: 'blackhole' }));
        await sleep(s.durationMs);
        await this.fault('heal', 'every link', () => c.proxy.heal(), false);
        return;
      case 'restart-coordinator':
        await this.fault(s.kind, `SIGTERM node ${id} (${why}), then start`, () => c.restart(id, true));
        return;
    }
  }

  /** The node a step hits: the coordinator of one of the workload's ids, a money partition's leader, or the controller. */
  private async target(s: MoneyFault): Promise<{ id: number; why: string }> {
    const nodes = this.deps.cluster.nodes.map((n) => n.id);
    const fallback = { id: nodes[s.pick % nodes.length]!, why: 'any node: the cluster did not answer in time' };
    try {
      if (s.kind === 'kill-controller') {
        const d = await this.admin.describeCluster();
        return d.controllerId > 0 ? { id: d.controllerId, why: 'active controller' } : fallback;
      }
      if (s.kind === 'kill-leader') {
        const [t] = await this.admin.describeTopics({ topics: [this.deps.topic] });
        const p = t?.partitions[s.pick % Math.max(1, t.partitions.length)];
        return p && p.leader >= 0 ? { id: p.leader, why: `leader of ${this.deps.topic}-${p.partition}` } : fallback;
      }
      const txnId = this.deps.transactionalIds[s.pick % this.deps.transactionalIds.length]!;
      const [t] = await this.admin.describeTopics({ topics: [TRANSACTION_STATE_TOPIC] });
      if (!t || t.partitions.length === 0) return fallback;
      const index = coordinatorPartition(txnId, t.partitions.length);
      const p = t.partitions.find((x) => x.partition === index);
      return p && p.leader >= 0 ? { id: p.leader, why: `coordinator of ${txnId} (${TRANSACTION_STATE_TOPIC}-${index})` } : fallback;
    } catch {
      return fallback;
    }
  }

  private async fault(fault: string, detail: string, act: () => Promise<void> | void, injects = true): Promise<void> {
    const invokeMs = this.deps.clock();
    await act();
    this.deps.record({ kind: 'fault', invokeMs, completeMs: this.deps.clock(), fault, detail });
    if (injects) {
      this.faultsInjected++;
      this.byKind[fault] = (this.byKind[fault] ?? 0) + 1;
    }
    this.deps.log?.(`  ${fault}: ${detail}`);
  }
}

function weighted<T>(rng: Rng, items: ReadonlyArray<readonly [T, number]>): T {
  const total = items.reduce((n, [, w]) => n + w, 0);
  let x = rng.int(total);
  for (const [item, w] of items) {
    if (x < w) return item;
    x -= w;
  }
  return items[items.length - 1]![0];
}

function shuffle<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
