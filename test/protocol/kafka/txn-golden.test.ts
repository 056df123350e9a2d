// Golden frames of the transaction APIs (fixtures/<api>/v<N>.{request,response}.hex,
// one pair per version of each table): each frame decodes by its table,
// re-encodes byte-identically and decodes to the sample values it was
// written from (txn-samples.ts). The frames that pin the layout are also
// built here byte by byte from Kafka's message definitions, without the
// codec, so a table that drifted from the spec fails even where it would
// round-trip: AddPartitionsToTxn's client (v0-3) and broker (v4+) forms,
// EndTxn v5's producer id and epoch, TxnOffsetCommit v3's member fields,
// DescribeTransactions' and ListTransactions' flexible layouts.

import { expect } from 'chai';
import { checkGolden, expectSampleFields, loadGolden } from './golden.js';
import { TXN_SAMPLES } from './txn-samples.js';
import { inVersions } from '../../../src/protocol/kafka/schema.js';
import { KAFKA_HANDLERS } from '../../../src/server/kafka/handlers.js';

const int8 = (n: number): Buffer => Buffer.from([n & 0xff]);
const int16 = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b; };
const int32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
const int64 = (n: number): Buffer => { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(n)); return b; };
/** Classic string: int16 length. */
const str = (s: string): Buffer => Buffer.concat([int16(s.length), Buffer.from(s)]);
/** Compact string: unsigned varint length + 1 (every length here is < 127: one byte). */
const cstr = (s: string): Buffer => Buffer.concat([int8(s.length + 1), Buffer.from(s)]);
/** Compact array length: n + 1. */
const carr = (n: number): Buffer => int8(n + 1);
const TAGS = int8(0);
const hex = (...parts: Buffer[]): string => Buffer.concat(parts).toString('hex');
const golden = (api: string, v: number, kind: 'request' | 'response'): string => loadGolden(api, v, kind).toString('hex');

describe('Kafka protocol: transaction API golden frames', () => {
  for (const s of TXN_SAMPLES) {
    for (const v of s.versions) {
      it(`${s.spec.name} v${v}`, () => {
        for (const kind of ['request', 'response'] as const) {
          const message = kind === 'request' ? s.spec.request : s.spec.response;
          const decoded = checkGolden(s.spec, s.dir, v, kind);
          expectSampleFields(message.fields, v, inVersions(message.flexible, v), decoded, kind === 'request' ? s.request : s.response, `${s.spec.name} v${v} ${kind}`);
        }
      });
    }
  }

  it('serves the versions Kafka clients send with transaction version 1 (and has a fixture for each)', () => {
    const served = (key: number): [number, number] => [KAFKA_HANDLERS.get(key)!.minVersion, KAFKA_HANDLERS.get(key)!.maxVersion];
    expect(served(24), 'AddPartitionsToTxn: the client form').to.deep.equal([0, 3]);
    expect(served(25)).to.deep.equal([0, 4]);
    expect(served(26), 'EndTxn: not v5 (KIP-890 part 2)').to.deep.equal([0, 4]);
    expect(served(28)).to.deep.equal([0, 4]);
    expect(served(65)).to.deep.equal([0, 0]);
    expect(served(66)).to.deep.equal([0, 1]);
    for (const s of TXN_SAMPLES) {
      const [min, max] = served(s.spec.apiKey);
      for (let v = min; v <= max; v++) expect(s.versions, `${s.spec.name} v${v}`).to.include(v);
    }
  });

  it('AddPartitionsToTxn: v0 classic and v3 compact client forms, v4 batched broker form, by hand', () => {
    const topicsV0 = Buffer.concat([int32(2), str('orders'), int32(2), int32(0), int32(2), str('audit'), int32(1), int32(1)]);
    expect(golden('add-partitions-to-txn', 0, 'request')).to.equal(hex(str('tx-1'), int64(1000), int16(3), topicsV0));
    expect(golden('add-partitions-to-txn', 3, 'request')).to.equal(hex(
      cstr('tx-1'), int64(1000), int16(3),
      carr(2), cstr('orders'), carr(2), int32(0), int32(2), TAGS, cstr('audit'), carr(1), int32(1), TAGS,
      TAGS,
    ));
    expect(golden('add-partitions-to-txn', 4, 'request')).to.equal(hex(
      carr(2),
      cstr('tx-1'), int64(1000), int16(3), int8(1), carr(1), cstr('orders'), carr(2), int32(0), int32(2), TAGS, TAGS,
      cstr('tx-2'), int64(1001), int16(0), int8(0), carr(0), TAGS,
      TAGS,
    ));
    // v2 response: throttleTimeMs, then results by topic (no request-level error code before v4).
    expect(golden('add-partitions-to-txn', 2, 'response')).to.equal(hex(
      int32(0), int32(2),
      str('orders'), int32(2), int32(0), int16(0), int32(2), int16(0),
      str('audit'), int32(1), int32(1), int16(29),
    ));
    // v4 response: throttleTimeMs, errorCode, results by transaction.
    expect(golden('add-partitions-to-txn', 4, 'response')).to.equal(hex(
      int32(0), int16(0), carr(1), cstr('tx-1'), carr(1), cstr('orders'), carr(2), int32(0), int16(0), TAGS, int32(2), int16(48), TAGS, TAGS, TAGS, TAGS,
    ));
  });

  it('AddOffsetsToTxn v0 and EndTxn v0 / v3 / v5, by hand', () => {
    expect(golden('add-offsets-to-txn', 0, 'request')).to.equal(hex(str('tx-1'), int64(1000), int16(3), str('g1')));
    expect(golden('add-offsets-to-txn', 3, 'response')).to.equal(hex(int32(0), int16(51), TAGS));
    expect(golden('end-txn', 0, 'request')).to.equal(hex(str('tx-1'), int64(1000), int16(3), int8(1)));
    expect(golden('end-txn', 3, 'request')).to.equal(hex(cstr('tx-1'), int64(1000), int16(3), int8(1), TAGS));
    expect(golden('end-txn', 4, 'response'), 'no producer id before v5').to.equal(hex(int32(0), int16(0), TAGS));
    expect(golden('end-txn', 5, 'response')).to.equal(hex(int32(0), int16(0), int64(1000), int16(4), TAGS));
  });

  it('TxnOffsetCommit v0 (no member, no leader epoch) and v3 (member, null instance id, compact), by hand', () => {
    expect(golden('txn-offset-commit', 0, 'request')).to.equal(hex(
      str('tx-1'), str('g1'), int64(1000), int16(3),
      int32(1), str('orders'), int32(2), int32(0), int64(42), str('m'), int32(1), int64(7), int16(-1),
    ));
    expect(golden('txn-offset-commit', 3, 'request')).to.equal(hex(
      cstr('tx-1'), cstr('g1'), int64(1000), int16(3), int32(7), cstr('c-1'), int8(0),
      carr(1), cstr('orders'), carr(2), int32(0), int64(42), int32(2), cstr('m'), TAGS, int32(1), int64(7), int32(-1), int8(0), TAGS, TAGS,
      TAGS,
    ));
    expect(golden('txn-offset-commit', 0, 'response')).to.equal(hex(int32(0), int32(1), str('orders'), int32(2), int32(0), int16(0), int32(1), int16(22)));
  });

  it('DescribeTransactions v0 and ListTransactions v0 / v1, flexible from v0, by hand', () => {
    expect(golden('describe-transactions', 0, 'request')).to.equal(hex(carr(2), cstr('tx-1'), cstr('tx-2'), TAGS));
    expect(golden('describe-transactions', 0, 'response')).to.equal(hex(
      int32(0), carr(2),
      int16(0), cstr('tx-1'), cstr('Ongoing'), int32(60000), int64(1_700_000_000_000), int64(1000), int16(3), carr(1), cstr('orders'), carr(2), int32(0), int32(2), TAGS, TAGS,
      int16(105), cstr('tx-2'), cstr(''), int32(0), int64(-1), int64(-1), int16(-1), carr(0), TAGS,
      TAGS,
    ));
    expect(golden('list-transactions', 0, 'request'), 'no duration filter in v0').to.equal(hex(carr(1), cstr('Ongoing'), carr(1), int64(1000), TAGS));
    expect(golden('list-transactions', 1, 'request')).to.equal(hex(carr(1), cstr('Ongoing'), carr(1), int64(1000), int64(30000), TAGS));
    expect(golden('list-transactions', 1, 'response')).to.equal(hex(
      int32(0), int16(0), carr(1), cstr('Sleeping'), carr(1), cstr('tx-1'), int64(1000), cstr('Ongoing'), TAGS, TAGS,
    ));
  });
});
