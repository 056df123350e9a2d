// Kafka's request and response headers (RequestHeader/ResponseHeader in the
// spec) and the choice of header version per API version.
//
//   request header v1:  apiKey int16 | apiVersion int16 | correlationId int32 | clientId nullable string (int16 length)
//   request header v2:  v1 + tagged fields (the client id keeps its int16 length even here)
//   response header v0: correlationId int32
//   response header v1: v0 + tagged fields
//
// A request uses header v2 and its response header v1 exactly when the API
// version is flexible, except that ApiVersions' response header is always v0
// (a client must be able to read the answer before it knows what the broker
// supports). Header v0 (no client id) only ever served ControlledShutdown v0,
// which Sluice does not advertise.

import { KafkaDecodeError, Reader } from './codec/reader.js';
import type { Writer } from './codec/writer.js';

export const API_VERSIONS_KEY = 18;

export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

/** The fixed part every request header starts with; enough to answer or refuse. */
export function readRequestHeader(r: Reader): RequestHeader {
  const apiKey = r.int16('request api key');
  const apiVersion = r.int16('request api version');
  const correlationId = r.int32('correlation id');
  const n = r.int16('client id length');
  if (n < -1) throw new KafkaDecodeError(`client id length ${n}`);
  const clientId = n < 0 ? null : r.utf8Of(n, 'client id');
  return { apiKey, apiVersion, correlationId, clientId };
}

/** Skips the tagged fields ending a v2 request header (none are defined that Sluice reads). */
export function skipHeaderTags(r: Reader): void {
  const count = r.uvarint('header tagged field count');
  for (let i = 0; i < count; i++) {
    r.uvarint('header tag');
    r.skip(r.uvarint('header tag size'), 'header tag');
  }
}

export function writeResponseHeader(w: Writer, correlationId: number, flexible: boolean, apiKey: number): void {
  w.int32(correlationId);
  if (flexible && apiKey !== API_VERSIONS_KEY) w.uvarint(0);
}

export function writeRequestHeader(w: Writer, h: RequestHeader, flexible: boolean): void {
  w.int16(h.apiKey);
  w.int16(h.apiVersion);
  w.int32(h.correlationId);
  if (h.clientId === null) w.int16(-1);
  else {
    w.int16(Buffer.byteLength(h.clientId, 'utf8'));
    w.utf8(h.clientId);
  }
  if (flexible) w.uvarint(0);
}
