// The table language for Kafka's messages. Each API's request and response is
// one table of fields with the versions each field exists in, written by hand
// from Kafka's public message definitions (the spec); one interpreter
// (message.ts) encodes and decodes every version from its table, so a new
// version is a table edit, not a new function.
//
//   f.int32('throttleTimeMs', '1+')
//   f.string('clientId', '1+', { nullable: '1+' })
//   f.array('topics', '0+', [f.string('name'), f.array('partitions', '0+', 'int32')])
//   f.int64('epoch', '3+', { tag: 1, default: -1 })       // a tagged field of v3+
//
// Version ranges use the spec's notation: '0+', '3-5', '7', 'none'. Field
// names are the spec's names in lowerCamelCase (ErrorCode -> errorCode), which
// is also the property name in the decoded object.

export interface Versions {
  readonly min: number;
  /** Inclusive; Infinity for an open range. */
  readonly max: number;
}

export const NO_VERSIONS: Versions = { min: 0, max: -1 };

export function versions(s: string): Versions {
  if (s === 'none') return NO_VERSIONS;
  const plus = /^(\d+)\+$/.exec(s);
  if (plus) return { min: Number(plus[1]), max: Infinity };
  const range = /^(\d+)-(\d+)$/.exec(s);
  if (range) return { min: Number(range[1]), max: Number(range[2]) };
  if (/^\d+$/.test(s)) return { min: Number(s), max: Number(s) };
  throw new Error(`bad version range ${JSON.stringify(s)}`);
}

export const inVersions = (v: Versions, version: number): boolean => version >= v.min && version <= v.max;

export type PrimitiveType =
  | 'int8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'float64' | 'bool'
  | 'string' | 'bytes' | 'records' | 'uuid';

export interface StructSpec {
  readonly fields: readonly FieldSpec[];
}

export interface FieldSpec {
  readonly name: string;
  readonly type: PrimitiveType | StructSpec;
  /** An array of `type`. */
  readonly array: boolean;
  readonly versions: Versions;
  readonly nullable: Versions;
  /** A tagged field's tag (flexible versions only); null for a regular field. */
  readonly tag: number | null;
  readonly tagged: Versions;
  /** The value of the field in versions it does not exist in, and of a tagged field left out. */
  readonly default: unknown;
}

export interface MessageSpec extends StructSpec {
  readonly name: string;
  readonly apiKey: number;
  readonly valid: Versions;
  readonly flexible: Versions;
}

interface FieldOptions {
  readonly nullable?: string;
  readonly tag?: number;
  /** Tagged versions; defaults to the field's versions. */
  readonly tagged?: string;
  readonly default?: unknown;
}

function defaultFor(type: PrimitiveType | StructSpec, array: boolean, nullable: boolean): unknown {
  if (array) return nullable ? null : [];
  if (typeof type !== 'string') return nullable ? null : undefined;
  switch (type) {
    case 'bool': return false;
    case 'string': return nullable ? null : '';
    case 'bytes': case 'records': return nullable ? null : Buffer.alloc(0);
    case 'uuid': return ZERO_UUID;
    default: return 0;
  }
}

/** Kafka's all-zero UUID: "no topic id". */
export const ZERO_UUID = '0'.repeat(32);

function field(name: string, type: PrimitiveType | StructSpec, array: boolean, v: string, o: FieldOptions = {}): FieldSpec {
  const nullable = o.nullable ? versions(o.nullable) : NO_VERSIONS;
  const tagged = o.tag === undefined ? NO_VERSIONS : versions(o.tagged ?? v);
  return {
    name, type, array, versions: versions(v), nullable, tag: o.tag ?? null, tagged,
    default: o.default !== undefined ? o.default : defaultFor(type, array, nullable.max >= nullable.min),
  };
}

type Prim = (name: string, v?: string, o?: FieldOptions) => FieldSpec;
const prim = (type: PrimitiveType): Prim => (name, v = '0+', o) => field(name, type, false, v, o);

export const f = {
  int8: prim('int8'),
  int16: prim('int16'),
  uint16: prim('uint16'),
  int32: prim('int32'),
  uint32: prim('uint32'),
  int64: prim('int64'),
  float64: prim('float64'),
  bool: prim('bool'),
  string: prim('string'),
  bytes: prim('bytes'),
  records: prim('records'),
  uuid: prim('uuid'),
  /** An array of structs (a field list) or of a primitive type. */
  array(name: string, v: string, of: readonly FieldSpec[] | PrimitiveType, o?: FieldOptions): FieldSpec {
    return field(name, typeof of === 'string' ? of : { fields: of }, true, v, o);
  },
  /** A single nested struct. */
  struct(name: string, v: string, fields: readonly FieldSpec[], o?: FieldOptions): FieldSpec {
    return field(name, { fields }, false, v, o);
  },
};

export function message(name: string, apiKey: number, valid: string, flexible: string, fields: readonly FieldSpec[]): MessageSpec {
  return { name, apiKey, valid: versions(valid), flexible: versions(flexible), fields };
}

/** One API: its request and response tables. */
export interface KafkaApiSpec {
  readonly apiKey: number;
  readonly name: string;
  readonly request: MessageSpec;
  readonly response: MessageSpec;
}
