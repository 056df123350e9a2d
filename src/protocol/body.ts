// Shape checks for request bodies (msgpack maps). Every API parses its body
// with these before acting, so a hostile or buggy client gets INVALID_REQUEST
// with the field named — never an exception deeper in the broker, and never a
// partial action. Shared by the broker's APIs and the controller's API.

import { Errors, SluiceError } from '../util/errors.js';
import { adoptBytes } from '../util/bytes.js';

export type Body = Record<string, unknown>;

export function badRequest(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_REQUEST, message);
}

const isMap = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

export function int(b: Body, k: string, dflt?: number): number {
  const v = b[k];
  if (v === undefined && dflt !== undefined) return dflt;
  if (!Number.isSafeInteger(v)) throw badRequest(`${k} must be an integer`);
  return v as number;
}

export function str(b: Body, k: string): string {
  const v = b[k];
  if (typeof v !== 'string') throw badRequest(`${k} must be a string`);
  return v;
}

export function optStr(b: Body, k: string): string | null {
  const v = b[k];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw badRequest(`${k} must be a string or null`);
  return v;
}

export function bool(b: Body, k: string, dflt: boolean): boolean {
  const v = b[k];
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw badRequest(`${k} must be a boolean`);
  return v;
}

export function ints(v: unknown, what: string): number[] {
  if (!Array.isArray(v) || !v.every((x) => Number.isSafeInteger(x))) throw badRequest(`${what} must be a list of integers`);
  return v as number[];
}

export function strs(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw badRequest(`${what} must be a list of strings`);
  return v as string[];
}

export function list(b: Body, k: string): Body[] {
  const v = b[k];
  if (!Array.isArray(v) || !v.every(isMap)) throw badRequest(`${k} must be a list of maps`);
  return v as Body[];
}

export function strMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined) return {};
  if (!isMap(v)) throw badRequest(`${what} must be a map`);
  for (const x of Object.values(v)) if (typeof x !== 'string') throw badRequest(`${what} values must be strings`);
  return v as Record<string, string>;
}

/**
 * A msgpack `bin` field as a view (no copy): a Buffer on Node (src/node.ts
 * installs the Buffer adoption), a plain Uint8Array in browsers, where only
 * Uint8Array methods are used on it.
 */
export function bytes(b: Body, k: string): Buffer {
  const v = b[k];
  if (!(v instanceof Uint8Array)) throw badRequest(`${k} must be binary`);
  return adoptBytes(v) as Buffer;
}
