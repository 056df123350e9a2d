// The partition assignors, pure: Kafka's reference layouts for range and
// round-robin, idle members beyond the partition count, balance, stickiness,
// the cooperative (KIP-429) revocation steps until the group settles, claim
// conflicts, and — over random groups (fast-check, fixed seed) — the
// invariants every assignment must keep. Also the consumer protocol codec.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  ASSIGNORS, cooperativeStickyAssignor, rangeAssignor, roundRobinAssignor, stickyTarget,
  type GroupAssignment, type MemberSubscription, type PartitionAssignor,
} from '../../src/groups/assignors.js';
import {
  decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription, type TopicPartitions,
} from '../../src/groups/consumer-protocol.js';
import { Errors, SluiceError } from '../../src/util/errors.js';
import { fcParams } from '../record/fixtures/property.js';

function member(memberId: string, topics: string[], owned: TopicPartitions[] = [], generationId = owned.length > 0 ? 1 : -1): MemberSubscription {
  return { memberId, groupInstanceId: null, topics, ownedPartitions: owned, generationId };
}

/** "t-0" style labels of one member's partitions. */
function labels(a: GroupAssignment, memberId: string): string[] {
  return (a.get(memberId) ?? []).flatMap((tp) => tp.partitions.map((p) => `${tp.topic}-${p}`));
}

function count(a: GroupAssignment, memberId: string): number {
  return labels(a, memberId).length;
}

/** The assignment as owned partitions (what each member holds after applying it). */
function asOwned(members: MemberSubscription[], a: GroupAssignment, generationId: number): MemberSubscription[] {
  return members.map((m) => ({ ...m, ownedPartitions: a.get(m.memberId) ?? [], generationId }));
}

const counts = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('assignors', () => {
  it('range: consecutive ranges per topic, the first members taking the remainder (Kafka\'s layout)', () => {
    const ms = [member('c1', ['t0', 't1']), member('c0', ['t0', 't1'])];
    const a = rangeAssignor.assign(ms, counts({ t0: 3, t1: 3 }));
    expect(labels(a, 'c0')).to.deep.equal(['t0-0', 't0-1', 't1-0', 't1-1']);
    expect(labels(a, 'c1')).to.deep.equal(['t0-2', 't1-2']);
  });

  it('round-robin: partitions dealt in turn, skipping members not subscribed to the topic', () => {
    const same = roundRobinAssignor.assign([member('c0', ['t0', 't1']), member('c1', ['t0', 't1'])], counts({ t0: 3, t1: 3 }));
    expect(labels(same, 'c0')).to.deep.equal(['t0-0', 't0-2', 't1-1']);
    expect(labels(same, 'c1')).to.deep.equal(['t0-1', 't1-0', 't1-2']);
    const mixed = roundRobinAssignor.assign([member('a', ['t0']), member('b', ['t0', 't1'])], counts({ t0: 2, t1: 2 }));
    expect(labels(mixed, 'a')).to.deep.equal(['t0-0']);
    expect(labels(mixed, 'b')).to.deep.equal(['t0-1', 't1-0', 't1-1']);
  });

  it('members beyond the partition count stay idle, with an empty entry', () => {
    for (const assignor of ASSIGNORS.values()) {
      const ms = ['a', 'b', 'c', 'd', 'e'].map((id) => member(id, ['t']));
      const a = assignor.assign(ms, counts({ t: 2 }));
      expect([...a.keys()].sort(), assignor.name).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
      expect(ms.map((m) => count(a, m.memberId)).sort(), assignor.name).to.deep.equal([0, 0, 0, 1, 1]);
    }
  });

  it('three members over six partitions get two each, with every assignor', () => {
    for (const assignor of ASSIGNORS.values()) {
      const a = assignor.assign(['x', 'y', 'z'].map((id) => member(id, ['t'])), counts({ t: 6 }));
      expect(['x', 'y', 'z'].map((id) => count(a, id)), assignor.name).to.deep.equal([2, 2, 2]);
    }
  });

  it('ignores topics that do not exist and partitions past a topic\'s count', () => {
    const ms = [member('a', ['t', 'gone'], [{ topic: 't', partitions: [0, 7] }, { topic: 'gone', partitions: [0] }])];
    for (const assignor of ASSIGNORS.values()) {
      expect(labels(assignor.assign(ms, counts({ t: 2 })), 'a'), assignor.name).to.deep.equal(['t-0', 't-1']);
    }
  });

  it('is a function of the group, not of the order members are listed in', () => {
    const ms = [member('m3', ['a', 'b']), member('m1', ['a']), member('m2', ['b'], [{ topic: 'b', partitions: [1] }])];
    for (const assignor of ASSIGNORS.values()) {
      const one = assignor.assign(ms, counts({ a: 4, b: 3 }));
      const two = assignor.assign([...ms].reverse(), counts({ a: 4, b: 3 }));
      expect([...two.entries()].sort(), assignor.name).to.deep.equal([...one.entries()].sort());
    }
  });

  it('orders static members by instance id, so a restart with a new member id keeps the layout', () => {
    const before = rangeAssignor.assign([
      { ...member('zzz', ['t']), groupInstanceId: 'i-1' }, { ...member('aaa', ['t']), groupInstanceId: 'i-2' },
    ], counts({ t: 4 }));
    expect(labels(before, 'zzz')).to.deep.equal(['t-0', 't-1']);
  });

  describe('cooperative-sticky', () => {
    it('a member that leaves: the survivors keep what they owned and share its partitions', () => {
      const owned = { a: [0, 1], b: [2, 3], c: [4, 5] };
      const ms = (['a', 'b'] as const).map((id) => member(id, ['t'], [{ topic: 't', partitions: owned[id] }], 3));
      const a = cooperativeStickyAssignor.assign(ms, counts({ t: 6 }));
      expect(labels(a, 'a')).to.include.members(['t-0', 't-1']);
      expect(labels(a, 'b')).to.include.members(['t-2', 't-3']);
      expect([count(a, 'a'), count(a, 'b')]).to.deep.equal([3, 3]);
    });

    it('a member that joins: owners revoke only what moves, and it is handed over in a follow-up round', () => {
      const ms = [
        member('a', ['t'], [{ topic: 't', partitions: [0, 1, 2] }], 1),
        member('b', ['t'], [{ topic: 't', partitions: [3, 4, 5] }], 1),
        member('c', ['t']),
      ];
      const first = cooperativeStickyAssignor.assign(ms, counts({ t: 6 }));
      // Round one: a and b keep two each; nothing goes to c yet (it is still owned).
      expect(count(first, 'a')).to.equal(2);
      expect(count(first, 'b')).to.equal(2);
      expect(count(first, 'c')).to.equal(0);
      expect(labels(first, 'a').every((l) => ['t-0', 't-1', 't-2'].includes(l))).to.equal(true);
      // The owners revoked one each and rejoin; round two gives c the two freed partitions.
      const second = cooperativeStickyAssignor.assign(asOwned(ms, first, 2), counts({ t: 6 }));
      expect(labels(second, 'a')).to.deep.equal(labels(first, 'a'));
      expect(labels(second, 'b')).to.deep.equal(labels(first, 'b'));
      expect(count(second, 'c')).to.equal(2);
    });

    it('two claims from the same generation conflict: neither keeps it; a newer generation wins', () => {
      const tie = cooperativeStickyAssignor.assign([
        member('a', ['t'], [{ topic: 't', partitions: [0] }], 4), member('b', ['t'], [{ topic: 't', partitions: [0, 1] }], 4),
      ], counts({ t: 2 }));
      expect(labels(tie, 'a')).to.not.include('t-0');
      expect(labels(tie, 'b')).to.not.include('t-0');
      const newer = cooperativeStickyAssignor.assign([
        member('a', ['t'], [{ topic: 't', partitions: [0] }], 5), member('b', ['t'], [{ topic: 't', partitions: [0, 1] }], 4),
      ], counts({ t: 2 }));
      expect(labels(newer, 'a')).to.deep.equal(['t-0']);
      expect(labels(newer, 'b')).to.deep.equal(['t-1']);
    });

    it('keeps the target balanced when subscriptions are the same', () => {
      const { target } = stickyTarget([
        member('a', ['t'], [{ topic: 't', partitions: [0, 1, 2, 3, 4, 5, 6] }]), member('b', ['t']), member('c', ['t']),
      ], counts({ t: 7 }));
      expect([...target.values()].map((s) => s.size).sort()).to.deep.equal([2, 2, 3]);
      expect(target.get('a')!.size).to.equal(3);
    });
  });

  describe('invariants over random groups', () => {
    const topicNames = ['a', 'b', 'c'];
    const groupArb = fc.record({
      partitionCounts: fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 })),
      members: fc.uniqueArray(fc.record({
        memberId: fc.string({ minLength: 1, maxLength: 4 }),
        topics: fc.subarray(topicNames, { minLength: 1 }),
        owned: fc.array(fc.record({ topic: fc.constantFrom(...topicNames), partition: fc.integer({ min: 0, max: 9 }) }), { maxLength: 6 }),
        generationId: fc.integer({ min: -1, max: 3 }),
      }), { minLength: 1, maxLength: 7, selector: (m) => m.memberId }),
    });

    type Group = typeof groupArb extends fc.Arbitrary<infer T> ? T : never;

    function build(g: Group): { ms: MemberSubscription[]; pc: Map<string, number> } {
      const pc = new Map(topicNames.map((t, i) => [t, g.partitionCounts[i]!]).filter(([, n]) => (n as number) > 0) as Array<[string, number]>);
      const ms = g.members.map((m) => {
        const byTopic = new Map<string, Set<number>>();
        for (const o of m.owned) byTopic.set(o.topic, (byTopic.get(o.topic) ?? new Set()).add(o.partition));
        return member(m.memberId, m.topics, [...byTopic].map(([topic, ps]) => ({ topic, partitions: [...ps] })), m.generationId);
      });
      return { ms, pc };
    }

    function checkCommon(assignor: PartitionAssignor, ms: MemberSubscription[], pc: Map<string, number>, a: GroupAssignment): Set<string> {
      expect([...a.keys()].sort()).to.deep.equal(ms.map((m) => m.memberId).sort());
      const seen = new Set<string>();
      for (const m of ms) {
        for (const tp of a.get(m.memberId)!) {
          expect(m.topics, assignor.name).to.include(tp.topic);
          for (const p of tp.partitions) {
            expect(p).to.be.lessThan(pc.get(tp.topic)!);
            const l = `${tp.topic}-${p}`;
            expect(seen.has(l), `${assignor.name}: ${l} assigned twice`).to.equal(false);
            seen.add(l);
          }
        }
      }
      return seen;
    }

    function everyPartition(ms: MemberSubscription[], pc: Map<string, number>): string[] {
      const topics = [...new Set(ms.flatMap((m) => m.topics))].filter((t) => pc.has(t));
      return topics.flatMap((t) => Array.from({ length: pc.get(t)! }, (_, p) => `${t}-${p}`));
    }

    /** Members whose claim on `label` counts: subscribed, partition exists, newest generation among such claims. */
    function validClaimers(ms: MemberSubscription[], pc: Map<string, number>, label: string): string[] {
      const [topic, p] = [label.slice(0, label.lastIndexOf('-')), Number(label.slice(label.lastIndexOf('-') + 1))];
      const claims = ms.filter((m) => m.topics.includes(topic) && p < (pc.get(topic) ?? 0)
        && m.ownedPartitions.some((tp) => tp.topic === topic && tp.partitions.includes(p)));
      const newest = Math.max(...claims.map((m) => m.generationId));
      return claims.filter((m) => m.generationId === newest).map((m) => m.memberId);
    }

    it('eager assignors assign every subscribed partition exactly once, to a subscriber', () => {
      fc.assert(fc.property(groupArb, (g) => {
        const { ms, pc } = build(g);
        for (const assignor of [rangeAssignor, roundRobinAssignor]) {
          const seen = checkCommon(assignor, ms, pc, assignor.assign(ms, pc));
          expect([...seen].sort()).to.deep.equal(everyPartition(ms, pc).sort());
        }
      }), fcParams(300));
    });

    it('cooperative-sticky never hands a partition straight from one member to another, and settles balanced', () => {
      fc.assert(fc.property(groupArb, (g) => {
        const { ms, pc } = build(g);
        let current = ms;
        let generation = 10;
        for (let round = 0; round < 3; round++) {
          const a = cooperativeStickyAssignor.assign(current, pc);
          checkCommon(cooperativeStickyAssignor, current, pc, a);
          // Nothing is given to a member while someone else still validly claims it.
          for (const m of current) {
            for (const l of labels(a, m.memberId)) {
              expect(validClaimers(current, pc, l).filter((id) => id !== m.memberId), `${l} still owned elsewhere`).to.deep.equal([]);
            }
          }
          current = asOwned(current, a, generation++);
        }
        // After the follow-up rounds everything is assigned, and with one
        // shared subscription the loads differ by at most one.
        const settled = cooperativeStickyAssignor.assign(current, pc);
        const seen = checkCommon(cooperativeStickyAssignor, current, pc, settled);
        expect([...seen].sort()).to.deep.equal(everyPartition(current, pc).sort());
        if (new Set(current.map((m) => [...m.topics].sort().join())).size === 1) {
          const loads = current.map((m) => count(settled, m.memberId));
          expect(Math.max(...loads) - Math.min(...loads)).to.be.at.most(1);
        }
        // Settled means stable: assigning again changes nothing.
        expect([...cooperativeStickyAssignor.assign(asOwned(current, settled, generation), pc).entries()].sort()).to.deep.equal([...settled.entries()].sort());
      }), fcParams(300));
    });
  });
});

describe('consumer protocol', () => {
  it('round-trips subscriptions and assignments', () => {
    const s = { topics: ['a', 'b'], ownedPartitions: [{ topic: 'a', partitions: [0, 2] }], generationId: 7, userData: new Uint8Array([1, 2]) };
    const back = decodeSubscription(encodeSubscription(s));
    expect(back.version).to.equal(3);
    expect({ ...back, userData: [...back.userData!] }).to.deep.equal({ version: 3, ...s, rackId: null, userData: [1, 2] });
    const a = { partitions: [{ topic: 'a', partitions: [1] }, { topic: 'b', partitions: [] }], userData: null };
    expect(decodeAssignment(encodeAssignment(a))).to.deep.equal({ version: 3, ...a });
  });

  it("writes Kafka's ConsumerProtocol bytes (what a Java or KafkaJS member reads)", () => {
    // Subscription v1: version 1, topics ['t'], userData null, ownedPartitions [{ 't', [2] }].
    const v1 = encodeSubscription({ version: 1, topics: ['t'], ownedPartitions: [{ topic: 't', partitions: [2] }], generationId: 5, userData: null });
    expect(Buffer.from(v1).toString('hex')).to.equal('0001' + '00000001' + '000174' + 'ffffffff' + '00000001' + '000174' + '00000001' + '00000002');
    // Assignment v0 (KafkaJS's): version 0, [{ 'ab', [0, 1] }], userData empty bytes.
    const kafkajs = Buffer.from('0000' + '00000001' + '00026162' + '00000002' + '00000000' + '00000001' + '00000000', 'hex');
    expect(decodeAssignment(kafkajs)).to.deep.equal({ version: 0, partitions: [{ topic: 'ab', partitions: [0, 1] }], userData: new Uint8Array(0) });
    // KafkaJS's subscription says version 1 but has the v0 layout: read as no owned partitions.
    const short = Buffer.from('0001' + '00000001' + '000178' + '00000000', 'hex');
    expect(decodeSubscription(short)).to.deep.include({ version: 1, topics: ['x'], ownedPartitions: [], generationId: -1 });
    // A newer version than known is read as the newest known (its extra bytes ignored).
    const v9 = Buffer.concat([Buffer.from([0, 9]), Buffer.from(encodeSubscription({ topics: ['y'], ownedPartitions: [], generationId: 1, userData: null })).subarray(2), Buffer.from([7, 7])]);
    expect(decodeSubscription(v9)).to.deep.include({ version: 9, topics: ['y'], generationId: 1 });
  });

  it('reads empty assignment bytes as an empty assignment', () => {
    expect(decodeAssignment(new Uint8Array(0)).partitions).to.deep.equal([]);
  });

  it('refuses malformed bytes with INCONSISTENT_GROUP_PROTOCOL, never another exception', () => {
    const bad: Uint8Array[] = [new Uint8Array([0xc1]), encodeAssignment({ partitions: [], userData: null }).subarray(0, 3),
      Buffer.from([0xff, 0xff, 0, 0, 0, 0]), Buffer.from([0, 0, 0x7f, 0xff, 0xff, 0xff]), Buffer.from([0, 0, 0, 0, 0, 1, 0, 5, 0x61])];
    for (const b of bad) {
      expect(() => decodeSubscription(b)).to.throw(SluiceError).with.property('code', Errors.INCONSISTENT_GROUP_PROTOCOL.code);
    }
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), (bytes) => {
      for (const decode of [decodeSubscription, decodeAssignment]) {
        try {
          decode(bytes);
        } catch (err) {
          expect(err).to.be.instanceOf(SluiceError);
        }
      }
    }), fcParams(500));
  });
});
