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
//
// Quotas (src/server/quotas.ts): each request's handler time, a Produce's
// size and a Fetch answer's record bytes are settled against the client's
// quotas; the answer's throttleTimeMs carries the throttle (in every API and
// version whose response has the field) and the connection is muted for it.
// A consumer fetch asks for at most its quota's window budget, and a
// throttled fetch is answered empty (Kafka's getThrottledResponse).

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
import { fetchBytesOf, type ClientQuotas, type RequestUsage } from '../quotas.js';

const PRODUCE_KEY = 0;
const FETCH_KEY = 1;

export class KafkaProtocolError extends Error {
  override name = 'KafkaProtocolError';
}

function encodeAnswer(handler: KafkaApiHandler, header: RequestHeader, body: Struct): Uint8Array[] {
  const w = new Writer();
  writeResponseHeader(w, header.correlationId, inVersions(handler.spec.response.flexible, header.apiVersion), header.apiKey);
  encodeMessage(handler.spec.response, header.apiVersion, body, w);
  return w.finish();
}

interface QuotaScope {
  /** The handler's synchronous part is over: its time is the request's cost. */
  handled(): void;
  /** Records the request and returns its answer with the throttle in throttleTimeMs (a throttled fetch: empty). */
  settle(body: Struct | null, failed: boolean): Struct | null;
}

/** The quota side of one request, or null while no quota is set (then nothing is measured). */
function quotaScope(quotas: ClientQuotas | undefined, conn: ConnectionInfo, header: RequestHeader, req: Struct, frameBytes: number): QuotaScope | null {
  if (!quotas?.manager.enabled) return null;
  const client = quotas.client(conn, header.clientId);
  // Replica fetches are refused on this listener (fetch.ts): every fetch here is a consumer's.
  const consumerFetch = header.apiKey === FETCH_KEY;
  if (consumerFetch) {
    const cap = quotas.fetchBytesMax(client);
    if (cap !== null && (req.maxBytes as number) > cap) req.maxBytes = cap;
  }
  const start = quotas.now();
  let handlerMs = 0;
  return {
    handled: () => { handlerMs = quotas.now() - start; },
    settle(body, failed) {
      const use: RequestUsage = {
        handlerMs,
        ...(header.apiKey === PRODUCE_KEY ? { produceBytes: frameBytes } : {}),
        ...(consumerFetch && !failed && body ? { fetchBytes: fetchBytesOf(body) } : {}),
      };
      const s = quotas.settle(conn, client, use);
      if (!body || s.throttleMs === 0) return body;
      return s.emptyFetch ? { ...body, throttleTimeMs: s.throttleMs, responses: [], nodeEndpoints: [] } : { ...body, throttleTimeMs: s.throttleMs };
    },
  };
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
    const scope = quotaScope(deps.quotas, conn, header, req, frame.length);
    const settle = (body: Struct | null, failed: boolean): Struct | null => (scope ? scope.settle(body, failed) : body);
    const onError = (err: unknown): Uint8Array[] => {
      if (!(err instanceof SluiceError)) log.error({ err, api: handler.spec.name, conn: conn.id }, 'Kafka request handler failed');
      const code = err instanceof SluiceError ? err.code : Errors.UNKNOWN_SERVER_ERROR.code;
      const message = err instanceof Error ? err.message : 'unknown error';
      return encodeAnswer(handler, header, settle(handler.errorResponse(req, code, message, header.apiVersion), true)!);
    };
    // A body the table cannot encode is the handler's bug: logged, and the client gets the API's error answer.
    const answer = (handled: KafkaHandlerResult): Uint8Array[] | null => {
      if (handled === NO_KAFKA_RESPONSE) {
        settle(null, false);
        return null;
      }
      const result = settle(handled, false)!;
      try {
        return encodeAnswer(handler, header, result);
      } catch (err) {
        log.error({ err, api: handler.spec.name, version: header.apiVersion }, 'Kafka response encoding failed');
        return encodeAnswer(handler, header, handler.errorResponse(req, Errors.UNKNOWN_SERVER_ERROR.code, 'response encoding failed', header.apiVersion));
      }
    };
    let result: KafkaHandlerResult | Promise<KafkaHandlerResult>;
    try {
      access?.checkRequest(header.apiKey, handler.spec.name, typeof req.transactionalId === 'string' ? req.transactionalId : null);
      result = handler.handle(req, ctx);
    } catch (err) {
      scope?.handled();
      return onError(err);
    }
    scope?.handled();
    if (result instanceof Promise) return result.then(answer, onError);
    return answer(result);
  };
}
