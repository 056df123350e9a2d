// ApiVersions on the Kafka listener: every API this listener serves with its
// version range. The ranges start where Kafka 4.x's do (or lower), because
// librdkafka turns features on only when an old version is in range (MsgVer2
// needs Produce v3 and Fetch v4, idempotence InitProducerId v0, balanced
// groups JoinGroup/SyncGroup/Heartbeat/LeaveGroup v0 and OffsetCommit/
// OffsetFetch v1); docs/kafka-compatibility.md lists them.

import { apiVersions } from '../../protocol/kafka/apis/api-versions/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';

export function apiVersionsBody(handlers: ReadonlyMap<number, KafkaApiHandler>): Struct {
  const apiKeys = [...handlers.values()]
    .sort((a, b) => a.spec.apiKey - b.spec.apiKey)
    .map((h) => ({ apiKey: h.spec.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }));
  return { errorCode: 0, apiKeys, throttleTimeMs: 0 };
}

/** Needs the full handler table, so the table (handlers.ts) builds it with `apiVersionsHandler(table)`. */
export function apiVersionsHandler(table: () => ReadonlyMap<number, KafkaApiHandler>): KafkaApiHandler {
  return {
    spec: apiVersions,
    minVersion: 0,
    maxVersion: 4,
    handle: () => apiVersionsBody(table()),
    errorResponse: (_req, errorCode) => ({ errorCode, apiKeys: [] }),
  };
}
