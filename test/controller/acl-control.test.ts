import { expect } from 'chai';
import { MetadataDelta, imageFromRecords } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { decodeMetadataRecords, encodeMetadataRecords } from '../../src/metadata/codec.js';
import { ManualClock } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';
import { BrokerHeartbeats } from '../../src/controller/decisions/broker-heartbeats.js';
import type { CommandContext, CommandResult } from '../../src/controller/context.js';
import { createAcls, deleteAcls } from '../../src/controller/acl-control.js';
import { AclOperation as Op, AclPermission, MATCH_ALL_FILTER, PatternType, ResourceType, type AclBinding } from '../../src/security/acl.js';
import { Errors } from '../../src/util/errors.js';

const acl = (over: Partial<AclBinding> = {}): AclBinding => ({
  resourceType: ResourceType.TOPIC, resourceName: 'orders', patternType: PatternType.LITERAL,
  principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermission.ALLOW, ...over,
});

describe('controller/acl-control: CreateAcls and DeleteAcls as records', () => {
  let image: MetadataImage;
  let offset: number;
  const clock = new ManualClock();
  const ctx = (): CommandContext => ({ image, nextOffset: offset + 1, clock, rng: new SeededRng(offset + 1), heartbeats: new BrokerHeartbeats(clock, 9000), logger: silentLogger });
  const run = <R>(command: (c: CommandContext) => CommandResult<R>): { response: R; records: MetadataRecord[] } => {
    const { records, response } = command(ctx());
    if (records.length > 0) {
      const d = new MetadataDelta(image);
      d.replayBatch(records, ++offset);
      image = d.apply();
    }
    return { response, records };
  };
  beforeEach(() => {
    image = MetadataImage.EMPTY;
    offset = 0;
  });

  it('creates each valid binding once, refuses invalid ones with the reason, and ignores duplicates', () => {
    const { response, records } = run((c) => createAcls(c, [acl(), acl({ resourceType: ResourceType.CLUSTER, resourceName: 'x' }), acl(), acl({ operation: Op.WRITE })]));
    expect(response.map((r) => r.errorCode)).to.deep.equal([0, Errors.INVALID_REQUEST.code, 0, 0]);
    expect(response[1]!.errorMessage).to.match(/kafka-cluster/);
    expect(records).to.have.length(2);
    expect(image.acls.size).to.equal(2);
    expect(run((c) => createAcls(c, [acl()])).records).to.have.length(0);
  });

  it('deletes what each filter matches, each ACL once, and lists it', () => {
    run((c) => createAcls(c, [acl(), acl({ operation: Op.WRITE }), acl({ principal: 'User:bob' })]));
    const { response } = run((c) => deleteAcls(c, [{ ...MATCH_ALL_FILTER, principal: 'User:alice' }, MATCH_ALL_FILTER, { ...MATCH_ALL_FILTER, operation: 0 as never }]));
    expect(response.map((r) => r.matchingAcls.length)).to.deep.equal([2, 1, 0]);
    expect(response[2]!.errorCode).to.equal(Errors.INVALID_REQUEST.code);
    expect(image.acls.size).to.equal(0);
  });

  it('survives a snapshot: the image\'s records rebuild the same ACLs through the codec', () => {
    run((c) => createAcls(c, [acl(), acl({ patternType: PatternType.PREFIXED, resourceName: 'ord', permissionType: AclPermission.DENY })]));
    const records = decodeMetadataRecords(encodeMetadataRecords(image.toRecords()));
    const rebuilt = imageFromRecords(records, image.offset);
    expect(new Map([...rebuilt.acls].sort())).to.deep.equal(new Map([...image.acls].sort()));
    expect(rebuilt.aclIndex().matching(ResourceType.TOPIC, 'orders')).to.have.length(2);
  });

  it('refuses to replay a removal of an unknown ACL (a controller bug stops the node)', () => {
    const d = new MetadataDelta(image);
    expect(() => d.replay({ type: 'removeAccessControlEntry', v: 1, id: 'nope' }, 1)).to.throw(/unknown ACL/);
    expect(() => decodeMetadataRecords(encodeMetadataRecords([{ type: 'accessControlEntry', v: 1, id: 'a' } as unknown as MetadataRecord]))).to.throw(/missing field/);
  });
});
