// The Kafka listener's request dispatcher: one frame in, one answer out.
//
//   header → the API's handler (KAFKA_HANDLERS) → version check → body decoded
//   from the API's table → handler → body encoded at the request's version.
//
// Refusals follow Kafka's broker: an API key it does not serve, a version
// outside the advertised range (except ApiVersions), or bytes that do not
// decode close the connection with a logged reason (KafkaDecodeError and
// friends: the listener closes on a throw). ApiVersions of an unknown
// version is answered at v0 with UNSUPPORTED_VERSION and the full list (the
// client retries with a version both know). A handler's SluiceError becomes
// that API's error response (errorResponse), so the client always gets
// Kafka's error code, never a hang.

import { Reader } from '../../protocol/kafka/codec/reader.js';
import { Writer } from '../../protocol/kafka/codec/writer.js';
import { readRequestHeader, skipHeaderTags, writeResponseHeader, API_VERSIONS_KEY, type RequestHeader } from '../../protocol/kafka/header.js';
import { decodeMessage, encodeMessage, type Struct } from '../../protocol/kafka/message.js';
import { inVersions } from '../../protocol/kafka/schema.js';
import type { KafkaFrameHandler } from '../../net/kafka-server.js';
import type { ConnectionInfo } from '../../net/server-connection.js';
import { Errors, SluiceError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { NO_KAFKA_RESPONSE, type KafkaApiHandler, type KafkaDeps, type KafkaHandlerResult } from './api.js';
import { KAFKA_HANDLERS } from './handlers.js';
import { apiVersionsBody } from './api-versions.js';
import { guardedDeps, requestAccess } from '../access-control.js';

export class KafkaProtocolError extends Error {
  override name = 'KafkaProtocolError';
}

function encodeAnswer(handler: KafkaApiHandler, header: RequestHeader, body: Struct): Uint8Array[] {
  const w = new Writer();
  writeResponseHeader(w, header.correlationId, inVersions(handler.spec.response.flexible, header.apiVersion), header.apiKey);
  encodeMessage(handler.spec.response, header.apiVersion, body, w);
  return w.finish();
}

export function createKafkaFrameHandler(deps: KafkaDeps, log: Logger, handlers: ReadonlyMap<number, KafkaApiHandler> = KAFKA_HANDLERS): KafkaFrameHandler {
  return (frame: Buffer, conn: ConnectionInfo) => {
    const r = new Reader(frame);
    const header = readRequestHeader(r);
    // Before authentication only ApiVersions and the SASL APIs are served; anything else closes the connection unanswered.
    if (deps.sasl?.refuse(conn, header.apiKey)) return null;
    const handler = handlers.get(header.apiKey);
    if (!handler) throw new KafkaProtocolError(`api key ${header.apiKey} is not served on this listener`);
    if (header.apiVersion < handler.minVersion || header.apiVersion > handler.maxVersion) {
      if (header.apiKey === API_VERSIONS_KEY) {
        const body = { ...apiVersionsBody(handlers), errorCode: Errors.UNSUPPORTED_VERSION.code };
        return encodeAnswer(handler, { ...header, apiVersion: 0 }, body);
      }
      throw new KafkaProtocolError(`${handler.spec.name} v${header.apiVersion} is outside the served range ${handler.minVersion}-${handler.maxVersion}`);
    }
    if (inVersions(handler.spec.request.flexible, header.apiVersion)) skipHeaderTags(r);
    const req = decodeMessage(handler.spec.request, header.apiVersion, r);
    // With an authorizer: the API's request-wide rule first, then operations that check each topic and group.
    const access = requestAccess(deps, conn);
    const ctx = { version: header.apiVersion, header, conn, deps: guardedDeps(deps, access), access };
    const onError = (err: unknown): Uint8Array[] => {
      if (!(err instanceof SluiceError)) log.error({ err, api: handler.spec.name, conn: conn.id }, 'Kafka request handler failed');
      const code = err instanceof SluiceError ? err.code : Errors.UNKNOWN_SERVER_ERROR.code;
      const message = err instanceof Error ? err.message : 'unknown error';
      return encodeAnswer(handler, header, handler.errorResponse(req, code, message));
    };
    // A body the table cannot encode is the handler's bug: logged, and the client gets the API's error answer.
    const answer = (result: KafkaHandlerResult): Uint8Array[] | null => {
      if (result === NO_KAFKA_RESPONSE) return null;
      try {
        return encodeAnswer(handler, header, result);
      } catch (err) {
        log.error({ err, api: handler.spec.name, version: header.apiVersion }, 'Kafka response encoding failed');
        return encodeAnswer(handler, header, handler.errorResponse(req, Errors.UNKNOWN_SERVER_ERROR.code, 'response encoding failed'));
      }
    };
    let result: KafkaHandlerResult | Promise<KafkaHandlerResult>;
    try {
      access?.checkRequest(header.apiKey, handler.spec.name);
      result = handler.handle(req, ctx);
    } catch (err) {
      return onError(err);
    }
    if (result instanceof Promise) return result.then(answer, onError);
    return answer(result);
  };
}
