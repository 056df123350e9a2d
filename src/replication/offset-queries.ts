// The offset APIs a leader answers from its log: ListOffsets (by time,
// earliest, latest, max timestamp — consumers see up to the HW, read_committed
// ones up to the last stable offset, replicas up to the log end), OffsetForLeaderEpoch (where an epoch ends: a follower's
// truncation point), and DeleteRecords (moves the log start up, to at most
// the HW; checkpointed before the answer so a restart does not bring the
// deleted records back, and waiting fetches are woken so followers hear at once).

import { decodeRecordBatch } from '../record/record-batch.js';
import type { LogManager } from '../storage/log-manager.js';
import { Errors } from '../util/errors.js';
import {
  EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP,
  type EpochEndOffsetResponse, type ListOffsetsPartitionResponse, type ListOffsetsRequest, type OffsetForLeaderEpochRequest,
} from '../protocol/apis/offsets.js';
import { READ_COMMITTED } from '../protocol/apis/fetch.js';
import { DELETE_TO_HIGH_WATERMARK, type DeleteRecordsPartitionResponse, type DeleteRecordsRequest, type DeleteRecordsResponse } from '../protocol/apis/delete-records.js';
import type { HostedPartitions } from './hosted-partitions.js';
import type { Partition } from './partition.js';
import { failure, failureOf, NONE } from './partition-errors.js';
import type { ProducerStateStore } from './producer-state-store.js';

export interface OffsetQueriesOptions {
  readonly hosted: HostedPartitions;
  readonly logs: LogManager;
  /** The last stable offsets, for read_committed queries. */
  readonly producerStates: ProducerStateStore;
  /** `p`'s log start moved: its waiting fetches re-check. */
  readonly onLogStartMoved: (p: Partition) => void;
}

export class OffsetQueries {
  private readonly hosted: HostedPartitions;

  constructor(private readonly opts: OffsetQueriesOptions) {
    this.hosted = opts.hosted;
  }

  listOffsets(req: ListOffsetsRequest): { topics: Array<{ name: string; partitions: ListOffsetsPartitionResponse[] }> } {
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((q) => {
          const out: ListOffsetsPartitionResponse = { partition: q.partition, ...NONE, timestamp: -1, offset: -1, leaderEpoch: -1 };
          const p = this.hosted.find(t.name, q.partition);
          const problem = this.hosted.problemOf(p, t.name, q.partition, q.currentLeaderEpoch);
          if (problem) return Object.assign(out, failure(problem.error, problem.message));
          const log = p!.log;
          out.leaderEpoch = p!.leaderEpoch;
          let visibleEnd: number;
          try {
            visibleEnd = req.replicaId >= 0 ? log.logEndOffset
              : req.isolationLevel === READ_COMMITTED ? this.opts.producerStates.lastStableOffset(p!) : log.highWatermark;
          } catch (err) {
            return Object.assign(out, failureOf(err));
          }
          if (q.timestamp === LATEST_TIMESTAMP) out.offset = visibleEnd;
          else if (q.timestamp === EARLIEST_TIMESTAMP) out.offset = log.logStartOffset;
          else if (q.timestamp < 0 && q.timestamp !== MAX_TIMESTAMP) return Object.assign(out, failure(Errors.INVALID_REQUEST, `timestamp ${q.timestamp} is neither -1, -2, -3 nor a time`));
          else {
            // These two decode one stored batch; a failure there (a disk error) is this partition's answer.
            try {
              Object.assign(out, q.timestamp === MAX_TIMESTAMP ? maxTimestampRecord(log, visibleEnd) : recordAtTime(log, q.timestamp, visibleEnd));
            } catch (err) {
              return Object.assign(out, failureOf(err), { offset: -1, timestamp: -1 });
            }
          }
          return out;
        }),
      })),
    };
  }

  offsetForLeaderEpoch(req: OffsetForLeaderEpochRequest): { topics: Array<{ name: string; partitions: EpochEndOffsetResponse[] }> } {
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((q) => {
          const out: EpochEndOffsetResponse = { partition: q.partition, ...NONE, leaderEpoch: -1, endOffset: -1 };
          const p = this.hosted.find(t.name, q.partition);
          const problem = this.hosted.problemOf(p, t.name, q.partition, q.currentLeaderEpoch);
          if (problem) return Object.assign(out, failure(problem.error, problem.message));
          const r = p!.log.endOffsetForEpoch(q.leaderEpoch);
          out.leaderEpoch = r.epoch;
          out.endOffset = r.endOffset;
          return out;
        }),
      })),
    };
  }

  /**
   * Moves the leaders' log start offsets up (DeleteRecords). The log deletes
   * the segments wholly below the new start; followers learn it from the
   * logStartOffset of their next fetch answer.
   */
  deleteRecords(req: DeleteRecordsRequest): DeleteRecordsResponse {
    let moved = false;
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((q): DeleteRecordsPartitionResponse => {
        const out: DeleteRecordsPartitionResponse = { partition: q.partition, ...NONE, lowWatermark: -1 };
        const p = this.hosted.find(t.name, q.partition);
        const problem = this.hosted.problemOf(p, t.name, q.partition, -1);
        if (problem) return Object.assign(out, failure(problem.error, problem.message));
        const log = p!.log;
        const target = q.offset === DELETE_TO_HIGH_WATERMARK ? log.highWatermark : q.offset;
        if (target < 0 || target > log.highWatermark) {
          return Object.assign(out, failure(Errors.OFFSET_OUT_OF_RANGE, `offset ${q.offset} of ${p!.key} is outside [0, high watermark ${log.highWatermark}]`));
        }
        try {
          const before = log.logStartOffset;
          log.advanceLogStartOffset(target);
          if (log.logStartOffset !== before) {
            moved = true;
            this.opts.onLogStartMoved(p!);
          }
        } catch (err) {
          return Object.assign(out, failureOf(err));
        }
        out.lowWatermark = log.logStartOffset;
        return out;
      }),
    }));
    if (moved) this.opts.logs.checkpointLogStartOffsets();
    return { topics };
  }
}

/**
 * The offset and timestamp of the first record whose timestamp is >= `timestamp`
 * (as Kafka answers a ListOffsets by time: the record's own timestamp, not the
 * one asked for), if it is below `visibleEnd`; else -1/-1. The time index
 * finds the batch; that batch is decoded for the record.
 */
function recordAtTime(log: Partition['log'], timestamp: number, visibleEnd: number): { offset: number; timestamp: number } {
  const none = { offset: -1, timestamp: -1 };
  const found = log.offsetForTimestamp(timestamp);
  if (found === null || found >= visibleEnd) return none;
  const batch = decodeRecordBatch(log.read(found, 1).records, 0);
  const record = batch.records.find((r) => r.offset >= found && r.timestamp >= timestamp);
  if (!record || record.offset >= visibleEnd) return none;
  return { offset: record.offset, timestamp: record.timestamp };
}

/**
 * The offset and timestamp of the first record carrying the log's largest
 * timestamp, if it is below `visibleEnd` (else -1/-1, as Kafka answers it).
 * Only this lookup decodes a batch: the segments know which batch, not which record.
 */
function maxTimestampRecord(log: Partition['log'], visibleEnd: number): { offset: number; timestamp: number } {
  const none = { offset: -1, timestamp: -1 };
  const hit = log.maxTimestampBatch();
  if (!hit || hit.baseOffset >= visibleEnd) return none;
  const batch = decodeRecordBatch(log.read(hit.baseOffset, 1).records, 0);
  const record = batch.records.find((r) => r.timestamp >= hit.timestamp) ?? batch.records[batch.records.length - 1];
  if (!record || record.offset >= visibleEnd) return none;
  return { offset: Math.max(record.offset, log.logStartOffset), timestamp: hit.timestamp };
}
