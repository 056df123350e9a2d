// Frame codec of the controller listener. Every WebSocket message is one
// binary msgpackr frame; its `k` field says what it is:
//
//   hello     first frame on every connection: who is talking
//             node:   { k, role: 'node', version, nodeId, clusterId }
//             client: { k, role: 'client', version, clusterId? }
//   helloAck  server → client: { k, nodeId, clusterId }
//   raft      node → node: { k, msgs: Message[] } (a batch for one peer)
//   req       client → node: { k, reqs: [{ id, op: 'propose' | 'status' | 'read', data? }] }
//   resp      node → client: { k, resps: [{ id, result } | { id, error: WireError }] }
//
// Requests and responses travel in batches: a client pipelining many
// proposals, and a leader answering all the proposals one Ready applied, pay
// one frame (one encode, one system call) per batch instead of per request.
//
// decodeFrame never throws: bytes that are not msgpack, or a value of the
// wrong shape, come back as { ok: false, reason } so the transport can log
// and drop. A raft frame's messages are checked one by one (message-check.ts);
// the ill-shaped ones are counted in `dropped` and left out.
//
// Records (msgpackr's `useRecords`) are on: a batch of appends repeats the
// entry structure, and records send its keys once per frame. Structures are
// not shared between frames, so a lost or reordered frame never breaks the
// next one.

import { Packr, Unpackr } from 'msgpackr';
import type { Message } from '../raft/types.js';
import { checkMessage } from './message-check.js';

export const WIRE_VERSION = 1;

export type ClientOp = 'propose' | 'status' | 'read' | 'controller';
const CLIENT_OPS: readonly string[] = ['propose', 'status', 'read', 'controller'];

export interface NodeHello { readonly k: 'hello'; readonly role: 'node'; readonly version: number; readonly nodeId: number; readonly clusterId: string }
export interface ClientHello { readonly k: 'hello'; readonly role: 'client'; readonly version: number; readonly clusterId?: string }
export interface HelloAck { readonly k: 'helloAck'; readonly nodeId: number; readonly clusterId: string }
export interface RaftFrame { readonly k: 'raft'; readonly msgs: readonly Message[] }
export interface ClientRequest {
  readonly id: number;
  readonly op: ClientOp;
  readonly data?: Uint8Array;
  /** op 'controller': which controller API, and its request body (checked by the controller). */
  readonly api?: string;
  readonly body?: Record<string, unknown>;
}
export interface RequestFrame { readonly k: 'req'; readonly reqs: readonly ClientRequest[] }

/** An error on the wire: a code from the one table plus leader hints for NOT_CONTROLLER. */
export interface WireError {
  readonly code: number;
  readonly name: string;
  readonly message: string;
  readonly leader?: number;
  readonly leaderEndpoint?: string;
}

export interface ClientResponse {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: WireError;
}

export interface ResponseFrame { readonly k: 'resp'; readonly resps: readonly ClientResponse[] }

export type Frame = NodeHello | ClientHello | HelloAck | RaftFrame | RequestFrame | ResponseFrame;

export type DecodeResult =
  | { readonly ok: true; readonly frame: Frame; readonly dropped: number }
  | { readonly ok: false; readonly reason: string };

const packr = new Packr({ useRecords: true });
// mapsAsObjects: plain msgpack maps (from clients that do not use records)
// decode as objects too, so the shape checks see one representation.
const unpackr = new Unpackr({ useRecords: true, mapsAsObjects: true });

export function encodeFrame(frame: Frame): Buffer {
  return packr.pack(frame);
}

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isId(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function checkHello(o: Obj): Frame | string {
  if (!isId(o.version)) return 'hello without a version';
  if (o.role === 'node') {
    if (!(isId(o.nodeId) && o.nodeId > 0) || typeof o.clusterId !== 'string') return 'node hello needs nodeId and clusterId';
    return { k: 'hello', role: 'node', version: o.version, nodeId: o.nodeId, clusterId: o.clusterId };
  }
  if (o.role === 'client') {
    if (o.clusterId !== undefined && typeof o.clusterId !== 'string') return 'client hello: clusterId must be a string';
    return { k: 'hello', role: 'client', version: o.version, ...(o.clusterId !== undefined ? { clusterId: o.clusterId as string } : {}) };
  }
  return 'hello with an unknown role';
}

function checkRaft(o: Obj): { frame: RaftFrame; dropped: number } | string {
  if (!Array.isArray(o.msgs)) return 'raft frame without msgs';
  const msgs: Message[] = [];
  for (const m of o.msgs) {
    const msg = checkMessage(m);
    if (msg) msgs.push(msg);
  }
  return { frame: { k: 'raft', msgs }, dropped: o.msgs.length - msgs.length };
}

function checkRequest(x: unknown): ClientRequest | string {
  if (!isObj(x)) return 'request is not a map';
  if (!isId(x.id)) return 'request without an id';
  if (typeof x.op !== 'string' || !CLIENT_OPS.includes(x.op)) return `unknown request op ${String(x.op).slice(0, 32)}`;
  if (x.data !== undefined && !(x.data instanceof Uint8Array)) return 'request data must be bytes';
  if (x.op === 'controller' && (typeof x.api !== 'string' || !isObj(x.body))) return 'controller request needs an api name and a body map';
  return {
    id: x.id,
    op: x.op as ClientOp,
    ...(x.data !== undefined ? { data: x.data as Uint8Array } : {}),
    ...(x.op === 'controller' ? { api: x.api as string, body: x.body as Record<string, unknown> } : {}),
  };
}

/** Checks every element with `check`; the first problem rejects the whole batch. */
function checkBatch<T>(list: unknown, check: (x: unknown) => T | string, what: string): T[] | string {
  if (!Array.isArray(list) || list.length === 0) return `${what} frame without a non-empty list`;
  const out: T[] = [];
  for (const x of list) {
    const r = check(x);
    if (typeof r === 'string') return r;
    out.push(r);
  }
  return out;
}

function checkWireError(x: unknown): WireError | undefined {
  if (!isObj(x) || typeof x.code !== 'number' || typeof x.name !== 'string' || typeof x.message !== 'string') return undefined;
  return {
    code: x.code,
    name: x.name,
    message: x.message,
    ...(isId(x.leader) ? { leader: x.leader } : {}),
    ...(typeof x.leaderEndpoint === 'string' ? { leaderEndpoint: x.leaderEndpoint } : {}),
  };
}

function checkResponse(x: unknown): ClientResponse | string {
  if (!isObj(x) || !isId(x.id)) return 'response without an id';
  if (x.error !== undefined) {
    const error = checkWireError(x.error);
    return error ? { id: x.id, error } : 'response with a malformed error';
  }
  return { id: x.id, result: x.result };
}

function checkFrame(value: unknown): DecodeResult {
  if (!isObj(value)) return { ok: false, reason: 'frame is not a map' };
  let checked: Frame | string;
  switch (value.k) {
    case 'hello': checked = checkHello(value); break;
    case 'helloAck':
      checked = isId(value.nodeId) && typeof value.clusterId === 'string'
        ? { k: 'helloAck', nodeId: value.nodeId, clusterId: value.clusterId } : 'malformed helloAck';
      break;
    case 'raft': {
      const r = checkRaft(value);
      return typeof r === 'string' ? { ok: false, reason: r } : { ok: true, frame: r.frame, dropped: r.dropped };
    }
    case 'req': {
      const reqs = checkBatch(value.reqs, checkRequest, 'req');
      checked = typeof reqs === 'string' ? reqs : { k: 'req', reqs };
      break;
    }
    case 'resp': {
      const resps = checkBatch(value.resps, checkResponse, 'resp');
      checked = typeof resps === 'string' ? resps : { k: 'resp', resps };
      break;
    }
    default: return { ok: false, reason: `unknown frame kind ${String(value.k).slice(0, 32)}` };
  }
  return typeof checked === 'string' ? { ok: false, reason: checked } : { ok: true, frame: checked, dropped: 0 };
}

/** Decodes and shape-checks one frame. Never throws. */
export function decodeFrame(bytes: Uint8Array): DecodeResult {
  let value: unknown;
  try {
    value = unpackr.unpack(bytes);
  } catch (err) {
    return { ok: false, reason: `not msgpack: ${(err as Error).message}` };
  }
  try {
    return checkFrame(value);
  } catch (err) {
    // Getters or odd prototypes on decoded values must not crash the process.
    return { ok: false, reason: `unreadable frame: ${(err as Error).message}` };
  }
}

/** Rough wire size of a message, for splitting batches into frames of bounded size. */
export function estimateMessageBytes(msg: Message): number {
  const base = 96;
  if (msg.type === 'append') {
    let bytes = base;
    for (const e of msg.entries) bytes += e.data.length + 24;
    return bytes;
  }
  if (msg.type === 'installSnapshot') return base + msg.chunk.length + 32 * (msg.meta.membership.voters.length + 1);
  return base;
}
