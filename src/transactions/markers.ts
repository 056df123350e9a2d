// Writing a transaction's COMMIT or ABORT markers to every partition in it
// (Kafka's TransactionMarkerChannelManager): group the partitions by their
// current leader (from the metadata image), send each leader one
// WriteTxnMarkers — through the local replica manager when this broker leads,
// over an inter-broker link otherwise — and repeat for the partitions that
// are not written yet, with a back-off, until each is written or its
// partition is gone (the topic was deleted). A marker carries the epoch the
// transaction ended at and the coordinator epoch (the __transaction_state
// partition's leader epoch), by which leaders refuse a deposed coordinator.
//
// Ends: 'done' (every marker written or its partition gone), 'fenced' (a
// leader says a newer coordinator wrote markers for this producer: stop, the
// new one finishes the transaction), 'cancelled' (this broker stopped
// coordinating the transaction; whoever loads it finishes it).

import { ApiKey } from '../protocol/api-keys.js';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../protocol/apis/transactions.js';
import type { MetadataImage } from '../metadata/image.js';
import type { Scheduler } from '../util/clock.js';
import { Errors } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { InterBrokerCalls } from './broker-links.js';
import type { ProducerIdAndEpoch, TxnPartition } from './state-machine.js';

/** Where markers go: this broker's replica manager, or another broker. */
export interface MarkerChannel {
  send(leaderId: number, req: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse>;
}

/** The replica manager's marker write (lane t-log's ReplicaManager.writeTxnMarkers). */
export interface LocalMarkerWriter {
  writeTxnMarkers(req: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> | WriteTxnMarkersResponse;
}

/** Local writes for this broker's partitions, WriteTxnMarkers (27) over the links for the others'. */
export function markerChannel(brokerId: number, local: LocalMarkerWriter, links: InterBrokerCalls): MarkerChannel {
  return {
    send: async (leaderId, req) => (leaderId === brokerId ? local.writeTxnMarkers(req) : links.request<WriteTxnMarkersResponse>(leaderId, ApiKey.WriteTxnMarkers, req)),
  };
}

export interface MarkerJob {
  readonly transactionalId: string;
  readonly producer: ProducerIdAndEpoch;
  readonly committed: boolean;
  readonly coordinatorEpoch: number;
  readonly partitions: readonly TxnPartition[];
}

export interface MarkerDeps {
  readonly channel: MarkerChannel;
  readonly image: () => MetadataImage;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly retryBackoffMs: number;
  /** False once this broker no longer coordinates the transaction. */
  readonly current: () => boolean;
}

export type MarkerOutcome = 'done' | 'fenced' | 'cancelled';

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** Writes the job's markers; resolves when every partition has one (or is gone), or why it stopped. Never rejects. */
export async function writeMarkers(job: MarkerJob, deps: MarkerDeps): Promise<MarkerOutcome> {
  const left = new Map(job.partitions.map((p) => [key(p.topic, p.partition), p]));
  for (let round = 0; left.size > 0; round++) {
    if (!deps.current()) return 'cancelled';
    if (round > 0) {
      await new Promise<void>((resolve) => deps.scheduler.schedule(deps.retryBackoffMs, resolve));
      if (!deps.current()) return 'cancelled';
    }
    const byLeader = groupByLeader(deps.image(), [...left.values()], (p) => {
      left.delete(key(p.topic, p.partition));
      deps.logger.info({ transactionalId: job.transactionalId, topic: p.topic, partition: p.partition }, 'partition is gone; no marker needed');
    });
    const fenced = await Promise.all([...byLeader].map(([leader, ps]) => sendTo(leader, ps, job, deps, left)));
    if (fenced.includes(true)) return 'fenced';
    if (round > 0 && round % 50 === 0 && left.size > 0) {
      deps.logger.warn({ transactionalId: job.transactionalId, partitions: [...left.values()].map((p) => `${p.topic}-${p.partition}`), round }, 'markers still not written');
    }
  }
  return 'done';
}

/** Partitions by their live leader; those whose partition no longer exists go to `gone`; leaderless ones wait. */
function groupByLeader(image: MetadataImage, ps: readonly TxnPartition[], gone: (p: TxnPartition) => void): Map<number, TxnPartition[]> {
  const out = new Map<number, TxnPartition[]>();
  for (const p of ps) {
    const part = image.topic(p.topic)?.partitions.get(p.partition);
    if (!part) {
      gone(p);
      continue;
    }
    if (part.leader < 0) continue;
    let list = out.get(part.leader);
    if (!list) out.set(part.leader, (list = []));
    list.push(p);
  }
  return out;
}

/** One WriteTxnMarkers to `leader`; written partitions leave `left`. True: a newer coordinator fenced this one. */
async function sendTo(leader: number, ps: readonly TxnPartition[], job: MarkerJob, deps: MarkerDeps, left: Map<string, TxnPartition>): Promise<boolean> {
  const topics = new Map<string, number[]>();
  for (const p of ps) {
    let list = topics.get(p.topic);
    if (!list) topics.set(p.topic, (list = []));
    list.push(p.partition);
  }
  const req: WriteTxnMarkersRequest = {
    markers: [{
      producerId: job.producer.producerId, producerEpoch: job.producer.producerEpoch, transactionResult: job.committed,
      coordinatorEpoch: job.coordinatorEpoch, topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
    }],
  };
  let res: WriteTxnMarkersResponse;
  try {
    res = await deps.channel.send(leader, req);
  } catch (err) {
    deps.logger.debug({ transactionalId: job.transactionalId, leader, err: (err as Error).message }, 'marker write failed; retrying');
    return false;
  }
  let fenced = false;
  for (const t of res.markers[0]?.topics ?? []) {
    for (const r of t.partitions) {
      const k = key(t.name, r.partition);
      if (!left.has(k)) continue;
      if (r.errorCode === 0) left.delete(k);
      else if (r.errorCode === Errors.TRANSACTION_COORDINATOR_FENCED.code) fenced = true;
      else if (r.errorCode === Errors.INVALID_PRODUCER_EPOCH.code || r.errorCode === Errors.PRODUCER_FENCED.code) {
        // The partition already holds a later epoch of this producer: only a later transaction, begun after this one ended, writes that.
        deps.logger.warn({ transactionalId: job.transactionalId, topic: t.name, partition: r.partition, error: r.errorMessage }, 'partition is past this marker\'s epoch');
        left.delete(k);
      } else {
        deps.logger.debug({ transactionalId: job.transactionalId, topic: t.name, partition: r.partition, errorCode: r.errorCode, error: r.errorMessage }, 'marker not written yet');
      }
    }
  }
  return fenced;
}
