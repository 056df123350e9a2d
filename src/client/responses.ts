// Client-side decoding of response bodies: whole-request failures become
// thrown SluiceErrors, the data-plane answers are checked field by field into
// the protocol's typed shapes (src/protocol/apis/*), and per-partition error
// codes stay in the returned data for the caller to act on.
//
// Invariant: a value returned from here has every field its type promises
// (safe integers, strings or null, binary records); anything else threw.

import type { FetchPartitionResponse, FetchResponse } from '../protocol/apis/fetch.js';
import type { ApiVersionsResponse, MetadataResponse } from '../protocol/apis/metadata.js';
import type { EpochEndOffsetResponse, ListOffsetsPartitionResponse } from '../protocol/apis/offsets.js';
import type { ProduceResponse } from '../protocol/apis/produce.js';
import type { DescribeLogDirsResponse } from '../protocol/apis/log-dirs.js';
import { Errors, SluiceError, errorForCode, type ErrorInfo } from '../util/errors.js';
import { ResponseView } from './response-view.js';

export interface ListOffsetsResponse { topics: Array<{ name: string; partitions: ListOffsetsPartitionResponse[] }> }
export interface OffsetForLeaderEpochResponse { topics: Array<{ name: string; partitions: EpochEndOffsetResponse[] }> }

/** DescribeCluster as the broker answers it (src/server/broker-api.ts; not yet in src/protocol/apis). */
export interface DescribeClusterResponse {
  clusterId: string | null;
  controllerId: number;
  metadataOffset: number;
  brokers: Array<{
    nodeId: number; fenced: boolean; inControlledShutdown: boolean; rack: string | null;
    endpoints: Array<{ name: string; url: string }>;
  }>;
}

/**
 * The SluiceError for a code from the wire. A code missing from our table
 * (a newer broker) keeps its number rather than collapsing into
 * UNKNOWN_SERVER_ERROR, and is not retriable. The broker's message already
 * starts with the error's name; it is not repeated.
 */
export function errorFromCode(code: number, message: string | null, details: Record<string, unknown> = {}): SluiceError {
  const known = errorForCode(code);
  const info: ErrorInfo = known.code === code
    ? known
    : { code, name: `UNKNOWN_ERROR_CODE_${code}`, retriable: false, message: `Error code ${code} is not known to this client` };
  const prefix = `${info.name}: `;
  const text = message !== null && message.startsWith(prefix) ? message.slice(prefix.length) : message;
  return new SluiceError(info, text || undefined, details);
}

/**
 * Throws the whole-request failure a body carries (a nonzero top-level
 * errorCode). Fields beside the code (hints such as a NOT_CONTROLLER's
 * controllerId) go into the error's details.
 */
export function throwIfFailed(api: string, url: string, body: unknown): void {
  const view = ResponseView.of(api, body);
  const code = view.optInt('errorCode');
  if (code === undefined || code === Errors.NONE.code) return;
  throw errorFromCode(code, view.strOrNull('errorMessage'), { ...view.rest(['errorCode', 'errorMessage']), api, url });
}

export function parseApiVersionsResponse(body: unknown): ApiVersionsResponse {
  const v = ResponseView.of('ApiVersions', body);
  return {
    errorCode: v.optInt('errorCode') ?? 0,
    apiKeys: v.list('apiKeys').map((k) => ({ apiKey: k.int('apiKey'), minVersion: k.int('minVersion'), maxVersion: k.int('maxVersion') })),
  };
}

export function parseMetadataResponse(body: unknown): MetadataResponse {
  const v = ResponseView.of('Metadata', body);
  return {
    clusterId: v.strOrNull('clusterId'),
    controllerId: v.int('controllerId'),
    brokers: v.list('brokers').map((b) => ({ nodeId: b.int('nodeId'), url: b.str('url'), rack: b.strOrNull('rack') })),
    topics: v.list('topics').map((t) => ({
      errorCode: t.int('errorCode'),
      errorMessage: t.strOrNull('errorMessage'),
      name: t.str('name'),
      topicId: t.strOrNull('topicId'),
      partitions: t.list('partitions').map((p) => ({
        partition: p.int('partition'), errorCode: p.int('errorCode'), leader: p.int('leader'), leaderEpoch: p.int('leaderEpoch'),
        replicas: p.ints('replicas'), isr: p.ints('isr'), offlineReplicas: p.ints('offlineReplicas'),
      })),
    })),
  };
}

export function parseProduceResponse(body: unknown): ProduceResponse {
  return {
    topics: ResponseView.of('Produce', body).list('topics').map((t) => ({
      name: t.str('name'),
      partitions: t.list('partitions').map((p) => ({
        partition: p.int('partition'), errorCode: p.int('errorCode'), errorMessage: p.strOrNull('errorMessage'),
        baseOffset: p.int('baseOffset'), logStartOffset: p.int('logStartOffset'),
      })),
    })),
  };
}

export function parseFetchResponse(body: unknown): FetchResponse {
  const v = ResponseView.of('Fetch', body);
  return {
    errorCode: v.optInt('errorCode') ?? 0,
    topics: v.list('topics').map((t) => ({ name: t.str('name'), partitions: t.list('partitions').map(fetchPartition) })),
  };
}

function fetchPartition(p: ResponseView): FetchPartitionResponse {
  const logEndOffset = p.optInt('logEndOffset');
  return {
    partition: p.int('partition'), errorCode: p.int('errorCode'), errorMessage: p.strOrNull('errorMessage'),
    highWatermark: p.int('highWatermark'), logStartOffset: p.int('logStartOffset'),
    ...(logEndOffset === undefined ? {} : { logEndOffset }),
    lastStableOffset: p.optInt('lastStableOffset') ?? p.int('highWatermark'),
    abortedTransactions: p.listOrNull('abortedTransactions')?.map((a) => ({ producerId: a.int('producerId'), firstOffset: a.int('firstOffset') })) ?? null,
    records: p.bin('records'),
  };
}

export function parseListOffsetsResponse(body: unknown): ListOffsetsResponse {
  return {
    topics: ResponseView.of('ListOffsets', body).list('topics').map((t) => ({
      name: t.str('name'),
      partitions: t.list('partitions').map((p) => ({
        partition: p.int('partition'), errorCode: p.int('errorCode'), errorMessage: p.strOrNull('errorMessage'),
        timestamp: p.int('timestamp'), offset: p.int('offset'), leaderEpoch: p.int('leaderEpoch'),
      })),
    })),
  };
}

export function parseDescribeLogDirsResponse(body: unknown): DescribeLogDirsResponse {
  const view = ResponseView.of('DescribeLogDirs', body);
  return {
    logDir: view.str('logDir'),
    topics: view.list('topics').map((t) => ({
      name: t.str('name'),
      partitions: t.list('partitions').map((p) => ({
        partition: p.int('partition'), errorCode: p.int('errorCode'), errorMessage: p.strOrNull('errorMessage'),
        sizeBytes: p.int('sizeBytes'), segments: p.int('segments'), logStartOffset: p.int('logStartOffset'), logEndOffset: p.int('logEndOffset'),
        highWatermark: p.int('highWatermark'), cleanupPolicy: p.str('cleanupPolicy'), dirtyRatio: p.num('dirtyRatio'), firstDirtyOffset: p.int('firstDirtyOffset'),
        cleanableBytes: p.int('cleanableBytes'), lastCleanMs: p.int('lastCleanMs'), cleaning: p.bool('cleaning'), uncleanable: p.strOrNull('uncleanable'),
      })),
    })),
  };
}

export function parseOffsetForLeaderEpochResponse(body: unknown): OffsetForLeaderEpochResponse {
  return {
    topics: ResponseView.of('OffsetForLeaderEpoch', body).list('topics').map((t) => ({
      name: t.str('name'),
      partitions: t.list('partitions').map((p) => ({
        partition: p.int('partition'), errorCode: p.int('errorCode'), errorMessage: p.strOrNull('errorMessage'),
        leaderEpoch: p.int('leaderEpoch'), endOffset: p.int('endOffset'),
      })),
    })),
  };
}

export function parseDescribeClusterResponse(body: unknown): DescribeClusterResponse {
  const v = ResponseView.of('DescribeCluster', body);
  return {
    clusterId: v.strOrNull('clusterId'),
    controllerId: v.int('controllerId'),
    metadataOffset: v.int('metadataOffset'),
    brokers: v.list('brokers').map((b) => ({
      nodeId: b.int('nodeId'), fenced: b.bool('fenced'), inControlledShutdown: b.bool('inControlledShutdown'), rack: b.strOrNull('rack'),
      endpoints: b.list('endpoints').map((e) => ({ name: e.str('name'), url: e.str('url') })),
    })),
  };
}
