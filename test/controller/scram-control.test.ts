import { expect } from 'chai';
import { MetadataDelta, imageFromRecords } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import { decodeMetadataRecords, encodeMetadataRecords } from '../../src/metadata/codec.js';
import { ManualClock } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';
import { BrokerHeartbeats } from '../../src/controller/decisions/broker-heartbeats.js';
import { alterUserScramCredentials, describeUserScramCredentials, type ScramUpsertion } from '../../src/controller/scram-control.js';
import { Errors } from '../../src/util/errors.js';

const clock = new ManualClock();

function run(image: MetadataImage, deletions: Array<{ name: string; mechanism: number }>, upsertions: ScramUpsertion[]) {
  const ctx = { image, nextOffset: image.offset + 1, clock, rng: new SeededRng(1), heartbeats: new BrokerHeartbeats(clock, 9000), logger: silentLogger };
  const { records, response } = alterUserScramCredentials(ctx, deletions, upsertions);
  if (records.length === 0) return { image, response, records };
  const delta = new MetadataDelta(image);
  delta.replayBatch(decodeMetadataRecords(encodeMetadataRecords(records)), image.offset + 1);
  return { image: delta.apply(), response, records };
}

const up = (name: string, mechanism: number, over: Partial<ScramUpsertion> = {}): ScramUpsertion => ({
  name, mechanism, iterations: 4096, salt: new Uint8Array([1, 2, 3]), storedKey: new Uint8Array(mechanism === 2 ? 64 : 32).fill(7), serverKey: new Uint8Array(mechanism === 2 ? 64 : 32).fill(9), ...over,
});

describe('controller/scram-control: SCRAM credentials as metadata records', () => {
  it('upserts and deletes credentials through records; the image and a snapshot hold salted keys only', () => {
    let { image, response } = run(MetadataImage.EMPTY, [], [up('ann', 1), up('ann', 2), up('bob', 2)]);
    expect(response).to.deep.equal([{ user: 'ann', errorCode: 0, errorMessage: null }, { user: 'bob', errorCode: 0, errorMessage: null }]);
    expect(describeUserScramCredentials(image, null).map((u) => [u.user, u.credentialInfos.map((c) => c.mechanism)])).to.deep.equal([['ann', [1, 2]], ['bob', [2]]]);
    const snapshot = imageFromRecords(decodeMetadataRecords(encodeMetadataRecords(image.toRecords())), image.offset);
    expect(Buffer.from(snapshot.scramCredential('ann', 2)!.storedKey)).to.deep.equal(Buffer.alloc(64, 7));
    ({ image, response } = run(image, [{ name: 'ann', mechanism: 1 }, { name: 'bob', mechanism: 2 }], []));
    expect(describeUserScramCredentials(image, null).map((u) => u.user)).to.deep.equal(['ann']);
    expect(describeUserScramCredentials(image, ['bob', 'ann', 'ann']).map((u) => [u.user, u.errorCode])).to.deep.equal([
      ['bob', Errors.RESOURCE_NOT_FOUND.code], ['ann', Errors.DUPLICATE_RESOURCE.code],
    ]);
  });

  it('refuses bad items with Kafka\'s errors, and applies nothing of a user with a bad item', () => {
    const { image, response, records } = run(MetadataImage.EMPTY, [{ name: 'gone', mechanism: 1 }], [
      up('', 1), up('few', 1, { iterations: 100 }), up('many', 1, { iterations: 20000 }), up('mech', 3), up('salt', 1, { salt: new Uint8Array(0) }),
      up('keys', 2, { storedKey: new Uint8Array(32) }), up('twice', 1), up('twice', 1), up('mixed', 1), up('mixed', 2, { iterations: 1 }),
    ]);
    const byUser = new Map(response.map((r) => [r.user, r.errorCode]));
    expect(Object.fromEntries(byUser)).to.deep.equal({
      gone: Errors.RESOURCE_NOT_FOUND.code, '': Errors.UNACCEPTABLE_CREDENTIAL.code, few: Errors.UNACCEPTABLE_CREDENTIAL.code, many: Errors.UNACCEPTABLE_CREDENTIAL.code,
      mech: Errors.UNSUPPORTED_SASL_MECHANISM.code, salt: Errors.UNACCEPTABLE_CREDENTIAL.code, keys: Errors.UNACCEPTABLE_CREDENTIAL.code,
      twice: Errors.DUPLICATE_RESOURCE.code, mixed: Errors.UNACCEPTABLE_CREDENTIAL.code,
    });
    expect(records).to.deep.equal([]);
    expect(image.scramCredentials.size).to.equal(0);
  });
});
