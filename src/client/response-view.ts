// Checked reads of a response body (a msgpack map) for the client. A broker
// is trusted to be correct but not assumed to be: a field of the wrong type
// becomes one SluiceError naming the API and the field's path, instead of a
// TypeError deep inside a producer or consumer, or a NaN offset that silently
// corrupts a consumer's position.
//
// Malformed answers map to UNKNOWN_SERVER_ERROR (not retriable): the server
// broke the protocol, so retrying the same request cannot be expected to help.

import { Errors, SluiceError } from '../util/errors.js';

type Obj = Record<string, unknown>;

const isMap = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** A position inside a response body; each read checks the field's type. */
export class ResponseView {
  private constructor(private readonly api: string, private readonly path: string, private readonly o: Obj) {}

  static of(api: string, body: unknown): ResponseView {
    if (!isMap(body)) throw malformed(api, '(body)', 'a map');
    return new ResponseView(api, '', body);
  }

  int(k: string): number {
    const v = this.o[k];
    if (!Number.isSafeInteger(v)) throw this.bad(k, 'an integer');
    return v as number;
  }

  /** A finite number (a ratio). */
  num(k: string): number {
    const v = this.o[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw this.bad(k, 'a number');
    return v;
  }

  optInt(k: string): number | undefined {
    return this.o[k] === undefined ? undefined : this.int(k);
  }

  bool(k: string): boolean {
    const v = this.o[k];
    if (typeof v !== 'boolean') throw this.bad(k, 'a boolean');
    return v;
  }

  str(k: string): string {
    const v = this.o[k];
    if (typeof v !== 'string') throw this.bad(k, 'a string');
    return v;
  }

  strOrNull(k: string): string | null {
    const v = this.o[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw this.bad(k, 'a string or null');
    return v;
  }

  ints(k: string): number[] {
    const v = this.o[k];
    if (!Array.isArray(v) || !v.every((x) => Number.isSafeInteger(x))) throw this.bad(k, 'a list of integers');
    return v as number[];
  }

  bin(k: string): Uint8Array {
    const v = this.o[k];
    if (!(v instanceof Uint8Array)) throw this.bad(k, 'binary');
    return v;
  }

  /** The fields of this map other than `except` (e.g. an error's hints beside its code). */
  rest(except: readonly string[]): Record<string, unknown> {
    return Object.fromEntries(Object.entries(this.o).filter(([k]) => !except.includes(k)));
  }

  /** A list, or null when the field is absent or null (Kafka's nullable arrays). */
  listOrNull(k: string): ResponseView[] | null {
    const v = this.o[k];
    return v === undefined || v === null ? null : this.list(k);
  }

  list(k: string): ResponseView[] {
    const v = this.o[k];
    if (!Array.isArray(v)) throw this.bad(k, 'a list');
    return v.map((item, i) => {
      if (!isMap(item)) throw this.bad(`${k}[${i}]`, 'a map');
      return new ResponseView(this.api, `${this.where(k)}[${i}]`, item);
    });
  }

  private where(k: string): string {
    return this.path ? `${this.path}.${k}` : k;
  }

  private bad(k: string, want: string): SluiceError {
    return malformed(this.api, this.where(k), want);
  }
}

function malformed(api: string, path: string, want: string): SluiceError {
  return new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `malformed ${api} response: ${path} must be ${want}`, { api, path });
}
