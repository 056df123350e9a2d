// Read-only views of the cluster beyond topics and groups, and leader
// elections — the Admin methods the web console (and any program) needs:
//   - describeQuorum: the metadata quorum's leader, term, high watermark and
//     every voter's and observer's lag (DescribeQuorum, answered by the
//     active controller through any broker);
//   - describeLogDirs: every live broker's replicas on disk (size, segments,
//     log start, log end, high watermark as that replica knows it), asked of
//     each broker, since each knows only its own disk;
//   - electLeaders: moves leadership to each partition's preferred replica
//     (or, unclean, to any live replica), through the active controller.
// Admin (admin.ts) hands these calls here. Portable: no Node-only module.

import { ApiKey } from '../protocol/api-keys.js';
import type { DescribeQuorumResponse, QuorumMember } from '../protocol/apis/quorum.js';
import type { LogDirPartition } from '../protocol/apis/log-dirs.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import type { Client } from './client.js';
import { ResponseView } from './response-view.js';
import { errorFromCode } from './responses.js';

export type { QuorumMember };

export interface QuorumDescription {
  readonly leaderId: number;
  /** The Raft term. */
  readonly leaderEpoch: number;
  /** The leader's commit index: the metadata log's high watermark. */
  readonly highWatermark: number;
  readonly voters: readonly QuorumMember[];
  readonly observers: readonly QuorumMember[];
}

export interface BrokerLogDirs {
  readonly brokerId: number;
  /** The broker's data directory; null when the broker did not answer. */
  readonly logDir: string | null;
  /** Why the broker did not answer, or null. */
  readonly error: SluiceError | null;
  readonly replicas: ReadonlyArray<LogDirPartition & { readonly topic: string }>;
}

export interface ElectionResult {
  readonly topic: string;
  readonly partition: number;
  /** null: elected (or already led by the preferred replica); else why not. */
  readonly error: SluiceError | null;
}

function parseMember(m: ResponseView): QuorumMember {
  return { nodeId: m.int('nodeId'), logEndOffset: m.int('logEndOffset'), lag: m.int('lag'), recentContact: m.bool('recentContact') };
}

export function parseDescribeQuorumResponse(body: unknown): DescribeQuorumResponse {
  const v = ResponseView.of('DescribeQuorum', body);
  return {
    errorCode: v.int('errorCode'), errorMessage: v.strOrNull('errorMessage'),
    leaderId: v.int('leaderId'), leaderEpoch: v.int('leaderEpoch'), highWatermark: v.int('highWatermark'),
    voters: v.list('voters').map(parseMember), observers: v.list('observers').map(parseMember),
  };
}

export async function describeQuorum(client: Client): Promise<QuorumDescription> {
  const res = await client.retry('describeQuorum', async () => {
    const r = parseDescribeQuorumResponse(await (await client.anyConnection()).admin(ApiKey.DescribeQuorum, {}));
    if (r.errorCode !== Errors.NONE.code) throw errorFromCode(r.errorCode, r.errorMessage);
    return r;
  });
  return { leaderId: res.leaderId, leaderEpoch: res.leaderEpoch, highWatermark: res.highWatermark, voters: res.voters, observers: res.observers };
}

/** Every live broker's replicas (of `topics`, default all), in broker order; a broker that fails is listed with its error. */
export async function describeLogDirs(client: Client, topics?: readonly string[]): Promise<BrokerLogDirs[]> {
  await client.retry('Metadata', () => client.refreshMetadata());
  let query: Array<{ name: string; partitions: number[] }> = [];
  if (topics) {
    query = await Promise.all(topics.map(async (name) => {
      const t = await client.retry('Metadata', () => client.topic(name));
      return { name, partitions: t.partitions.map((p) => p.partition) };
    }));
  }
  const ids = [...client.clusterInfo.brokers.keys()].sort((a, b) => a - b);
  return Promise.all(ids.map(async (brokerId): Promise<BrokerLogDirs> => {
    try {
      const res = await client.retry('DescribeLogDirs', async () => (await client.connection(brokerId)).describeLogDirs({ topics: query }), { retries: 2 });
      const replicas = res.topics.flatMap((t) => t.partitions.filter((p) => p.errorCode === Errors.NONE.code).map((p) => ({ ...p, topic: t.name })));
      return { brokerId, logDir: res.logDir, error: null, replicas };
    } catch (err) {
      if (!isSluiceError(err)) throw err;
      return { brokerId, logDir: null, error: err, replicas: [] };
    }
  }));
}

/**
 * Elects leaders: 'preferred' moves each partition's leadership to its first
 * replica when that one is in the ISR; 'unclean' may pick a live replica
 * outside the ISR (losing what it lacks). `partitions` null: every partition.
 */
export async function electLeaders(
  client: Client, req: { partitions: ReadonlyArray<{ topic: string; partition: number }> | null; electionType?: 'preferred' | 'unclean' },
): Promise<ElectionResult[]> {
  const partitions = req.partitions === null ? null : req.partitions.map((p) => ({ topic: p.topic, partition: p.partition }));
  const body = { partitions, ...(req.electionType ? { electionType: req.electionType } : {}) };
  const res = await client.retry('electLeaders', async () => (await client.anyConnection()).admin(ApiKey.ElectLeaders, body));
  return res.partitions.map((p) => ({
    topic: p.topic, partition: p.partition,
    error: p.errorCode === Errors.NONE.code || p.errorCode === Errors.ELECTION_NOT_NEEDED.code
      ? null : errorFromCode(p.errorCode, p.errorMessage, { topic: p.topic, partition: p.partition }),
  }));
}
