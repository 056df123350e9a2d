// TxnOffsetCommit (28) on the group coordinator: a transactional producer's
// offsets for a group (KafkaJS' sendOffsets, the Java client's
// sendOffsetsToTransaction), written into the transaction, visible as
// committed only once the transaction commits.
//
//   1. The group's shard (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS as
//      every group API).
//   2. The transaction coordinator confirms the offsets partition is in the
//      producer's open transaction at that epoch (KIP-890 part 1: AddOffsetsToTxn
//      added it). Its refusal is the answer; its unavailability is
//      COORDINATOR_NOT_AVAILABLE (retriable for the client's TxnOffsetCommit).
//   3. The group's checks (KIP-447, Group.txnCommitProblem) and each
//      partition's (topic exists, offset >= 0, metadata size), as OffsetCommit.
//   4. One transactional batch (producer id and epoch, baseSequence -1)
//      appended with acks=all as the coordinator (no second verification).
//      From the verification on, the partitions are unstable (requireStable);
//      a marker of the producer that lands during the verification makes the
//      answer COORDINATOR_NOT_AVAILABLE, so the client confirms again rather
//      than write into a transaction that may just have ended.
//   5. Acknowledged: the offsets are pending for the producer (txn-pending.ts)
//      until the replica manager reports its COMMIT or ABORT marker on the
//      partition. OffsetFetch shows the last committed offset meanwhile, or
//      UNSTABLE_OFFSET_COMMIT when the client asks for stable offsets.

import { Errors } from '../util/errors.js';
import { CONSUMER_OFFSETS_TOPIC } from '../protocol/apis/groups.js';
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../protocol/apis/transactions.js';
import type { TxnRefusal, TxnVerifier } from '../replication/txn-seams.js';
import type { Refusal } from './membership/group.js';
import { errorMessage } from './membership/responses.js';
import { offsetKey, offsetValue } from './records.js';
import { partitionProblem, type OffsetsHost } from './offsets.js';
import type { StoredOffset } from './loader.js';
import type { Shard } from './coordinator.js';
import type { EndedTxnOffset, InFlightAppend, MarkerOutcome, TxnOffsetKey } from './txn-pending.js';

/** What TxnOffsetCommit needs beyond the offset handlers' host. */
export interface TxnOffsetsHost extends OffsetsHost {
  txnVerifier(): TxnVerifier | null;
  /** Applies what a marker (or an append a marker overtook) ended: committed offsets stored, vacant groups forgotten. */
  applyTxnOutcome(shard: Shard, outcome: MarkerOutcome): void;
}

type PartitionAnswer = { partition: number; errorCode: number; errorMessage: string | null };

function answerFor(partition: number, problem: Refusal | null): PartitionAnswer {
  return problem ? { partition, errorCode: problem.error.code, errorMessage: errorMessage(problem.error, problem.message) } : { partition, errorCode: 0, errorMessage: null };
}

function allRefused(req: TxnOffsetCommitRequest, problem: Refusal): TxnOffsetCommitResponse {
  return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => answerFor(p.partition, problem)) })) };
}

/**
 * The transaction coordinator's refusal as the producer should see it. Its
 * own unavailability (it moved, is loading, is busy ending the previous
 * transaction) is not the group coordinator's: COORDINATOR_NOT_AVAILABLE
 * makes the client retry TxnOffsetCommit rather than look for a new group
 * coordinator (Kafka maps these to NOT_ENOUGH_REPLICAS, then to
 * COORDINATOR_NOT_AVAILABLE, for the same reason).
 */
function verifierRefusal(r: TxnRefusal): Refusal {
  switch (r.error.code) {
    case Errors.NOT_COORDINATOR.code:
    case Errors.COORDINATOR_NOT_AVAILABLE.code:
    case Errors.COORDINATOR_LOAD_IN_PROGRESS.code:
    case Errors.CONCURRENT_TRANSACTIONS.code:
    case Errors.REQUEST_TIMED_OUT.code:
      return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `the transaction coordinator cannot confirm the transaction yet (${r.error.name}: ${r.message})` };
    default:
      return { error: r.error, message: r.message };
  }
}

/** Why a transactional append to __consumer_offsets failed, as the producer should see it. */
const TXN_APPEND_ERRORS: ReadonlySet<number> = new Set([
  Errors.INVALID_PRODUCER_EPOCH.code, Errors.PRODUCER_FENCED.code, Errors.INVALID_TXN_STATE.code,
  Errors.INVALID_PRODUCER_ID_MAPPING.code, Errors.TRANSACTION_COORDINATOR_FENCED.code,
]);

async function verify(host: TxnOffsetsHost, req: TxnOffsetCommitRequest, shard: Shard): Promise<Refusal | null> {
  const verifier = host.txnVerifier();
  if (!verifier) return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: 'this broker has no transaction coordinator to confirm the transaction' };
  try {
    const refusal = await verifier.verify({
      transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch,
      topic: CONSUMER_OFFSETS_TOPIC, partition: shard.partition,
    });
    return refusal ? verifierRefusal(refusal) : null;
  } catch (err) {
    return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `could not reach the transaction coordinator: ${(err as Error).message}` };
  }
}

export async function commitTxnOffsets(host: TxnOffsetsHost, req: TxnOffsetCommitRequest): Promise<TxnOffsetCommitResponse> {
  if (req.producerId < 0 || req.producerEpoch < 0) {
    return allRefused(req, { error: Errors.INVALID_REQUEST, message: `producer id ${req.producerId} and epoch ${req.producerEpoch} must be >= 0` });
  }
  const found = host.lookup(req.groupId);
  if ('error' in found) return allRefused(req, found);
  const shard = found.shard;
  // Unstable from here on: the transaction may be writing these offsets.
  const asked = req.topics.flatMap((t) => t.partitions.map((p) => ({ groupId: req.groupId, topic: t.name, partition: p.partition })));
  const flight = shard.txn.start(req.producerId, asked);
  let written: Written | null = null;
  try {
    written = await verifyAndWrite(host, req, shard, flight);
    return written.response;
  } finally {
    const outcome = shard.txn.finish(flight, written?.landed ?? null);
    if (host.isCurrent(shard)) {
      host.applyTxnOutcome(shard, outcome);
      const entry = host.entryFor(shard, req.groupId, false);
      if (entry) host.forgetIfVacant(shard, entry);
    }
  }
}

type Written = { response: TxnOffsetCommitResponse; landed: { baseOffset: number; values: EndedTxnOffset[] } | null };

/** Steps 2-4 of the header: the answer, and what was appended (null: nothing, or it failed). */
async function verifyAndWrite(host: TxnOffsetsHost, req: TxnOffsetCommitRequest, shard: Shard, flight: InFlightAppend): Promise<Written> {
  const refused = (problem: Refusal): Written => ({ response: allRefused(req, problem), landed: null });
  const problem = await verify(host, req, shard);
  if (problem) return refused(problem);
  // Everything from here to the append is synchronous: the group is checked as it is when the batch is written.
  if (!host.isCurrent(shard)) return refused({ error: Errors.NOT_COORDINATOR, message: `${CONSUMER_OFFSETS_TOPIC}-${shard.partition} moved while the transaction was checked` });
  if (shard.txn.markerSinceStart(flight)) {
    // The transaction that was confirmed may be the one this marker ended: confirm again.
    return refused({ error: Errors.COORDINATOR_NOT_AVAILABLE, message: `a transaction of producer ${req.producerId} ended while this one was being confirmed; retry` });
  }
  const entry = host.entryFor(shard, req.groupId, req.generationId < 0);
  if (!entry) return refused({ error: Errors.ILLEGAL_GENERATION, message: `group ${req.groupId} does not exist, so generation ${req.generationId} is stale` });
  const groupProblem = entry.group.txnCommitProblem(req.memberId, req.groupInstanceId, req.generationId);
  if (groupProblem) return refused(groupProblem);
  const image = host.currentImage();
  const now = host.nowMs();
  const writes: Array<{ key: TxnOffsetKey; value: Omit<StoredOffset, 'logOffset'>; out: PartitionAnswer }> = [];
  const response: TxnOffsetCommitResponse = {
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const out = answerFor(p.partition, partitionProblem(image, t.name, p, host.limits));
        const value = { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata, commitTimestampMs: now };
        if (out.errorCode === 0) writes.push({ key: { groupId: req.groupId, topic: t.name, partition: p.partition }, value, out });
        return out;
      }),
    })),
  };
  if (writes.length === 0) return { response, landed: null };
  const records = writes.map((w) => ({ key: offsetKey(w.key.groupId, w.key.topic, w.key.partition), value: offsetValue(w.value) }));
  const txn = { transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, passThrough: TXN_APPEND_ERRORS };
  const res = await host.append(shard, records, Errors.INVALID_COMMIT_OFFSET_SIZE, txn);
  if (res.error) {
    for (const w of writes) Object.assign(w.out, answerFor(w.key.partition, res.error));
    return { response, landed: null };
  }
  return { response, landed: { baseOffset: res.baseOffset, values: writes.map((w, i) => ({ ...w.key, value: { ...w.value, logOffset: res.baseOffset + i } })) } };
}
