// Golden frames of the admin APIs (fixtures/<api>/v<N>.{request,response}.hex,
// one pair per served version): each frame decodes by its table, re-encodes
// byte-identically, and decodes to the sample values it was written from
// (admin-samples.ts) in every field that exists in that version. A few frames
// are also checked byte by byte against Kafka's definitions, so a table that
// drifted from the spec fails even where it would round-trip.

import { expect } from 'chai';
import { checkGolden, expectSampleFields, loadGolden } from './golden.js';
import { ADMIN_SAMPLES } from './admin-samples.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import { inVersions } from '../../../src/protocol/kafka/schema.js';

describe('Kafka protocol: admin API golden frames', () => {
  for (const s of ADMIN_SAMPLES) {
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

  it('matches Kafka\'s layout byte by byte in hand-checked frames', () => {
    // DeleteRecords v0 request: topics int32 [name int16-string, partitions int32 [index int32, offset int64]], timeoutMs int32.
    expect(loadGolden('delete-records', 0, 'request').toString('hex')).to.equal(
      '00000001' + '0006' + Buffer.from('orders').toString('hex') + '00000002' + '00000000' + '000000000000002a' + '00000001' + 'ffffffffffffffff' + '00007530');
    // DeleteRecords v2 response (flexible): compact arrays and strings (length + 1), a tag section after each struct.
    expect(loadGolden('delete-records', 2, 'response').toString('hex')).to.equal(
      '00000000' + '02' + '07' + Buffer.from('orders').toString('hex') + '03'
      + '00000000' + '000000000000002a' + '0000' + '00' + '00000001' + 'ffffffffffffffff' + '0006' + '00' + '00' + '00');
    // DescribeCluster v1 request: includeClusterAuthorizedOperations, endpointType, empty tags.
    expect(loadGolden('describe-cluster', 1, 'request').toString('hex')).to.equal('010100');
    // AlterClientQuotas v0 request: entries int32 [entity int32 [entityType, entityName nullable (-1: default)],
    // ops int32 [key, value float64, remove bool]], validateOnly bool.
    expect(loadGolden('alter-client-quotas', 0, 'request').toString('hex')).to.equal(
      '00000001' + '00000001' + '0004' + Buffer.from('user').toString('hex') + 'ffff' + '00000002'
      + '0012' + Buffer.from('consumer_byte_rate').toString('hex') + '4140000000000000' + '00'
      + '0012' + Buffer.from('producer_byte_rate').toString('hex') + '0000000000000000' + '01' + '00');
    // DescribeCluster v0 request has no endpointType.
    expect(loadGolden('describe-cluster', 0, 'request').toString('hex')).to.equal('0100');
  });

  it('puts CreateTopics v5+\'s topicConfigErrorCode in tag 0, and its topic id only in v7', () => {
    const v5 = loadGolden('create-topics', 5, 'response').toString('hex');
    // tag section of the first topic: 1 tagged field, tag 0, 2 bytes, INVALID_CONFIG (40 = 0x0028)
    expect(v5).to.contain('0100020028');
    const v7 = checkGolden(ADMIN_SAMPLES[0]!.spec, 'create-topics', 7, 'response');
    expect((v7.topics as Struct[])[0]!.topicId).to.equal('0123456789abcdef0123456789abcdef');
    const v6 = checkGolden(ADMIN_SAMPLES[0]!.spec, 'create-topics', 6, 'response');
    expect((v6.topics as Struct[])[0]!.topicId, 'no topic id before v7').to.equal('0'.repeat(32));
  });

  it('reads DeleteTopics by name up to v5 and by topic id in v6', () => {
    const spec = ADMIN_SAMPLES.find((s) => s.dir === 'delete-topics')!.spec;
    const v5 = checkGolden(spec, 'delete-topics', 5, 'request');
    expect(v5.topicNames).to.deep.equal(['orders', 'gone']);
    expect(v5.topics).to.deep.equal([]);
    const v6 = checkGolden(spec, 'delete-topics', 6, 'request');
    expect((v6.topics as Struct[])[1]).to.deep.equal({ name: null, topicId: '0123456789abcdef0123456789abcdef' });
  });
});
