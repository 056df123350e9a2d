// The one interpreter of the message tables (schema.ts): decodes and encodes
// any version of any message from its table. Non-flexible versions use
// Kafka's classic encodings (int16-length strings, int32-length bytes and
// arrays); flexible versions (KIP-482) use compact ones (unsigned-varint
// length + 1, 0 meaning null) and end every struct with tagged fields, of
// which unknown tags are skipped.
//
// Decoding fills every field of the table: those absent in the version (and
// tagged fields not sent) get their default, so handlers never test for
// undefined. Encoding takes plain objects in which any field may be left out
// (it is then written as its default), so handlers set only what they know.
//
// Decoding never throws anything but KafkaDecodeError on hostile bytes:
// lengths are checked against the bytes left before anything is allocated.

import { KafkaDecodeError, Reader } from './codec/reader.js';
import { Writer } from './codec/writer.js';
import { inVersions, type FieldSpec, type MessageSpec, type PrimitiveType, type StructSpec } from './schema.js';

export type Struct = Record<string, unknown>;

interface Plan {
  /** Regular fields present in this version, in wire order. */
  readonly regular: readonly FieldSpec[];
  /** Fields that do not exist in this version: decoded as their default. */
  readonly absent: readonly FieldSpec[];
  /** Tagged fields of this version, by tag, sorted by tag. */
  readonly tagged: ReadonlyMap<number, FieldSpec>;
}

const plans = new WeakMap<StructSpec, Map<number, Plan>>();

function planOf(struct: StructSpec, version: number, flexible: boolean): Plan {
  let byVersion = plans.get(struct);
  if (!byVersion) plans.set(struct, byVersion = new Map());
  const key = flexible ? version : -1 - version;
  let plan = byVersion.get(key);
  if (!plan) {
    const regular: FieldSpec[] = [];
    const absent: FieldSpec[] = [];
    const tagged = new Map<number, FieldSpec>();
    for (const field of struct.fields) {
      if (field.tag !== null && flexible && inVersions(field.tagged, version)) tagged.set(field.tag, field);
      else if (field.tag === null && inVersions(field.versions, version)) regular.push(field);
      else absent.push(field);
    }
    plan = { regular, absent, tagged: new Map([...tagged].sort((a, b) => a[0] - b[0])) };
    byVersion.set(key, plan);
  }
  return plan;
}

const copyDefault = (v: unknown): unknown => (Array.isArray(v) ? [] : v);

export function decodeMessage(spec: MessageSpec, version: number, r: Reader): Struct {
  return decodeStruct(spec, version, inVersions(spec.flexible, version), r, spec.name);
}

function decodeStruct(struct: StructSpec, version: number, flexible: boolean, r: Reader, path: string): Struct {
  const plan = planOf(struct, version, flexible);
  const out: Struct = {};
  for (const field of plan.regular) out[field.name] = decodeValue(field, version, flexible, r, `${path}.${field.name}`);
  for (const field of plan.absent) out[field.name] = copyDefault(field.default);
  if (!flexible) return out;
  for (const field of plan.tagged.values()) out[field.name] = copyDefault(field.default);
  const count = r.uvarint(`${path} tagged field count`);
  for (let i = 0; i < count; i++) {
    const tag = r.uvarint(`${path} tag`);
    const size = r.uvarint(`${path} tag ${tag} size`);
    const field = plan.tagged.get(tag);
    if (!field) {
      r.skip(size, `${path} unknown tag ${tag}`);
      continue;
    }
    const sub = new Reader(r.buf, r.pos, r.pos + size);
    if (sub.end > r.end) throw new KafkaDecodeError(`${path} tag ${tag}: ${size} bytes, frame has ${r.remaining} left`);
    out[field.name] = decodeValue(field, version, flexible, sub, `${path}.${field.name}`);
    r.skip(size, `${path} tag ${tag}`);
  }
  return out;
}

function decodeLength(flexible: boolean, r: Reader, wide: boolean, what: string): number {
  if (flexible) return r.uvarint(what) - 1;
  return wide ? r.int32(what) : r.int16(what);
}

function decodeValue(field: FieldSpec, version: number, flexible: boolean, r: Reader, path: string): unknown {
  const nullable = inVersions(field.nullable, version);
  if (field.array) {
    const n = decodeLength(flexible, r, true, `${path} length`);
    if (n < 0) {
      if (!nullable) throw new KafkaDecodeError(`${path}: null array in a version where it cannot be null`);
      return null;
    }
    if (n > r.remaining) throw new KafkaDecodeError(`${path}: ${n} elements, frame has ${r.remaining} bytes left`);
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      out[i] = typeof field.type === 'string'
        ? decodePrimitive(field.type, false, flexible, r, path)
        : decodeStruct(field.type, version, flexible, r, path);
    }
    return out;
  }
  if (typeof field.type !== 'string') {
    if (nullable && r.int8(`${path} presence`) < 0) return null;
    return decodeStruct(field.type, version, flexible, r, path);
  }
  return decodePrimitive(field.type, nullable, flexible, r, path);
}

function decodePrimitive(type: PrimitiveType, nullable: boolean, flexible: boolean, r: Reader, path: string): unknown {
  switch (type) {
    case 'int8': return r.int8(path);
    case 'int16': return r.int16(path);
    case 'uint16': return r.uint16(path);
    case 'int32': return r.int32(path);
    case 'uint32': return r.uint32(path);
    case 'int64': return r.int64(path);
    case 'float64': return r.float64(path);
    case 'bool': return r.bool(path);
    case 'uuid': return r.uuid(path);
    case 'string': {
      const n = decodeLength(flexible, r, false, `${path} length`);
      if (n < 0) {
        if (!nullable) throw new KafkaDecodeError(`${path}: null string in a version where it cannot be null`);
        return null;
      }
      return r.utf8Of(n, path);
    }
    case 'bytes':
    case 'records': {
      const n = decodeLength(flexible, r, true, `${path} length`);
      if (n < 0) {
        if (!nullable) throw new KafkaDecodeError(`${path}: null bytes in a version where they cannot be null`);
        return null;
      }
      return r.bytesOf(n, path);
    }
  }
}

export function encodeMessage(spec: MessageSpec, version: number, value: Struct, w: Writer): void {
  encodeStruct(spec, version, inVersions(spec.flexible, version), value, w, spec.name);
}

function encodeStruct(struct: StructSpec, version: number, flexible: boolean, value: Struct, w: Writer, path: string): void {
  const plan = planOf(struct, version, flexible);
  for (const field of plan.regular) {
    const v = value[field.name];
    encodeValue(field, version, flexible, v === undefined ? field.default : v, w, `${path}.${field.name}`);
  }
  if (!flexible) return;
  const present: Array<[FieldSpec, unknown]> = [];
  for (const field of plan.tagged.values()) {
    const v = value[field.name];
    if (v === undefined || v === field.default || (Array.isArray(v) && v.length === 0 && Array.isArray(field.default))) continue;
    present.push([field, v]);
  }
  w.uvarint(present.length);
  for (const [field, v] of present) {
    const sub = new Writer(64);
    encodeValue(field, version, flexible, v, sub, `${path}.${field.name}`);
    const bytes = sub.toBuffer();
    w.uvarint(field.tag!);
    w.uvarint(bytes.length);
    w.raw(bytes);
  }
}

function encodeLength(flexible: boolean, w: Writer, wide: boolean, n: number): void {
  if (flexible) w.uvarint(n + 1);
  else if (wide) w.int32(n);
  else w.int16(n);
}

function nullNotAllowed(path: string): Error {
  return new TypeError(`${path}: null in a version where it cannot be null`);
}

function encodeValue(field: FieldSpec, version: number, flexible: boolean, v: unknown, w: Writer, path: string): void {
  const nullable = inVersions(field.nullable, version);
  if (field.array) {
    if (v === null || v === undefined) {
      if (!nullable) {
        if (v === undefined) { encodeLength(flexible, w, true, 0); return; }
        throw nullNotAllowed(path);
      }
      encodeLength(flexible, w, true, -1);
      return;
    }
    const items = v as readonly unknown[];
    encodeLength(flexible, w, true, items.length);
    for (const item of items) {
      if (typeof field.type === 'string') encodePrimitive(field.type, false, flexible, item, w, path);
      else encodeStruct(field.type, version, flexible, item as Struct, w, path);
    }
    return;
  }
  if (typeof field.type !== 'string') {
    if (nullable) {
      if (v === null || v === undefined) { w.int8(-1); return; }
      w.int8(1);
    }
    encodeStruct(field.type, version, flexible, (v ?? {}) as Struct, w, path);
    return;
  }
  encodePrimitive(field.type, nullable, flexible, v, w, path);
}

function encodePrimitive(type: PrimitiveType, nullable: boolean, flexible: boolean, v: unknown, w: Writer, path: string): void {
  switch (type) {
    case 'int8': w.int8(v as number); return;
    case 'int16': w.int16(v as number); return;
    case 'uint16': w.uint16(v as number); return;
    case 'int32': w.int32(v as number); return;
    case 'uint32': w.uint32(v as number); return;
    case 'int64': w.int64(v as number); return;
    case 'float64': w.float64(v as number); return;
    case 'bool': w.bool(v as boolean); return;
    case 'uuid': w.uuid(v as string); return;
    case 'string': {
      if (v === null) {
        if (!nullable) throw nullNotAllowed(path);
        encodeLength(flexible, w, false, -1);
        return;
      }
      const s = v as string;
      encodeLength(flexible, w, false, Buffer.byteLength(s, 'utf8'));
      w.utf8(s);
      return;
    }
    case 'bytes':
    case 'records': {
      if (v === null) {
        if (!nullable) throw nullNotAllowed(path);
        encodeLength(flexible, w, true, -1);
        return;
      }
      const parts = Array.isArray(v) ? v as Uint8Array[] : [v as Uint8Array];
      let n = 0;
      for (const p of parts) n += p.length;
      encodeLength(flexible, w, true, n);
      for (const p of parts) w.bytesRef(p);
      return;
    }
  }
}
