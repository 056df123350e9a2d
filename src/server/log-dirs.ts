// Answers DescribeLogDirs (protocol/apis/log-dirs.ts) from the log manager:
// size, segments and offsets of each replica this broker holds, and for
// compacted ones the cleaner's view (dirty ratio, first dirty offset, last
// clean). A partition this broker does not hold answers UNKNOWN_TOPIC_OR_PARTITION.

import { Errors } from '../util/errors.js';
import type { LogManager } from '../storage/log-manager.js';
import type { DescribeLogDirsRequest, DescribeLogDirsResponse, LogDirPartition } from '../protocol/apis/log-dirs.js';

export function describeLogDirs(logs: LogManager, req: DescribeLogDirsRequest): DescribeLogDirsResponse {
  const wanted = req.topics.length > 0
    ? req.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })))
    : logs.allLogs().map((m) => ({ topic: m.topic, partition: m.partition }));
  const byTopic = new Map<string, LogDirPartition[]>();
  for (const { topic, partition } of wanted) {
    let list = byTopic.get(topic);
    if (!list) byTopic.set(topic, (list = []));
    list.push(describeOne(logs, topic, partition));
  }
  return { logDir: logs.dataDir, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
}

function describeOne(logs: LogManager, topic: string, partition: number): LogDirPartition {
  const log = logs.getLog(topic, partition);
  const empty: LogDirPartition = {
    partition, errorCode: Errors.NONE.code, errorMessage: null, sizeBytes: 0, segments: 0, logStartOffset: -1, logEndOffset: -1, highWatermark: -1,
    cleanupPolicy: 'delete', dirtyRatio: 0, firstDirtyOffset: -1, cleanableBytes: 0, lastCleanMs: -1, cleaning: false, uncleanable: null,
  };
  if (log === undefined || log.isClosed) {
    return { ...empty, errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, errorMessage: `this broker holds no replica of ${topic}-${partition}` };
  }
  const status = logs.cleanerStatus(topic, partition);
  return {
    ...empty,
    sizeBytes: log.sizeBytes,
    segments: log.numberOfSegments,
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    highWatermark: log.highWatermark,
    cleanupPolicy: log.logConfig.cleanupPolicy,
    ...(status === null || !status.compacted ? {} : {
      dirtyRatio: status.dirtyRatio,
      firstDirtyOffset: status.firstDirtyOffset,
      cleanableBytes: status.cleanableBytes,
      lastCleanMs: status.lastCleanMs ?? -1,
      cleaning: status.cleaning,
      uncleanable: status.uncleanable,
    }),
  };
}
