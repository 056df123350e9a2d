// A seeded generator of hostile frames for the broker's client listener, and
// the local oracle that says what the broker must do with each one.
//
// Frames: random bytes; random msgpack values; well-formed envelopes with
// random API keys, versions and msgpack bodies; valid Produce, Fetch,
// Metadata, ListOffsets and OffsetForLeaderEpoch requests mutated in their
// structure (types swapped, huge or negative numbers, fields dropped or
// added, nested garbage) and/or in their bytes (flips, truncation, extension,
// insertion); Produce requests whose `records` are mutated real batches.
//
// Oracle: each frame is decoded here with the broker's own envelope decoder
// and body parsers (src/protocol), which are pure. An envelope that does not
// decode must make the broker close the connection (1007; a text frame 1003);
// one that decodes must get a response, except a Produce with acks=0 that
// parses, which gets none (as in Kafka). A produce that parses carries its
// per-partition entries so the test can account for what may be appended.
//
// Determinism: the frames depend only on the seed and on `FuzzTargets` (a
// snapshot taken before fuzzing), never on the broker's answers.
//
// Safety of the run: well-formed admin requests (CreateTopics, DeleteTopics,
// AlterConfigs, ElectLeaders, reassignments, ...) are legitimate writes of
// cluster state; a frame that decodes as one with any of those APIs' fields
// is replaced, so the fuzzer never deletes or reconfigures the topics it
// checks. Admin APIs still get random bodies without those fields.

import { Packr } from 'msgpackr';
import { decodeRequest, encodeRequest } from '../../src/protocol/envelope.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { Body } from '../../src/protocol/body.js';
import { parseProduceRequest } from '../../src/protocol/apis/produce.js';
import { parseFetchRequest } from '../../src/protocol/apis/fetch.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import {
  ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, CRC_OFFSET, CompressionType, LAST_OFFSET_DELTA_OFFSET, MAGIC_OFFSET,
  RECORD_BATCH_HEADER_BYTES, RECORD_COUNT_OFFSET, computeBatchCrc,
} from '../../src/record/batch-header.js';
import type { SeededRng } from '../../src/util/rng.js';
import { asBuffer } from '../../src/util/node-bytes.js';

export interface FuzzTopic {
  readonly name: string;
  readonly partitions: number;
  /** Per partition, at snapshot time. */
  readonly leaderEpochs: readonly number[];
  readonly logEnds: readonly number[];
}

export interface FuzzTargets {
  /** Every topic the frames may name (reads); only `produceTopic` gets well-formed produce frames. */
  readonly topics: readonly FuzzTopic[];
  readonly produceTopic: string;
  readonly brokerIds: readonly number[];
}

/** A (topic, partition, records) item of a produce frame that parses. */
export interface ProduceEntry {
  readonly topic: string;
  readonly partition: number;
  readonly records: Buffer;
}

/** What the broker must do with a frame. */
export type Expectation =
  | { readonly kind: 'close'; readonly code: number }
  | { readonly kind: 'response'; readonly correlationId: number; readonly produce: readonly (readonly ProduceEntry[])[] | null }
  /** A fetch that may wait up to `waitMs` for data before it is answered. */
  | { readonly kind: 'longPoll'; readonly correlationId: number; readonly waitMs: number }
  /** Produce with acks=0: no answer; its entries may or may not be appended. */
  | { readonly kind: 'none'; readonly correlationId: number; readonly produce: readonly (readonly ProduceEntry[])[] };

export interface FuzzFrame {
  readonly index: number;
  /** How it was made, for failure reports. */
  readonly recipe: string;
  readonly data: Buffer | string;
  readonly expect: Expectation;
}

const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true });

/** Admin APIs a broker forwards to the controller, and the body fields that make them act. */
const ADMIN_APIS: ReadonlySet<number> = new Set([
  ApiKey.CreateTopics, ApiKey.DeleteTopics, ApiKey.CreatePartitions, ApiKey.DescribeConfigs, ApiKey.AlterConfigs,
  ApiKey.ElectLeaders, ApiKey.AlterPartitionReassignments, ApiKey.ListPartitionReassignments,
]);
const ADMIN_FIELDS: readonly string[] = ['topics', 'names', 'resources', 'partitions', 'topic', 'count', 'resourceName', 'resourceType'];

const FIELD_NAMES: readonly string[] = [
  'acks', 'timeoutMs', 'topics', 'name', 'partitions', 'partition', 'records', 'replicaId', 'brokerEpoch', 'maxWaitMs',
  'minBytes', 'maxBytes', 'fetchOffset', 'currentLeaderEpoch', 'partitionMaxBytes', 'timestamp', 'leaderEpoch',
  'errorCode', '__proto__', 'constructor', 'toString', '', 'x',
];
const API_KEYS: readonly number[] = Object.values(ApiKey).filter((v): v is number => typeof v === 'number');
const DATA_APIS: readonly ApiKey[] = [ApiKey.Produce, ApiKey.Fetch, ApiKey.Metadata, ApiKey.ListOffsets, ApiKey.OffsetForLeaderEpoch];
const HUGE_NUMBERS: readonly unknown[] = [
  2 ** 31, -(2 ** 31) - 1, 2 ** 32, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER,
  2n ** 63n - 1n, -(2n ** 63n), 1e300, -1e300, Infinity, -Infinity, NaN, 0.5, -0.0, -1, -2, -3,
];
const TIMESTAMP_MS = 1_700_000_000_000;
/** Largest random byte run (frames stay far below the broker's 64 MiB frame limit). */
const RANDOM_BYTES_MAX = 64 * 1024;
/**
 * Nesting depths: whether the decoder overflows its stack at a depth between
 * these depends on the stack it runs on, so the oracle could not say what the
 * broker must do; below the first it never overflows, above the second always.
 */
const NESTING_DEPTH_SAFE_MAX = 1_000;
const NESTING_DEPTH_OVERFLOW_MIN = 100_000;
/** Frames stay below this (the broker's limit, 64 MiB, is tested in bad-input.test.ts). */
const FRAME_BYTES_MAX = 1024 * 1024;
/** Bytes a list made by repeating one value may take. */
const REPEATED_BYTES_MAX = 128 * 1024;

/** Generator options (none today: the far-future timestamps once held back as a known bug are fixed and sent). */
export type GeneratorOptions = Record<string, never>;

export class FrameGenerator {
  private nextCorrelationId = 1;
  private index = 0;

  constructor(private readonly rng: SeededRng, private readonly targets: FuzzTargets, private readonly opts: GeneratorOptions = {}) {}

  next(): FuzzFrame {
    for (;;) {
      const made = this.make();
      const data = made.data;
      if (data.length > FRAME_BYTES_MAX) continue;
      const expect = typeof data === 'string' ? { kind: 'close' as const, code: 1003 } : expectationOf(data);
      if (expect === 'unsafe') continue;
      return { index: this.index++, recipe: made.recipe, data, expect };
    }
  }

  private make(): { recipe: string; data: Buffer | string } {
    const r = this.rng.next();
    if (r < 0.01) return { recipe: 'text frame', data: 'not a binary frame' };
    if (r < 0.09) return { recipe: 'random bytes', data: this.randomBytes() };
    if (r < 0.13) return { recipe: 'random msgpack value', data: packr.pack(this.randomValue(3)) };
    if (r < 0.15) return this.deeplyNested();
    if (r < 0.33) return this.randomEnvelope();
    if (r < 0.38) return this.validRequest();
    if (r < 0.75) return this.mutatedRequest();
    return this.mutatedProduce();
  }

  // ---------------------------------------------------------------- primitives

  private pick<T>(xs: readonly T[]): T {
    return xs[this.rng.int(xs.length)]!;
  }

  private randomBytes(): Buffer {
    const n = this.rng.chance(0.05) ? this.rng.int(RANDOM_BYTES_MAX) : this.rng.int(200);
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.rng.int(256);
    return b;
  }

  private randomString(): string {
    const r = this.rng.next();
    if (r < 0.3) return this.pick(this.targets.topics).name;
    if (r < 0.6) return this.pick(FIELD_NAMES);
    if (r < 0.65) return 'x'.repeat(this.rng.int(5000));
    const chars = '\u0000abcXYZ-._é€😀\uffff';
    return Array.from({ length: this.rng.int(12) }, () => chars[this.rng.int(chars.length)]).join('');
  }

  private randomNumber(): unknown {
    const r = this.rng.next();
    if (r < 0.4) return this.rng.range(-3, 10);
    if (r < 0.7) return this.rng.int(1 << 20);
    return this.pick(HUGE_NUMBERS);
  }

  randomValue(depth: number): unknown {
    const r = this.rng.next();
    if (r < 0.25) return this.randomNumber();
    if (r < 0.45) return this.randomString();
    if (r < 0.55) return this.randomBytes().subarray(0, 64);
    if (r < 0.62) return this.pick([null, true, false, undefined]);
    if (depth <= 0) return this.randomNumber();
    if (r < 0.8) return Array.from({ length: this.rng.int(5) }, () => this.randomValue(depth - 1));
    return this.randomMap(depth - 1);
  }

  private randomMap(depth: number): Record<string, unknown> {
    const m: Record<string, unknown> = {};
    const n = this.rng.int(6);
    for (let i = 0; i < n; i++) Object.defineProperty(m, this.randomString(), { value: this.randomValue(depth), enumerable: true, writable: true, configurable: true });
    return m;
  }

  private correlationId(): number {
    return this.nextCorrelationId++;
  }

  // ---------------------------------------------------------------- frame kinds

  /** [apiKey, 0, id, null, { topics: <arrays or maps nested `depth` deep> }], written as bytes (packing it would recurse). */
  private deeplyNested(): { recipe: string; data: Buffer } {
    const depth = this.rng.chance(0.5) ? this.rng.range(10, NESTING_DEPTH_SAFE_MAX) : this.rng.range(NESTING_DEPTH_OVERFLOW_MIN, 2 * NESTING_DEPTH_OVERFLOW_MIN);
    const arrays = this.rng.chance(0.5);
    const level = arrays ? Buffer.from([0x91]) : Buffer.from([0x81, 0xa0]); // [x] or { '': x }
    const head = Buffer.concat([Buffer.from([0x95]), ...[this.pick(DATA_APIS), 0, this.correlationId(), null].map((v) => packr.pack(v))]);
    const data = Buffer.concat([head, Buffer.from([0x81]), packr.pack('topics'), Buffer.alloc(depth * level.length, level), Buffer.from([0xc0])]);
    return { recipe: `nested ${arrays ? 'arrays' : 'maps'}, depth ${depth}`, data };
  }

  private randomEnvelope(): { recipe: string; data: Buffer } {
    const apiKey = this.rng.chance(0.7) ? this.pick(API_KEYS) : this.rng.int(0x8000);
    const apiVersion = this.rng.chance(0.7) ? 0 : this.pick([1, 2, 7, 0x7fff, this.rng.int(0x8000)]);
    const body = this.randomMap(3);
    const clientId = this.rng.chance(0.8) ? 'fuzz' : null;
    return { recipe: `envelope api ${apiKey} v${apiVersion} with a random body`, data: asBuffer(encodeRequest({ apiKey, apiVersion, correlationId: this.correlationId(), clientId, body })) };
  }

  private validRequest(): { recipe: string; data: Buffer } {
    const { apiKey, body } = this.requestBody();
    return { recipe: `valid ${ApiKey[apiKey]}`, data: asBuffer(encodeRequest({ apiKey, apiVersion: 0, correlationId: this.correlationId(), clientId: 'fuzz', body })) };
  }

  private mutatedRequest(): { recipe: string; data: Buffer } {
    const { apiKey, body } = this.requestBody();
    const steps: string[] = [];
    let envelope: unknown[] = [apiKey, 0, this.correlationId(), 'fuzz', body];
    if (this.rng.chance(0.7)) {
      for (let i = this.rng.range(1, 3); i > 0; i--) steps.push(this.mutateStructure(envelope));
    }
    if (this.rng.chance(0.1)) {
      envelope = [...envelope];
      const at = this.rng.int(4);
      envelope[at] = this.pick([...HUGE_NUMBERS, 'x', null, [], {}]);
      steps.push(`envelope field ${at} → ${String(envelope[at])}`);
    }
    let data = packr.pack(envelope);
    if (steps.length === 0 || this.rng.chance(0.4)) {
      const r = this.mutateBytes(data);
      data = r.data;
      steps.push(r.step);
    }
    return { recipe: `mutated ${ApiKey[apiKey]}: ${steps.join('; ')}`, data };
  }

  private mutatedProduce(): { recipe: string; data: Buffer } {
    const t = this.produceTopic();
    const n = this.rng.chance(0.8) ? 1 : this.rng.range(2, 3);
    const steps: string[] = [];
    const partitions = Array.from({ length: n }, () => {
      const m = this.mutatedBatches();
      steps.push(m.step);
      return { partition: this.partitionOf(t), records: m.records };
    });
    const acks = this.pick([-1, -1, 1, 1, 1, 0]);
    const body = { acks, timeoutMs: this.pick([0, 1000, 5000]), topics: [{ name: t.name, partitions }] };
    return {
      recipe: `produce acks=${acks} with batches: ${steps.join(', ')}`,
      data: asBuffer(encodeRequest({ apiKey: ApiKey.Produce, apiVersion: 0, correlationId: this.correlationId(), clientId: 'fuzz', body })),
    };
  }

  // ---------------------------------------------------------------- request bodies

  private requestBody(): { apiKey: ApiKey; body: Body } {
    switch (this.pick(DATA_APIS)) {
      case ApiKey.Produce:
        return { apiKey: ApiKey.Produce, body: this.produceBody() };
      case ApiKey.Fetch:
        return { apiKey: ApiKey.Fetch, body: this.fetchBody() };
      case ApiKey.Metadata:
        return { apiKey: ApiKey.Metadata, body: { topics: this.rng.chance(0.3) ? null : this.targets.topics.map((t) => t.name).concat(this.rng.chance(0.3) ? ['nope'] : []) } };
      case ApiKey.ListOffsets:
        return { apiKey: ApiKey.ListOffsets, body: this.offsetsBody('timestamp', () => this.pick([-1, -2, 0, TIMESTAMP_MS, TIMESTAMP_MS * 2, -3])) };
      default:
        return { apiKey: ApiKey.OffsetForLeaderEpoch, body: this.offsetsBody('leaderEpoch', () => this.rng.range(-1, 5)) };
    }
  }

  private produceTopic(): FuzzTopic {
    const t = this.targets.topics.find((x) => x.name === this.targets.produceTopic);
    if (!t) throw new Error(`no produce topic ${this.targets.produceTopic} among the targets`);
    return this.rng.chance(0.95) ? t : { name: `missing-${this.rng.int(3)}`, partitions: 1, leaderEpochs: [0], logEnds: [0] };
  }

  private partitionOf(t: FuzzTopic): number {
    return this.rng.chance(0.9) ? this.rng.int(t.partitions) : this.pick([t.partitions, 99, -1]);
  }

  private epochOf(t: FuzzTopic, p: number): number {
    const e = t.leaderEpochs[p] ?? 0;
    return this.pick([-1, -1, e, e, e - 1, e + 1]);
  }

  private produceBody(): Body {
    const t = this.produceTopic();
    const records = this.realBatches();
    return { acks: this.pick([-1, 1, 1, 0]), timeoutMs: 5000, topics: [{ name: t.name, partitions: [{ partition: this.partitionOf(t), records }] }] };
  }

  private fetchBody(): Body {
    const topics = this.targets.topics.filter(() => this.rng.chance(0.6));
    const replica = this.rng.chance(0.85) ? -1 : this.pick([...this.targets.brokerIds, 0, 42]);
    return {
      replicaId: replica, brokerEpoch: this.rng.chance(0.8) ? -1 : this.rng.int(100),
      maxWaitMs: this.rng.chance(0.9) ? 0 : this.rng.int(300), minBytes: this.pick([0, 1, 1, 1 << 20]), maxBytes: this.pick([0, 100, 1 << 20]),
      topics: topics.map((t) => ({
        name: t.name,
        partitions: Array.from({ length: t.partitions }, (_, p) => ({
          partition: p, fetchOffset: this.rng.range(-1, (t.logEnds[p] ?? 0) + 2), currentLeaderEpoch: this.epochOf(t, p),
          partitionMaxBytes: this.pick([0, 1, 64, 1 << 20]),
        })),
      })),
    };
  }

  private offsetsBody(field: string, value: () => number): Body {
    const t = this.pick(this.targets.topics);
    return {
      replicaId: this.rng.chance(0.8) ? -1 : this.pick(this.targets.brokerIds),
      topics: [{ name: t.name, partitions: Array.from({ length: t.partitions }, (_, p) => ({ partition: p, currentLeaderEpoch: this.epochOf(t, p), [field]: value() })) }],
    };
  }

  // ---------------------------------------------------------------- batches

  private realBatches(): Buffer {
    const count = this.rng.chance(0.8) ? 1 : this.rng.range(2, 3);
    return Buffer.concat(Array.from({ length: count }, () => encodeRecordBatch({
      records: Array.from({ length: this.rng.range(1, 5) }, (_, i) => ({
        key: this.rng.chance(0.5) ? null : Buffer.from(`key-${this.rng.int(1000)}`),
        value: Buffer.from(`fuzz value ${i} ${'v'.repeat(this.rng.int(100))}`),
        headers: this.rng.chance(0.2) ? [{ key: 'h', value: Buffer.from('x') }] : [],
        timestamp: TIMESTAMP_MS + this.rng.int(1000),
      })),
      compression: this.rng.chance(0.2) ? CompressionType.Gzip : CompressionType.None,
    })));
  }

  /** Real batches, usually with one mutation; about one in seven is left valid. */
  private mutatedBatches(): { step: string; records: Buffer } {
    const b = this.realBatches();
    const r = this.rng.int(15);
    const fixCrc = this.rng.chance(0.5);
    const at = (lo: number, hi: number) => lo + this.rng.int(Math.max(1, hi - lo));
    const done = (step: string, buf: Buffer) => {
      if (fixCrc && buf.length >= RECORD_BATCH_HEADER_BYTES) buf.writeUInt32BE(computeBatchCrc(buf, 0), CRC_OFFSET);
      return { step: fixCrc ? `${step} (CRC fixed)` : step, records: buf };
    };
    switch (r) {
      case 0: case 1: return { step: 'intact', records: b };
      case 2: case 3: {
        const i = at(0, b.length);
        b[i] = b[i]! ^ (1 << this.rng.int(8));
        return done(`bit flip at ${i}`, b);
      }
      case 4: b.writeInt32BE(this.rng.range(-5, 50), RECORD_COUNT_OFFSET); return done('record count', b);
      case 5: b.writeInt32BE(this.rng.range(-5, 50), LAST_OFFSET_DELTA_OFFSET); return done('last offset delta', b);
      case 6: b.writeInt32BE(b.readInt32BE(BATCH_LENGTH_OFFSET) + this.pick([-1, 1, -40, 1 << 20, -(1 << 30)]), BATCH_LENGTH_OFFSET); return done('batch length', b);
      case 7: b[MAGIC_OFFSET] = this.pick([0, 1, 3, 255]); return done('magic', b);
      case 8: b.writeInt16BE(this.pick([5, 6, 7, 0x10, 0x20, 0x21, 0x7fff, -1]), ATTRIBUTES_OFFSET); return done('attributes', b);
      case 9: return { step: 'truncated', records: b.subarray(0, at(0, b.length)) };
      case 10: return { step: 'junk appended', records: Buffer.concat([b, this.randomBytes().subarray(0, this.rng.range(1, 80))]) };
      case 11: return { step: 'empty', records: Buffer.alloc(0) };
      case 12: {
        const bad = this.realBatches();
        bad[bad.length - 1] = bad[bad.length - 1]! ^ 0xff;
        return { step: 'valid then corrupt batch', records: Buffer.concat([b, bad]) };
      }
      case 13: {
        for (let i = RECORD_BATCH_HEADER_BYTES; i < b.length; i++) if (this.rng.chance(0.1)) b[i] = this.rng.int(256);
        return done('records scrambled', b);
      }
      default: return { step: 'random bytes', records: this.randomBytes() };
    }
  }

  // ---------------------------------------------------------------- mutations

  /** Replaces, drops or adds one node somewhere in `root` (in place); returns what it did. */
  private mutateStructure(root: unknown[]): string {
    const slots = collectSlots(root, '$');
    const slot = this.pick(slots);
    const r = this.rng.next();
    if (r < 0.3) {
      slot.set(this.randomValue(2));
      return `${slot.path} → random`;
    }
    if (r < 0.55) {
      slot.set(this.pick(HUGE_NUMBERS));
      return `${slot.path} → huge/negative number`;
    }
    if (r < 0.7 && slot.remove) {
      slot.remove();
      return `${slot.path} dropped`;
    }
    if (r < 0.8) {
      slot.set(deepGarbage(this.rng.range(1, 50), this.randomValue(1)));
      return `${slot.path} → nested garbage`;
    }
    if (r < 0.9) {
      const v = slot.get();
      // Bounded so that the frame stays small: repeating an already repeated list multiplies.
      const times = Math.min(this.rng.range(2, 2000), Math.max(2, Math.floor(REPEATED_BYTES_MAX / packedSize(v))));
      slot.set(Array.from({ length: times }, () => v));
      return `${slot.path} → repeated ${times} times in a list`;
    }
    slot.set(this.pick([{}, [], '', null, Buffer.alloc(3)]));
    return `${slot.path} → empty of another type`;
  }

  private mutateBytes(data: Buffer): { step: string; data: Buffer } {
    const b = Buffer.from(data);
    const at = this.rng.int(Math.max(1, b.length));
    switch (this.rng.int(6)) {
      case 0: {
        const flips = this.rng.range(1, 4);
        for (let i = 0; i < flips; i++) {
          const j = this.rng.int(b.length);
          b[j] = b[j]! ^ (1 << this.rng.int(8));
        }
        return { step: `${flips} bit flips`, data: b };
      }
      case 1: return { step: `truncated at ${at}`, data: b.subarray(0, at) };
      case 2: return { step: 'extended', data: Buffer.concat([b, this.randomBytes()]) };
      case 3: return { step: `bytes inserted at ${at}`, data: Buffer.concat([b.subarray(0, at), this.randomBytes().subarray(0, 16), b.subarray(at)]) };
      case 4: {
        const len = this.rng.range(1, 8);
        return { step: `${len} bytes deleted at ${at}`, data: Buffer.concat([b.subarray(0, at), b.subarray(at + len)]) };
      }
      default: {
        b[at] = this.pick([0x00, 0x7f, 0x80, 0xc0, 0xc1, 0xd9, 0xdc, 0xde, 0xff]);
        return { step: `type byte at ${at}`, data: b };
      }
    }
  }
}

interface Slot {
  readonly path: string;
  get(): unknown;
  set(v: unknown): void;
  remove?: () => void;
}

function collectSlots(node: unknown, path: string, out: Slot[] = []): Slot[] {
  if (Array.isArray(node)) {
    node.forEach((v, i) => {
      out.push({ path: `${path}[${i}]`, get: () => node[i], set: (x) => { node[i] = x; }, remove: () => node.splice(i, 1) });
      collectSlots(v, `${path}[${i}]`, out);
    });
  } else if (typeof node === 'object' && node !== null && !(node instanceof Uint8Array)) {
    const m = node as Record<string, unknown>;
    for (const k of Object.keys(m)) {
      out.push({ path: `${path}.${k}`, get: () => m[k], set: (x) => { m[k] = x; }, remove: () => { delete m[k]; } });
      collectSlots(m[k], `${path}.${k}`, out);
    }
  }
  return out;
}

function packedSize(v: unknown): number {
  try {
    return Math.max(1, packr.pack(v).length);
  } catch {
    return 1;
  }
}

function deepGarbage(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { x: v };
  return v;
}

/** Whether a produce the broker will act on carries a batch whose maxTimestamp is not a safe integer. */
/** What the broker must do with a binary frame, judged with its own decoder and parsers; 'unsafe' for a state-changing admin request. */
export function expectationOf(data: Buffer): Expectation | 'unsafe' {
  let d: ReturnType<typeof decodeRequest>;
  try {
    d = decodeRequest(data);
  } catch {
    // A decoder bug on hostile input (see src/net/server-connection.ts decodeSafely): still a malformed frame.
    return { kind: 'close', code: 1007 };
  }
  if (!d.ok) return { kind: 'close', code: 1007 };
  const req = d.value;
  const body = req.body as Body;
  if (ADMIN_APIS.has(req.apiKey) && ADMIN_FIELDS.some((f) => Object.hasOwn(body, f))) return 'unsafe';
  if (req.apiVersion === 0 && req.apiKey === ApiKey.Produce) {
    try {
      const p = parseProduceRequest(body);
      const entries = p.topics.map((t) => t.partitions.map((x) => ({ topic: t.name, partition: x.partition, records: Buffer.from(x.records) })));
      if (p.acks === 0) return { kind: 'none', correlationId: req.correlationId, produce: entries };
      return { kind: 'response', correlationId: req.correlationId, produce: entries };
    } catch {
      return { kind: 'response', correlationId: req.correlationId, produce: null };
    }
  }
  if (req.apiVersion === 0 && req.apiKey === ApiKey.Fetch) {
    try {
      const f = parseFetchRequest(body);
      if (f.maxWaitMs > 0) return { kind: 'longPoll', correlationId: req.correlationId, waitMs: f.maxWaitMs };
    } catch { /* answered at once with INVALID_REQUEST */ }
  }
  return { kind: 'response', correlationId: req.correlationId, produce: null };
}
