// The end of a simulated run: settle the healed world and take the
// FinalState the chaos checker (test/chaos/checker.ts) compares the history
// with — the same shape the real-process chaos run builds (test/chaos/
// final.ts), read here straight from each node's live PartitionLog:
//   - settle (bounded, simulated time): every tracked partition has a leader
//     that is up and leads it, a full ISR, and every replica's log end equal
//     to the leader's and the leader's HW at its log end (the workload has
//     stopped, so replication catches up);
//   - records: the leader's log from its log start to its high watermark;
//   - replica digests: each replica's records below that high watermark
//     (offset, leader epoch, key, value), so "replicas identical below the
//     HW" is the checker's divergence check;
//   - controller terms: every (term, node) the monitors saw leading Raft.

import { createHash } from 'node:crypto';
import type { FinalPartition, FinalState, StoredRecord } from '../../chaos/history.js';
import type { SimCluster } from './api.js';
import { replicasOf, type ReplicaView } from './probe.js';
import type { TopicPartition } from './workload.js';

export interface Settled {
  readonly ok: boolean;
  /** Why not, naming the partitions that did not settle. */
  readonly why: string;
}

function views(cluster: SimCluster, tp: TopicPartition): Map<number, ReplicaView> {
  const out = new Map<number, ReplicaView>();
  for (const n of cluster.nodes()) {
    if (n.state !== 'up') continue;
    const r = replicasOf(n.server).find((x) => x.topic === tp.topic && x.partition === tp.partition);
    if (r) out.set(n.id, r);
  }
  return out;
}

/** Why `tp` is not settled yet (null: settled). */
function unsettled(cluster: SimCluster, tp: TopicPartition): string | null {
  const name = `${tp.topic}-${tp.partition}`;
  const st = cluster.partitionState(tp.topic, tp.partition);
  if (!st) return `${name}: unknown to the controller`;
  if (st.leader < 0) return `${name}: no leader`;
  if (st.isr.length < st.replicas.length) return `${name}: ISR ${st.isr.join(',')} of ${st.replicas.join(',')}`;
  const vs = views(cluster, tp);
  const leader = vs.get(st.leader);
  if (!leader?.isLeader) return `${name}: leader ${st.leader} does not lead it yet`;
  if (leader.highWatermark < leader.logEndOffset) return `${name}: HW ${leader.highWatermark} < LEO ${leader.logEndOffset}`;
  for (const id of st.replicas) {
    const r = vs.get(id);
    if (!r) return `${name}: replica ${id} not hosted`;
    if (r.logEndOffset !== leader.logEndOffset) return `${name}: replica ${id} LEO ${r.logEndOffset} vs leader ${leader.logEndOffset}`;
  }
  return null;
}

/** Runs the world until every partition settled (or `timeoutMs` of simulated time passed). */
export async function settle(cluster: SimCluster, partitions: () => readonly TopicPartition[], timeoutMs: number): Promise<Settled> {
  let why = '';
  const ok = await cluster.runUntil(() => {
    for (const tp of partitions()) {
      const w = unsettled(cluster, tp);
      if (w !== null) {
        why = w;
        return false;
      }
    }
    return true;
  }, timeoutMs);
  return { ok, why: ok ? '' : why };
}

function digest(records: readonly StoredRecord[], from: number, hw: number): string {
  const h = createHash('sha256');
  h.update(`from ${from}\n`);
  for (const r of records) h.update(`${r.offset}/${r.leaderEpoch}/${r.key ?? ''}=${r.value}\n`);
  h.update(`to ${hw}\n`);
  return h.digest('hex').slice(0, 16);
}

/** The final state of the settled world. */
export function collectFinal(cluster: SimCluster, partitions: readonly TopicPartition[], controllerTerms: FinalState['controllerTerms']): FinalState {
  const out: FinalPartition[] = [];
  for (const tp of partitions) {
    const st = cluster.partitionState(tp.topic, tp.partition);
    if (!st) continue;
    const vs = views(cluster, tp);
    const leader = vs.get(st.leader);
    if (!leader) continue;
    const hw = leader.highWatermark;
    const logStart = leader.logStartOffset;
    const records = leader.read(logStart, hw);
    out.push({
      topic: tp.topic, partition: tp.partition, leader: st.leader, isr: st.isr, highWatermark: hw, logStartOffset: logStart, records,
      replicaDigests: st.replicas.flatMap((id) => {
        const r = vs.get(id);
        if (!r) return [];
        return [{ nodeId: id, digest: digest(r.read(logStart, hw), logStart, hw) }];
      }),
    });
  }
  return { partitions: out, controllerTerms };
}
