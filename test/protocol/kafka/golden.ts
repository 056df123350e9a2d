// Golden frames of the Kafka protocol: for each API and version, a request and
// a response body as bytes (hex fixtures under fixtures/<api>/v<N>.<kind>.hex,
// written from the spec), decoded by the API's table and re-encoded
// byte-identically. `checkGolden` returns the decoded struct so a test can
// assert field values too.

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseHex } from '../../record/fixtures/load.js';
import { Reader } from '../../../src/protocol/kafka/codec/reader.js';
import { Writer } from '../../../src/protocol/kafka/codec/writer.js';
import { decodeMessage, encodeMessage, type Struct } from '../../../src/protocol/kafka/message.js';
import { inVersions, type FieldSpec, type KafkaApiSpec } from '../../../src/protocol/kafka/schema.js';

const ROOT_SEARCH_DEPTH_MAX = 8;

function fixturesDir(): string {
  let dir = path.dirname(new URL(import.meta.url).pathname);
  for (let i = 0; i < ROOT_SEARCH_DEPTH_MAX; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'test/protocol/kafka/fixtures');
    dir = path.dirname(dir);
  }
  throw new Error('package.json not found above the golden-frame loader');
}

export type FrameKind = 'request' | 'response';

export function goldenPath(api: string, version: number, kind: FrameKind): string {
  return path.join(fixturesDir(), api, `v${version}.${kind}.hex`);
}

export function loadGolden(api: string, version: number, kind: FrameKind): Buffer {
  return parseHex(fs.readFileSync(goldenPath(api, version, kind), 'utf8'));
}

export function encodeBody(spec: KafkaApiSpec, version: number, kind: FrameKind, value: Struct): Buffer {
  const w = new Writer();
  encodeMessage(kind === 'request' ? spec.request : spec.response, version, value, w);
  return w.toBuffer();
}

export function decodeBody(spec: KafkaApiSpec, version: number, kind: FrameKind, bytes: Buffer): Struct {
  const r = new Reader(bytes);
  const v = decodeMessage(kind === 'request' ? spec.request : spec.response, version, r);
  expect(r.remaining, `${spec.name} v${version} ${kind}: bytes left after decoding`).to.equal(0);
  return v;
}

/** Decodes the fixture, re-encodes it and expects the same bytes; returns the decoded struct. */
export function checkGolden(spec: KafkaApiSpec, api: string, version: number, kind: FrameKind): Struct {
  const bytes = loadGolden(api, version, kind);
  const decoded = decodeBody(spec, version, kind, bytes);
  expect(encodeBody(spec, version, kind, decoded).toString('hex'), `${spec.name} v${version} ${kind} re-encoded`).to.equal(bytes.toString('hex'));
  return decoded;
}

/** Writes a fixture from a value (used once, when a fixture is made; the file is then reviewed against the spec). */
export function writeGolden(spec: KafkaApiSpec, api: string, version: number, kind: FrameKind, value: Struct, comment: string): void {
  const hex = encodeBody(spec, version, kind, value).toString('hex').replace(/(.{64})/g, '$1\n');
  fs.mkdirSync(path.dirname(goldenPath(api, version, kind)), { recursive: true });
  fs.writeFileSync(goldenPath(api, version, kind), `# ${comment}\n${hex}\n`);
}

/** Expects `decoded` to hold `sample`'s value in every field of `fields` present in `version`. */
export function expectSampleFields(fields: readonly FieldSpec[], version: number, flexible: boolean, decoded: Struct, sample: Struct, path: string): void {
  for (const f of fields) {
    const present = f.tag === null ? inVersions(f.versions, version) : flexible && inVersions(f.tagged, version);
    if (!present || sample[f.name] === undefined) continue;
    const want = sample[f.name];
    const got = decoded[f.name];
    const where = `${path}.${f.name}`;
    if (typeof f.type !== 'string' && want !== null) {
      const sub = f.type.fields;
      if (f.array) {
        expect((got as Struct[]).length, where).to.equal((want as Struct[]).length);
        (want as Struct[]).forEach((w, i) => expectSampleFields(sub, version, flexible, (got as Struct[])[i]!, w, `${where}[${i}]`));
      } else {
        expectSampleFields(sub, version, flexible, got as Struct, want as Struct, where);
      }
    } else {
      expect(got, where).to.deep.equal(want);
    }
  }
}
