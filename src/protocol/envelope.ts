// The frame envelope of the client/broker protocol. One WebSocket binary
// message = one frame, msgpack-encoded:
//
//   request  [apiKey: uint, apiVersion: uint, correlationId: uint32, clientId: string|null, body: map]
//   response [correlationId: uint32, body: map]
//
// Bodies are msgpack maps whose record batches are msgpack `bin` values: the
// raw RecordBatch v2 bytes, never re-encoded. msgpackr decodes `bin` as a view
// into the received frame, so a produced batch reaches the log without a copy.
//
// decodeRequest/decodeResponse never throw on hostile bytes: they return
// { ok: false, reason } and the connection decides (log and close). The body's
// shape is checked by each API's own validator, not here.

import { Packr } from 'msgpackr';
import { encodeChunked } from './chunked-msgpack.js';

export const CORRELATION_ID_MAX = 0xffffffff;

export interface RequestEnvelope<B = unknown> {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly body: B;
}

export interface ResponseEnvelope<B = unknown> {
  readonly correlationId: number;
  readonly body: B;
}

export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

// Plain maps (no msgpackr records/structures): frames stay self-describing
// and any client, including a browser one with another msgpack library, can
// speak the protocol.
const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true, encodeUndefinedAsNil: true });

export function encodeRequest(req: RequestEnvelope): Uint8Array {
  return packr.pack([req.apiKey, req.apiVersion, req.correlationId, req.clientId, req.body]);
}

export function encodeResponse(res: ResponseEnvelope): Buffer {
  return packr.pack([res.correlationId, res.body]);
}

/**
 * The same frame as encodeResponse, as chunks whose large `bin` values are the
 * body's own bytes (chunked-msgpack.ts): for answers that carry record batches.
 */
export function encodeResponseChunks(res: ResponseEnvelope): Uint8Array[] {
  return encodeChunked([res.correlationId, res.body]);
}

function unpack(bytes: Uint8Array): Decoded<unknown> {
  try {
    return { ok: true, value: packr.unpack(bytes) };
  } catch (err) {
    return { ok: false, reason: `not msgpack: ${(err as Error).message}` };
  }
}

/** A hostile value for an error message: typeof only, never String() (which can throw on crafted objects). */
const describe = (v: unknown): string => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : `a ${v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v}`);

const isUint = (v: unknown, max = Number.MAX_SAFE_INTEGER): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max;
const isBody = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

export function decodeRequest(bytes: Uint8Array): Decoded<RequestEnvelope> {
  const u = unpack(bytes);
  if (!u.ok) return u;
  const v = u.value;
  if (!Array.isArray(v) || v.length !== 5) return { ok: false, reason: 'request frame is not a 5-element array' };
  const [apiKey, apiVersion, correlationId, clientId, body] = v as unknown[];
  if (!isUint(apiKey, 0x7fff)) return { ok: false, reason: `bad api key ${describe(apiKey)}` };
  if (!isUint(apiVersion, 0x7fff)) return { ok: false, reason: `bad api version ${describe(apiVersion)}` };
  if (!isUint(correlationId, CORRELATION_ID_MAX)) return { ok: false, reason: `bad correlation id ${describe(correlationId)}` };
  if (clientId !== null && typeof clientId !== 'string') return { ok: false, reason: 'client id must be a string or null' };
  if (!isBody(body)) return { ok: false, reason: 'request body must be a map' };
  return { ok: true, value: { apiKey, apiVersion, correlationId, clientId, body } };
}

export function decodeResponse(bytes: Uint8Array): Decoded<ResponseEnvelope> {
  const u = unpack(bytes);
  if (!u.ok) return u;
  const v = u.value;
  if (!Array.isArray(v) || v.length !== 2) return { ok: false, reason: 'response frame is not a 2-element array' };
  const [correlationId, body] = v as unknown[];
  if (!isUint(correlationId, CORRELATION_ID_MAX)) return { ok: false, reason: `bad correlation id ${describe(correlationId)}` };
  if (!isBody(body)) return { ok: false, reason: 'response body must be a map' };
  return { ok: true, value: { correlationId, body } };
}

/** Best effort: the correlation id of a frame whose body failed validation, to answer it. */
export function peekCorrelationId(bytes: Uint8Array): number | null {
  const u = unpack(bytes);
  if (!u.ok || !Array.isArray(u.value)) return null;
  const id = (u.value as unknown[])[2];
  return isUint(id, CORRELATION_ID_MAX) ? id : null;
}
