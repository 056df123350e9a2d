// The contract between the Kafka listener's dispatcher (dispatch.ts) and the
// handler of each API (one file per API in this folder). A handler turns a
// decoded Kafka request into the broker operations both client protocols
// share (the replica manager, the group coordinator, the controller) and
// their results into a Kafka response body; the tables in
// src/protocol/kafka/apis/ say how either is laid out on the wire.

import type { KafkaApiSpec } from '../../protocol/kafka/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { RequestHeader } from '../../protocol/kafka/header.js';
import type { ConnectionInfo } from '../../net/server-connection.js';
import type { BrokerApiDeps } from '../broker-api.js';
import type { RequestAccess } from '../access-control.js';
import type { ClientQuotas } from '../quotas.js';

/** What a Kafka request handler may use: the broker's operations and the listener's view of the cluster. */
export interface KafkaDeps extends BrokerApiDeps {
  /** auto.create.topics.enable: Metadata creates missing topics a client asks for with allowAutoTopicCreation. */
  readonly autoCreateTopics: boolean;
  /** Client quotas (quotas.ts); absent, nothing is throttled. */
  readonly quotas?: ClientQuotas;
}

export interface KafkaRequestContext {
  readonly version: number;
  readonly header: RequestHeader;
  readonly conn: ConnectionInfo;
  /** The broker's operations, guarded by the access rules when an authorizer is on (access-control.ts). */
  readonly deps: KafkaDeps;
  /** Who asks and what they may do; null when no authorizer is configured. */
  readonly access: RequestAccess | null;
}

/** Returned by a handler for a request that gets no answer (Produce with acks=0). */
export const NO_KAFKA_RESPONSE: unique symbol = Symbol('no Kafka response');

export type KafkaHandlerResult = Struct | typeof NO_KAFKA_RESPONSE;

export interface KafkaApiHandler {
  readonly spec: KafkaApiSpec;
  /** The versions advertised in ApiVersions and served. */
  readonly minVersion: number;
  readonly maxVersion: number;
  handle(req: Struct, ctx: KafkaRequestContext): KafkaHandlerResult | Promise<KafkaHandlerResult>;
  /**
   * The response to `req` when the request failed as a whole (Kafka's
   * AbstractRequest.getErrorResponse): the error on every item the request
   * named, so a client sees one error per partition, topic or group it asked about.
   * `version` is the request's, for codes an older version does not know.
   */
  errorResponse(req: Struct, errorCode: number, errorMessage: string, version: number): Struct;
}
