// DescribeLogDirs (api key 35; Kafka's name and key, Sluice's shape): the
// replicas this broker holds on disk, with the log cleaner's progress on the
// compacted ones — what `sluice topics describe` shows as dirty ratio and
// last clean. Sent to each broker that leads (or holds) the partitions.
//
// request  { topics: [{ name, partitions: [int] }] }     (an empty topics list: every replica on the broker)
// response { logDir, topics: [{ name, partitions: [{ partition, errorCode, errorMessage, sizeBytes, segments,
//            logStartOffset, logEndOffset, highWatermark, cleanupPolicy, dirtyRatio, firstDirtyOffset, cleanableBytes,
//            lastCleanMs, cleaning, uncleanable }] }] }
//   dirtyRatio: dirty bytes / (clean + dirty bytes) of the part the cleaner may touch (0 when not compacted);
//   lastCleanMs: wall-clock time of this broker's last clean of the log since it started, -1 if none;
//   uncleanable: why the cleaner gave up on the log, or null.

import { ints, list, str, type Body } from '../body.js';

export interface DescribeLogDirsRequest {
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly number[] }>;
}

export interface LogDirPartition {
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  sizeBytes: number;
  segments: number;
  logStartOffset: number;
  logEndOffset: number;
  /** As this replica knows it (a follower's lags the leader's). */
  highWatermark: number;
  cleanupPolicy: string;
  dirtyRatio: number;
  firstDirtyOffset: number;
  cleanableBytes: number;
  lastCleanMs: number;
  cleaning: boolean;
  uncleanable: string | null;
}

export interface DescribeLogDirsResponse {
  /** The broker's one log directory: its data dir. */
  logDir: string;
  topics: Array<{ name: string; partitions: LogDirPartition[] }>;
}

export function parseDescribeLogDirsRequest(b: Body): DescribeLogDirsRequest {
  const topics = b['topics'] === undefined ? [] : list(b, 'topics');
  return { topics: topics.map((t) => ({ name: str(t, 'name'), partitions: ints(t['partitions'], 'partitions') })) };
}
