// Golden frames of the group APIs, FindCoordinator and InitProducerId: every
// served version's request and response decode and re-encode byte for byte,
// and the fields that change between versions read as the spec says.

import { expect } from 'chai';
import { checkGolden, loadGolden } from './golden.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import type { KafkaApiSpec } from '../../../src/protocol/kafka/schema.js';
import { KAFKA_HANDLERS } from '../../../src/server/kafka/handlers.js';
import { findCoordinator } from '../../../src/protocol/kafka/apis/find-coordinator/schema.js';
import { joinGroup } from '../../../src/protocol/kafka/apis/join-group/schema.js';
import { syncGroup } from '../../../src/protocol/kafka/apis/sync-group/schema.js';
import { heartbeat } from '../../../src/protocol/kafka/apis/heartbeat/schema.js';
import { leaveGroup } from '../../../src/protocol/kafka/apis/leave-group/schema.js';
import { offsetCommit } from '../../../src/protocol/kafka/apis/offset-commit/schema.js';
import { offsetFetch } from '../../../src/protocol/kafka/apis/offset-fetch/schema.js';
import { listGroups } from '../../../src/protocol/kafka/apis/list-groups/schema.js';
import { describeGroups } from '../../../src/protocol/kafka/apis/describe-groups/schema.js';
import { deleteGroups } from '../../../src/protocol/kafka/apis/delete-groups/schema.js';
import { offsetDelete } from '../../../src/protocol/kafka/apis/offset-delete/schema.js';
import { initProducerId } from '../../../src/protocol/kafka/apis/init-producer-id/schema.js';

type Check = (v: number, req: Struct, res: Struct) => void;

const cases: Array<[string, KafkaApiSpec, Check]> = [
  ['find-coordinator', findCoordinator, (v, req, res) => {
    if (v >= 4) {
      expect(req.coordinatorKeys).to.deep.equal(['g1', 'g2']);
      expect((res.coordinators as Struct[]).map((c) => [c.key, c.port, c.errorCode])).to.deep.equal([['g1', 19092, 0], ['g2', -1, 15]]);
    } else {
      expect([req.key, res.nodeId, res.host, res.port]).to.deep.equal(['g1', 2, '127.0.0.1', 19092]);
    }
  }],
  ['join-group', joinGroup, (v, req, res) => {
    expect(req.rebalanceTimeoutMs).to.equal(v >= 1 ? 30000 : -1);
    expect(req.groupInstanceId).to.equal(v >= 5 ? 'i-1' : null);
    expect(req.reason).to.equal(v >= 8 ? 'joining' : null);
    expect(res.protocolType).to.equal(v >= 7 ? 'consumer' : null);
    expect([res.generationId, res.protocolName, res.leader]).to.deep.equal([3, 'range', 'c-1']);
  }],
  ['sync-group', syncGroup, (v, req, res) => {
    expect(req.groupInstanceId).to.equal(v >= 3 ? 'i-1' : null);
    expect(res.protocolName).to.equal(v >= 5 ? 'range' : null);
    expect((res.assignment as Buffer).length).to.equal(21);
  }],
  ['heartbeat', heartbeat, (v, req, res) => {
    expect(req.groupInstanceId).to.equal(v >= 3 ? 'i-1' : null);
    expect(res.errorCode).to.equal(27);
  }],
  ['leave-group', leaveGroup, (v, req, res) => {
    if (v >= 3) {
      expect((req.members as Struct[]).map((m) => m.groupInstanceId)).to.deep.equal([null, 'i-2']);
      expect((res.members as Struct[]).map((m) => m.errorCode)).to.deep.equal([0, 25]);
    } else {
      expect(req.memberId).to.equal('c-1');
      expect(res.members).to.deep.equal([]);
    }
  }],
  ['offset-commit', offsetCommit, (v, req, res) => {
    const p = ((req.topics as Struct[])[0]!.partitions as Struct[])[0]!;
    expect([p.committedOffset, p.committedMetadata]).to.deep.equal([42, 'm']);
    expect(req.generationIdOrMemberEpoch).to.equal(v >= 1 ? 3 : -1);
    expect(p.committedLeaderEpoch).to.equal(v >= 6 ? 1 : -1);
    expect(((res.topics as Struct[])[0]!.partitions as Struct[]).map((x) => x.errorCode)).to.deep.equal([0, 22]);
  }],
  ['offset-fetch', offsetFetch, (v, req, res) => {
    if (v >= 8) {
      expect((req.groups as Struct[]).map((g) => g.groupId)).to.deep.equal(['g1', 'g2']);
      expect((req.groups as Struct[])[1]!.topics).to.equal(null);
      expect((res.groups as Struct[]).map((g) => g.errorCode)).to.deep.equal([0, 16]);
    } else {
      expect(req.groupId).to.equal('g1');
      const p = ((res.topics as Struct[])[0]!.partitions as Struct[])[0]!;
      expect([p.committedOffset, p.committedLeaderEpoch]).to.deep.equal([42, v >= 5 ? 1 : -1]);
    }
    expect(req.requireStable).to.equal(v >= 7);
  }],
  ['list-groups', listGroups, (v, req, res) => {
    expect(req.statesFilter).to.deep.equal(v >= 4 ? ['Stable', 'Empty'] : []);
    expect(req.typesFilter).to.deep.equal(v >= 5 ? ['classic'] : []);
    expect((res.groups as Struct[])[0]).to.deep.include({ groupId: 'g1', groupState: v >= 4 ? 'Stable' : '', groupType: v >= 5 ? 'classic' : '' });
  }],
  ['describe-groups', describeGroups, (v, req, res) => {
    expect(req.groups).to.deep.equal(['g1', 'g2']);
    const g = (res.groups as Struct[])[0]!;
    expect([g.groupState, g.protocolData]).to.deep.equal(['Stable', 'range']);
    expect((g.members as Struct[])[0]!.groupInstanceId).to.equal(v >= 4 ? 'i-1' : null);
  }],
  ['delete-groups', deleteGroups, (_v, req, res) => {
    expect(req.groupsNames).to.deep.equal(['g1', 'g2']);
    expect((res.results as Struct[]).map((r) => r.errorCode)).to.deep.equal([0, 68]);
  }],
  ['offset-delete', offsetDelete, (_v, req, res) => {
    expect(req.groupId).to.equal('g1');
    expect(((res.topics as Struct[])[0]!.partitions as Struct[]).map((p) => p.errorCode)).to.deep.equal([0, 86]);
  }],
  ['init-producer-id', initProducerId, (v, req, res) => {
    expect(req.transactionalId).to.equal(null);
    expect([req.producerId, req.producerEpoch]).to.deep.equal(v >= 3 ? [1000, 4] : [-1, -1]);
    expect([res.producerId, res.producerEpoch]).to.deep.equal([1000, v >= 3 ? 5 : 0]);
  }],
];

describe('Kafka group APIs: golden frames', () => {
  for (const [dir, spec, check] of cases) {
    const handler = KAFKA_HANDLERS.get(spec.apiKey);
    it(`${spec.name}: every served version round-trips byte for byte`, () => {
      expect(handler, `${spec.name} has a handler`).to.not.equal(undefined);
      for (let v = handler!.minVersion; v <= handler!.maxVersion; v++) {
        const req = checkGolden(spec, dir, v, 'request');
        const res = checkGolden(spec, dir, v, 'response');
        check(v, req, res);
      }
    });
  }

  it('holds the bytes the spec lays out (frames checked by hand)', () => {
    const hex = (api: string, v: number, kind: 'request' | 'response'): string => loadGolden(api, v, kind).toString('hex');
    // Heartbeat v0: groupId "g1" (int16 length), generationId 3, memberId "c-1".
    expect(hex('heartbeat', 0, 'request')).to.equal('0002' + '6731' + '00000003' + '0003' + '632d31');
    // Heartbeat v4 (flexible): compact strings (length + 1), groupInstanceId "i-1", no tagged fields.
    expect(hex('heartbeat', 4, 'request')).to.equal('03' + '6731' + '00000003' + '04' + '632d31' + '04' + '692d31' + '00');
    // InitProducerId v0: transactionalId null (int16 -1), transactionTimeoutMs 60000.
    expect(hex('init-producer-id', 0, 'request')).to.equal('ffff' + '0000ea60');
    // OffsetDelete v0 response: errorCode, throttleTimeMs, [t: [0: 0], [1: GROUP_SUBSCRIBED_TO_TOPIC]].
    expect(hex('offset-delete', 0, 'response')).to.equal('0000' + '00000000' + '00000001' + '000174' + '00000002' + '00000000' + '0000' + '00000001' + '0056');
  });
});
