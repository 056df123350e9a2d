// Random Kafka request frames, drawn from the API tables themselves: a random
// served API and version, a random value for every field of that version
// (boundary numbers, names from a small pool so some hit real topics and
// groups, valid record batches or junk), then — for about half the frames — a
// mutation of the encoded bytes (flipped bytes, a truncated body with a
// consistent size, trailing junk, a wrong size prefix). Seeded: one seed, one
// sequence of frames.

import { Writer } from '../../../src/protocol/kafka/codec/writer.js';
import { writeRequestHeader } from '../../../src/protocol/kafka/header.js';
import { encodeMessage, type Struct } from '../../../src/protocol/kafka/message.js';
import { inVersions, type FieldSpec, type KafkaApiSpec, type PrimitiveType, type StructSpec } from '../../../src/protocol/kafka/schema.js';
import { encodeRecordBatch } from '../../../src/record/record-batch.js';
import type { Rng } from '../../../src/util/rng.js';

export type FrameKind = 'valid' | 'mutated' | 'stall';

export interface FuzzFrame {
  readonly bytes: Buffer;
  readonly api: string;
  readonly version: number;
  readonly correlationId: number;
  readonly kind: FrameKind;
  /** A Produce with acks=0: no answer expected. */
  readonly silent: boolean;
}

/** Fields whose random values would make the broker wait long (a long poll, a rebalance): kept short. */
const TIME_FIELDS = new Set(['maxWaitMs', 'timeoutMs', 'rebalanceTimeoutMs', 'sessionTimeoutMs']);
const ARRAY_LENGTH_MAX = 3;
const INT_EDGES = [0, 1, -1, 2, 127, -128, 32767, -32768, 2147483647, -2147483648];

export class KafkaFrameGenerator {
  private correlationId = 1;

  constructor(
    private readonly rng: Rng,
    private readonly apis: ReadonlyArray<{ spec: KafkaApiSpec; minVersion: number; maxVersion: number }>,
    /** Names the generator draws strings from (topics, groups) besides random ones. */
    private readonly names: readonly string[],
  ) {}

  next(): FuzzFrame {
    const api = this.apis[this.rng.int(this.apis.length)]!;
    const version = api.minVersion + this.rng.int(api.maxVersion - api.minVersion + 1);
    const body = this.struct(api.spec.request, version, 0);
    const correlationId = this.correlationId++;
    const w = new Writer();
    w.int32(0);
    writeRequestHeader(w, { apiKey: api.spec.apiKey, apiVersion: version, correlationId, clientId: this.rng.chance(0.1) ? null : 'fuzz' }, inVersions(api.spec.request.flexible, version));
    encodeMessage(api.spec.request, version, body, w);
    const frame = w.toBuffer();
    frame.writeInt32BE(frame.length - 4, 0);
    const silent = api.spec.apiKey === 0 && body.acks === 0;
    const roll = this.rng.next();
    if (roll < 0.5) return { bytes: frame, api: api.spec.name, version, correlationId, kind: 'valid', silent };
    if (roll < 0.995) return { bytes: this.mutate(frame), api: api.spec.name, version, correlationId, kind: 'mutated', silent };
    // A size prefix promising more than is sent: the broker waits for the rest (until the client gives up).
    const stall = Buffer.from(frame);
    stall.writeInt32BE(frame.length - 4 + 1 + this.rng.int(1000), 0);
    return { bytes: stall, api: api.spec.name, version, correlationId, kind: 'stall', silent: true };
  }

  /** A mutated copy whose size prefix still matches what is sent (so the broker reads a whole frame). */
  private mutate(frame: Buffer): Buffer {
    const body = Buffer.from(frame.subarray(4));
    let out: Buffer;
    switch (this.rng.int(4)) {
      case 0: {
        for (let i = 0, n = 1 + this.rng.int(4); i < n; i++) body[8 + this.rng.int(Math.max(1, body.length - 8))] = this.rng.int(256);
        out = body;
        break;
      }
      case 1: out = body.subarray(0, Math.max(10, this.rng.int(body.length))); break;
      case 2: out = Buffer.concat([body, Buffer.from(Array.from({ length: 1 + this.rng.int(16) }, () => this.rng.int(256)))]); break;
      default: {
        // A length or count inside the body set to a boundary value.
        const at = 8 + this.rng.int(Math.max(1, body.length - 12));
        if (at + 4 <= body.length) body.writeInt32BE(INT_EDGES[this.rng.int(INT_EDGES.length)]!, at);
        out = body;
      }
    }
    const sized = Buffer.allocUnsafe(4 + out.length);
    sized.writeInt32BE(out.length, 0);
    out.copy(sized, 4);
    return sized;
  }

  private struct(struct: StructSpec, version: number, depth: number): Struct {
    const out: Struct = {};
    for (const field of struct.fields) {
      if (!inVersions(field.versions, version)) continue;
      if (field.tag !== null && this.rng.chance(0.7)) continue;
      out[field.name] = this.value(field, version, depth);
    }
    return out;
  }

  private value(field: FieldSpec, version: number, depth: number): unknown {
    if (inVersions(field.nullable, version) && this.rng.chance(0.1)) return null;
    if (field.array) {
      const n = depth > 3 ? 0 : this.rng.int(ARRAY_LENGTH_MAX + 1);
      return Array.from({ length: n }, () => (typeof field.type === 'string' ? this.primitive(field.type, field.name) : this.struct(field.type, version, depth + 1)));
    }
    if (typeof field.type !== 'string') return this.struct(field.type, version, depth + 1);
    return this.primitive(field.type, field.name);
  }

  private int(bits: number): number {
    if (this.rng.chance(0.3)) {
      const edge = INT_EDGES[this.rng.int(INT_EDGES.length)]!;
      const max = 2 ** (bits - 1);
      return Math.max(-max, Math.min(max - 1, edge));
    }
    return this.rng.int(bits >= 16 ? 200 : 100) - 2;
  }

  private primitive(type: PrimitiveType, name: string): unknown {
    if (TIME_FIELDS.has(name)) return this.rng.int(200);
    if (name === 'acks') return [0, 1, -1, 2, -2][this.rng.int(5)];
    switch (type) {
      case 'int8': return this.int(8);
      case 'int16': return this.int(16);
      case 'uint16': return this.rng.int(65536);
      case 'int32': return this.int(32);
      case 'uint32': return this.rng.int(2 ** 32);
      case 'int64': return this.rng.chance(0.3) ? [-1, -2, -3, 0, Number.MAX_SAFE_INTEGER][this.rng.int(5)] : this.rng.int(10_000);
      case 'float64': return this.rng.next();
      case 'bool': return this.rng.chance(0.5);
      case 'uuid': return this.rng.chance(0.5) ? '0'.repeat(32) : Array.from({ length: 32 }, () => '0123456789abcdef'[this.rng.int(16)]).join('');
      case 'string': {
        if (this.rng.chance(0.6)) return this.names[this.rng.int(this.names.length)]!;
        return Array.from({ length: this.rng.int(12) }, () => String.fromCharCode(32 + this.rng.int(95))).join('');
      }
      case 'bytes': return Buffer.from(Array.from({ length: this.rng.int(24) }, () => this.rng.int(256)));
      case 'records': {
        if (this.rng.chance(0.3)) return Buffer.from(Array.from({ length: this.rng.int(80) }, () => this.rng.int(256)));
        const records = Array.from({ length: 1 + this.rng.int(3) }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`fuzz-${this.rng.int(1e6)}`) }));
        return encodeRecordBatch({ records });
      }
    }
  }
}
