// DescribeLogDirs on the Kafka listener: this broker's one log directory (its
// data dir) with every hosted partition asked for (topics null: all), its size
// and offset lag (Kafka's: how far the log end is below the high watermark,
// 0 for a current replica; Sluice has no future replicas moving between
// dirs). v4 adds the file system's total and usable bytes. Partitions this
// broker does not host are left out, as Kafka does. v0 is below Kafka 4's
// range and not served.

import fs from 'node:fs';
import { describeLogDirs } from '../../protocol/kafka/apis/describe-log-dirs/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors, SluiceError } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import { byTopic } from './admin-items.js';

interface TopicAsk { readonly topic: string; readonly partitions: number[] }

async function diskBytes(dir: string): Promise<{ totalBytes: number; usableBytes: number }> {
  try {
    const s = await fs.promises.statfs(dir);
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  } catch {
    return { totalBytes: -1, usableBytes: -1 };
  }
}

export const describeLogDirsHandler: KafkaApiHandler = {
  spec: describeLogDirs,
  minVersion: 1,
  maxVersion: 4,
  async handle(req, ctx) {
    const asked = req.topics as TopicAsk[] | null;
    const wanted = asked === null ? null : new Set(asked.flatMap((t) => t.partitions.map((p) => `${t.topic}\u0000${p}`)));
    if (!ctx.deps.logDirs) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, 'this broker does not describe its logs');
    // Every replica this broker holds, from the same place the WebSocket DescribeLogDirs answers (server/log-dirs.ts).
    const { logDir: dir, topics: held } = ctx.deps.logDirs({ topics: [] });
    const shown = held
      .flatMap((t) => t.partitions.filter((p) => p.errorCode === 0).map((p) => ({ topic: t.name, partition: p.partition, sizeBytes: p.sizeBytes, offsetLag: Math.max(0, p.highWatermark - p.logEndOffset) })))
      .filter((p) => wanted === null || wanted.has(`${p.topic}\u0000${p.partition}`))
      .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
    const topics: Struct[] = byTopic(shown, (p) => p.topic).map(([name, ps]) => ({
      name,
      partitions: ps.map((p) => ({ partitionIndex: p.partition, partitionSize: p.sizeBytes, offsetLag: p.offsetLag, isFutureKey: false })),
    }));
    const disk = ctx.version >= 4 ? await diskBytes(dir) : { totalBytes: -1, usableBytes: -1 };
    return { throttleTimeMs: 0, errorCode: 0, results: [{ errorCode: 0, logDir: dir, topics, ...disk }] };
  },
  errorResponse(_req, errorCode) {
    // v3+ carries the error at the top; older versions only have per-dir errors, so one empty dir entry carries it.
    return { errorCode, results: [{ errorCode, logDir: '', topics: [] }] };
  },
};
