// The pure group state machine (src/groups/membership/group.ts), driven with a
// ManualClock: joins and the barrier, rebalance timeout, session expiry,
// static membership, stale generations, leave, protocol selection, the
// leader's assignment write, and a randomized run checking that every
// request is answered exactly once.

import { expect } from 'chai';
import fc from 'fast-check';
import { Errors } from '../../src/util/errors.js';
import { setMutant } from '../../src/util/mutants.js';
import { GroupDriver, REBALANCE_MS, SESSION_MS, bytes, protocols } from './membership-harness.js';
import { selectProtocol } from '../../src/groups/membership/protocols.js';

const code = (e: { code: number }) => e.code;

describe('group membership (pure)', () => {
  describe('joining', () => {
    it('asks a new dynamic member to rejoin with an id, then forms generation 1 with it as leader', () => {
      const d = new GroupDriver();
      const first = d.joinAnswer(d.join(''));
      expect(first.errorCode).to.equal(code(Errors.MEMBER_ID_REQUIRED));
      expect(first.memberId).to.match(/^client-[0-9a-f]{32}$/);
      expect(d.group.state).to.equal('Empty');
      const j = d.joinAnswer(d.join(first.memberId));
      expect(j).to.include({ errorCode: 0, generationId: 1, protocolName: 'range', protocolType: 'consumer', leader: first.memberId, memberId: first.memberId });
      expect(j.members.map((m) => m.memberId)).to.deep.equal([first.memberId]);
      expect(Buffer.from(j.members[0]!.metadata).toString()).to.equal('meta:range');
      expect(d.group.state).to.equal('CompletingRebalance');
    });

    it('parks joins until every known member rejoined; the leader alone gets the members', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      expect(d.group.state).to.equal('PreparingRebalance');
      expect(d.joins.has(b.token), 'b waits for a').to.equal(false);
      expect(d.heartbeat(a, 1)).to.equal(code(Errors.REBALANCE_IN_PROGRESS));
      const ta = d.join(a);
      const ja = d.joinAnswer(ta);
      const jb = d.joinAnswer(b.token);
      expect(ja).to.include({ generationId: 2, leader: a });
      expect(jb).to.include({ generationId: 2, leader: a, memberId: b.memberId });
      expect(ja.members.map((m) => m.memberId)).to.have.members([a, b.memberId]);
      expect(jb.members).to.deep.equal([]);
    });

    it('answers followers only once the leader\'s assignment is written', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      const tb = d.sync(b.memberId, 2);
      expect(d.syncs.has(tb)).to.equal(false);
      const ta = d.sync(a, 2, { [a]: 'for-a', [b.memberId]: 'for-b' });
      expect(d.syncs.has(ta) || d.syncs.has(tb), 'nothing answered before the write').to.equal(false);
      const write = d.persists[d.persists.length - 1]!;
      expect(write.snapshot.generationId).to.equal(2);
      expect(write.snapshot.members.map((m) => Buffer.from(m.assignment).toString()).sort()).to.deep.equal(['for-a', 'for-b']);
      d.persistLast();
      expect(d.group.state).to.equal('Stable');
      expect(Buffer.from(d.syncAnswer(ta).assignment).toString()).to.equal('for-a');
      expect(Buffer.from(d.syncAnswer(tb).assignment).toString()).to.equal('for-b');
      // A later sync in Stable gets the stored assignment at once.
      expect(Buffer.from(d.syncAnswer(d.sync(b.memberId, 2)).assignment).toString()).to.equal('for-b');
    });

    it('starts a new rebalance when the assignment cannot be written', () => {
      const d = new GroupDriver();
      const { memberId, token } = d.joinNew();
      const ts = d.sync(memberId, d.joinAnswer(token).generationId, { [memberId]: 'x' });
      d.persistLast({ error: Errors.NOT_COORDINATOR, message: 'leadership moved' });
      expect(d.syncAnswer(ts).errorCode).to.equal(code(Errors.NOT_COORDINATOR));
      expect(d.group.state).to.equal('PreparingRebalance');
    });

    it('answers a rejoin with unchanged metadata in Stable at once, without a rebalance', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      d.sync(a, 2, { [a]: 'x', [b.memberId]: 'y' });
      d.persistLast();
      const again = d.joinAnswer(d.join(b.memberId));
      expect(again).to.include({ errorCode: 0, generationId: 2 });
      expect(d.group.state).to.equal('Stable');
      // The leader rejoining, or new metadata, does start one.
      d.join(b.memberId, { protocols: [{ name: 'range', metadata: bytes('new subscription') }] });
      expect(d.group.state).to.equal('PreparingRebalance');
    });

    it('refuses a session timeout outside the limits and a member that shares no protocol', () => {
      const d = new GroupDriver();
      expect(d.joinAnswer(d.join('', { sessionTimeoutMs: 10 })).errorCode).to.equal(code(Errors.INVALID_SESSION_TIMEOUT));
      expect(d.joinAnswer(d.join('', { protocols: [] })).errorCode).to.equal(code(Errors.INCONSISTENT_GROUP_PROTOCOL));
      d.stableWithOne({ protocols: protocols('range', 'roundrobin') });
      expect(d.joinAnswer(d.join('', { protocols: protocols('sticky') })).errorCode).to.equal(code(Errors.INCONSISTENT_GROUP_PROTOCOL));
      expect(d.joinAnswer(d.join('', { protocolType: 'connect' })).errorCode).to.equal(code(Errors.INCONSISTENT_GROUP_PROTOCOL));
      expect(d.joinAnswer(d.join('nobody')).errorCode).to.equal(code(Errors.UNKNOWN_MEMBER_ID));
    });

    it('chooses the protocol most members prefer among those all support', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne({ protocols: protocols('range', 'roundrobin', 'sticky') });
      const b = d.joinNew({ protocols: protocols('roundrobin', 'range') });
      const c = d.joinNew({ protocols: protocols('sticky', 'roundrobin') });
      const j = d.joinAnswer(d.join(a, { protocols: protocols('range', 'roundrobin', 'sticky') }));
      // Only roundrobin is common to all three; 'range' (a's favourite) is not supported by c.
      expect(j.protocolName).to.equal('roundrobin');
      expect(d.joinAnswer(b.token).protocolName).to.equal('roundrobin');
      expect(d.joinAnswer(c.token).protocolName).to.equal('roundrobin');
      expect(selectProtocol([{ protocols: protocols('a', 'b') }, { protocols: protocols('b', 'a') }, { protocols: protocols('b', 'a') }])).to.equal('b');
      expect(selectProtocol([{ protocols: protocols('a', 'b') }, { protocols: protocols('b', 'a') }])).to.equal('a');
    });
  });

  describe('time', () => {
    it('closes the barrier at the rebalance timeout and removes members that did not rejoin', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      d.sync(a, 2, { [a]: 'x', [b.memberId]: 'y' });
      d.persistLast();
      const c = d.joinNew();
      const ta = d.join(a);
      d.advance(REBALANCE_MS - 1);
      expect(d.joins.has(ta), 'still waiting for b').to.equal(false);
      d.advance(1);
      const ja = d.joinAnswer(ta);
      expect(ja.generationId).to.equal(3);
      expect(ja.members.map((m) => m.memberId)).to.have.members([a, c.memberId]);
      expect(d.heartbeat(b.memberId, 3)).to.equal(code(Errors.UNKNOWN_MEMBER_ID));
    });

    it('removes a member whose heartbeats stop after its session timeout; the others rejoin a new generation', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      d.sync(a, 2, { [a]: 'x', [b.memberId]: 'y' });
      d.persistLast();
      // b got its join answer at time 0 and never synced or heartbeat since: its session ends at SESSION_MS.
      for (let t = 2_000; t < SESSION_MS; t += 2_000) {
        d.advance(2_000);
        expect(d.heartbeat(a, 2)).to.equal(0);
      }
      expect(d.group.state).to.equal('Stable');
      d.advance(2_000);
      expect(d.group.state).to.equal('PreparingRebalance');
      expect(d.group.memberIds).to.deep.equal([a]);
      expect(d.heartbeat(a, 2)).to.equal(code(Errors.REBALANCE_IN_PROGRESS));
      const j = d.joinAnswer(d.join(a));
      expect(j).to.include({ generationId: 3, leader: a });
      expect(j.members.map((m) => m.memberId)).to.deep.equal([a]);
    });

    it('keeps a member with a parked request alive, and restarts its session when answered', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.advance(SESSION_MS - 1);
      expect(d.group.memberIds).to.include(b.memberId);
      d.join(a);
      const tb = d.sync(b.memberId, 2);
      d.advance(SESSION_MS + 1);
      expect(d.syncs.has(tb)).to.equal(false);
      expect(d.group.memberIds).to.include(b.memberId);
    });

    it('forgets an id handed out with MEMBER_ID_REQUIRED that nobody claims, releasing the barrier', () => {
      const d = new GroupDriver();
      const slowRebalanceMs = 60_000;
      const a = d.stableWithOne({ rebalanceTimeoutMs: slowRebalanceMs });
      const pending = d.joinAnswer(d.join('')).memberId;
      const b = d.joinNew({ rebalanceTimeoutMs: slowRebalanceMs });
      const ta = d.join(a, { rebalanceTimeoutMs: slowRebalanceMs });
      expect(d.joins.has(ta), 'waits for the pending member').to.equal(false);
      d.advance(SESSION_MS);
      expect(d.joinAnswer(ta).members.map((m) => m.memberId)).to.have.members([a, b.memberId]);
      expect(d.joinAnswer(d.join(pending)).errorCode).to.equal(code(Errors.UNKNOWN_MEMBER_ID));
    });

    it('removes members that never send SyncGroup within the rebalance timeout', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      const tb = d.sync(b.memberId, 2);
      d.advance(REBALANCE_MS);
      expect(d.group.memberIds).to.deep.equal([b.memberId]);
      expect(d.group.state).to.equal('PreparingRebalance');
      expect(d.syncAnswer(tb).errorCode).to.equal(code(Errors.REBALANCE_IN_PROGRESS));
      expect(d.heartbeat(b.memberId, 2)).to.equal(code(Errors.REBALANCE_IN_PROGRESS));
    });

    it('reports the next deadline so the shell can arm one timer', () => {
      const d = new GroupDriver();
      expect(d.group.nextDeadlineMs()).to.equal(null);
      d.stableWithOne();
      expect(d.group.nextDeadlineMs()).to.equal(d.clock.monotonicMs() + SESSION_MS);
    });
  });

  describe('generations and commits', () => {
    it('refuses heartbeats, syncs and commits of a stale generation', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      expect(d.heartbeat(a, 1)).to.equal(code(Errors.ILLEGAL_GENERATION));
      expect(d.syncAnswer(d.sync(a, 1)).errorCode).to.equal(code(Errors.ILLEGAL_GENERATION));
      expect(d.group.commitProblem(b.memberId, null, 1)?.error).to.equal(Errors.ILLEGAL_GENERATION);
      // Generation 2 is current but still completing: commits wait for SyncGroup.
      expect(d.group.commitProblem(a, null, 2)?.error).to.equal(Errors.REBALANCE_IN_PROGRESS);
      d.sync(a, 2, { [a]: 'x' });
      d.persistLast();
      expect(d.group.commitProblem(a, null, 2)).to.equal(null);
    });

    it('takes a stale generation\'s commit only with the stale-generation-commit mutant on (the bug the simulation must catch)', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      d.join(a);
      d.sync(a, 2, { [a]: 'x' });
      d.persistLast();
      expect(d.group.commitProblem(a, null, 1)?.error).to.equal(Errors.ILLEGAL_GENERATION);
      setMutant('stale-generation-commit');
      try {
        expect(d.group.commitProblem(a, null, 1)).to.equal(null);
      } finally {
        setMutant(undefined);
      }
      expect(d.group.commitProblem(a, null, 1)?.error).to.equal(Errors.ILLEGAL_GENERATION);
    });

    it('checks a SyncGroup\'s protocol after its member and generation, as Kafka does', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const wrong = { protocolType: 'connect', protocolName: 'range' };
      expect(d.syncAnswer(d.sync('stranger', 1, {}, null, wrong)).errorCode, 'a stranger').to.equal(code(Errors.UNKNOWN_MEMBER_ID));
      expect(d.syncAnswer(d.sync(a, 7, {}, null, wrong)).errorCode, 'a stale generation').to.equal(code(Errors.ILLEGAL_GENERATION));
      expect(d.syncAnswer(d.sync(a, 1, {}, null, wrong)).errorCode, 'the wrong type').to.equal(code(Errors.INCONSISTENT_GROUP_PROTOCOL));
      expect(d.syncAnswer(d.sync(a, 1, {}, null, { protocolType: 'consumer', protocolName: 'sticky' })).errorCode, 'the wrong name').to.equal(code(Errors.INCONSISTENT_GROUP_PROTOCOL));
      expect(d.syncAnswer(d.sync(a, 1, {}, null, { protocolType: 'consumer', protocolName: 'range' })).errorCode, 'the right one').to.equal(0);
    });

    it('accepts generation -1 commits only while the group has no members', () => {
      const d = new GroupDriver();
      expect(d.group.commitProblem('', null, -1)).to.equal(null);
      const a = d.stableWithOne();
      expect(d.group.commitProblem('', null, -1)?.error).to.equal(Errors.UNKNOWN_MEMBER_ID);
      expect(d.group.leave([{ memberId: a, groupInstanceId: null }]).results).to.deep.equal([null]);
      expect(d.group.state).to.equal('Empty');
      expect(d.group.commitProblem('', null, -1)).to.equal(null);
    });

    it('checks a transactional commit as KIP-447 does: a named member at its generation, or a producer naming neither', () => {
      const d = new GroupDriver();
      expect(d.group.txnCommitProblem('', null, -1), 'an Empty group, generation -1').to.equal(null);
      expect(d.group.txnCommitProblem('someone', null, -1), 'an Empty group takes generation -1 from anyone').to.equal(null);
      const a = d.stableWithOne();
      expect(d.group.txnCommitProblem('', null, -1), 'a producer without group metadata (pre-KIP-447)').to.equal(null);
      expect(d.group.commitProblem('', null, -1)?.error, 'which a plain commit may not do').to.equal(Errors.UNKNOWN_MEMBER_ID);
      expect(d.group.txnCommitProblem(a, null, 1)).to.equal(null);
      expect(d.group.txnCommitProblem('stranger', null, 1)?.error).to.equal(Errors.UNKNOWN_MEMBER_ID);
      expect(d.group.txnCommitProblem(a, null, 0)?.error).to.equal(Errors.ILLEGAL_GENERATION);
      expect(d.group.txnCommitProblem(a, null, -1)?.error, 'a named member without its generation').to.equal(Errors.ILLEGAL_GENERATION);
      // Generation 2 completing: a plain commit waits for SyncGroup, a transactional one of the new generation does not.
      d.join(a);
      expect(d.group.state).to.equal('CompletingRebalance');
      expect(d.group.commitProblem(a, null, 2)?.error).to.equal(Errors.REBALANCE_IN_PROGRESS);
      expect(d.group.txnCommitProblem(a, null, 2)).to.equal(null);
      expect(d.group.txnCommitProblem(a, null, 1)?.error, 'the generation before').to.equal(Errors.ILLEGAL_GENERATION);
    });

    it('fences a static member\'s old instance from transactional commits', () => {
      const d = new GroupDriver();
      const first = d.joinAnswer(d.join('', { groupInstanceId: 'pod-1' }));
      d.sync(first.memberId, first.generationId, { [first.memberId]: 'a' }, 'pod-1');
      d.persistLast();
      expect(d.group.txnCommitProblem(first.memberId, 'pod-1', first.generationId)).to.equal(null);
      const again = d.joinAnswer(d.join('', { groupInstanceId: 'pod-1' }));
      expect(again.memberId).to.not.equal(first.memberId);
      expect(d.group.txnCommitProblem(first.memberId, 'pod-1', again.generationId)?.error).to.equal(Errors.FENCED_INSTANCE_ID);
      expect(d.group.txnCommitProblem(again.memberId, 'pod-1', again.generationId)).to.equal(null);
    });
  });

  describe('leaving', () => {
    it('rebalances the rest when a member leaves; the last one leaving empties the group at a new generation', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.join(a);
      d.sync(a, 2, { [a]: 'x', [b.memberId]: 'y' });
      d.persistLast();
      const left = d.group.leave([{ memberId: b.memberId, groupInstanceId: null }, { memberId: 'ghost', groupInstanceId: null }]);
      d.take(left.outputs);
      expect(left.results[0]).to.equal(null);
      expect(left.results[1]?.error).to.equal(Errors.UNKNOWN_MEMBER_ID);
      expect(d.group.state).to.equal('PreparingRebalance');
      expect(d.joinAnswer(d.join(a)).generationId).to.equal(3);
      const persisted = d.persists.length;
      d.take(d.group.leave([{ memberId: a, groupInstanceId: null }]).outputs);
      expect(d.group.state).to.equal('Empty');
      expect(d.group.generationId).to.equal(4);
      expect(d.persists.length, 'the Empty group is written').to.equal(persisted + 1);
      expect(d.persists[d.persists.length - 1]!.snapshot).to.include({ generationId: 4, leader: null });
    });

    it('answers a parked join of a member that leaves', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.take(d.group.leave([{ memberId: b.memberId, groupInstanceId: null }]).outputs);
      expect(d.joinAnswer(b.token).errorCode).to.equal(code(Errors.UNKNOWN_MEMBER_ID));
      expect(d.joinAnswer(d.join(a)).members.map((m) => m.memberId)).to.deep.equal([a]);
    });
  });

  describe('static membership', () => {
    it('lets a restarted static member take its place without a rebalance, fencing the old id', () => {
      const d = new GroupDriver();
      const first = d.joinAnswer(d.join('', { groupInstanceId: 'consumer-1' }));
      expect(first.errorCode, 'a static member joins without MEMBER_ID_REQUIRED').to.equal(0);
      const old = first.memberId;
      const b = d.joinNew();
      d.join(old, { groupInstanceId: 'consumer-1' });
      d.sync(old, 2, { [old]: 'mine', [b.memberId]: 'theirs' }, 'consumer-1');
      d.persistLast();
      const writes = d.persists.length;
      const again = d.joinAnswer(d.join('', { groupInstanceId: 'consumer-1' }));
      expect(again).to.include({ errorCode: 0, generationId: 2, leader: again.memberId, skipAssignment: true });
      expect(again.memberId).to.not.equal(old);
      expect(again.members.map((m) => m.memberId)).to.have.members([again.memberId, b.memberId]);
      expect(d.group.state).to.equal('Stable');
      expect(d.persists.length, 'the new member id is written').to.equal(writes + 1);
      expect(d.heartbeat(old, 2, 'consumer-1')).to.equal(code(Errors.FENCED_INSTANCE_ID));
      expect(d.heartbeat(again.memberId, 2, 'consumer-1')).to.equal(0);
      expect(Buffer.from(d.syncAnswer(d.sync(again.memberId, 2, {}, 'consumer-1')).assignment).toString()).to.equal('mine');
    });

    it('keeps a static member that returns with new metadata for the same protocol without a rebalance (as Kafka)', () => {
      const d = new GroupDriver();
      const a = d.joinAnswer(d.join('', { groupInstanceId: 'i' })).memberId;
      d.sync(a, 1, { [a]: 'x' }, 'i');
      d.persistLast();
      // A restarted cooperative consumer lists no owned partitions: its metadata differs, its protocol does not.
      d.join('', { groupInstanceId: 'i', protocols: [{ name: 'range', metadata: bytes('owns nothing yet') }] });
      expect(d.group.state).to.equal('Stable');
      expect(d.group.generationId).to.equal(1);
    });

    it('rebalances when a static member returns with protocols that change the group\'s choice', () => {
      const d = new GroupDriver();
      const a = d.joinAnswer(d.join('', { groupInstanceId: 'i' })).memberId;
      d.sync(a, 1, { [a]: 'x' }, 'i');
      d.persistLast();
      d.join('', { groupInstanceId: 'i', protocols: [{ name: 'roundrobin', metadata: bytes('t') }] });
      expect(d.group.state).to.equal('CompletingRebalance');
      expect(d.group.generationId).to.equal(2);
    });

    it('lets a static member leave by instance id, refusing a stale member id', () => {
      const d = new GroupDriver();
      const a = d.joinAnswer(d.join('', { groupInstanceId: 'i' })).memberId;
      const wrong = d.group.leave([{ memberId: 'stale-id', groupInstanceId: 'i' }]);
      expect(wrong.results[0]?.error).to.equal(Errors.FENCED_INSTANCE_ID);
      const ok = d.group.leave([{ memberId: '', groupInstanceId: 'i' }]);
      d.take(ok.outputs);
      expect(ok.results[0]).to.equal(null);
      expect(d.group.memberIds).to.not.include(a);
    });
  });

  describe('durability and handover', () => {
    it('restores a written group as Stable with its members, generation and assignments', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const snapshot = d.persists[d.persists.length - 1]!.snapshot;
      const e = new GroupDriver();
      e.restore(snapshot);
      expect(e.group.state).to.equal('Stable');
      expect(e.group.generationId).to.equal(1);
      expect(e.heartbeat(a, 1)).to.equal(0);
      expect(Buffer.from(e.syncAnswer(e.sync(a, 1)).assignment).toString()).to.equal('a0');
      e.advance(SESSION_MS);
      expect(e.group.state, 'sessions restart at load and expire like any other').to.equal('Empty');
    });

    it('answers every parked request on shutdown', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      const b = d.joinNew();
      d.take(d.group.shutdown(Errors.NOT_COORDINATOR, 'unloaded'));
      expect(d.joinAnswer(b.token).errorCode).to.equal(code(Errors.NOT_COORDINATOR));
      expect(d.group.memberIds).to.include(a);
    });

    it('can be deleted only when Empty, and revived when the deletion is not written', () => {
      const d = new GroupDriver();
      const a = d.stableWithOne();
      expect(d.group.deletionProblem()?.error).to.equal(Errors.NON_EMPTY_GROUP);
      d.take(d.group.leave([{ memberId: a, groupInstanceId: null }]).outputs);
      expect(d.group.deletionProblem()).to.equal(null);
      d.group.markDead();
      expect(d.joinAnswer(d.join('')).errorCode).to.equal(code(Errors.COORDINATOR_NOT_AVAILABLE));
      d.group.revive();
      expect(d.group.state).to.equal('Empty');
    });
  });

  it('answers every request exactly once under random schedules (seeded)', () => {
    type Op = { kind: 'joinNew' | 'rejoin' | 'sync' | 'heartbeat' | 'leave' | 'advance' | 'persist' | 'persistFail'; who: number; ms: number };
    const op = fc.record({
      kind: fc.constantFrom('joinNew', 'rejoin', 'sync', 'heartbeat', 'leave', 'advance', 'persist', 'persistFail') as fc.Arbitrary<Op['kind']>,
      who: fc.nat(5), ms: fc.integer({ min: 1, max: 4_000 }),
    });
    fc.assert(fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
      const d = new GroupDriver();
      const known: string[] = [];
      let lastGeneration = 0;
      for (const o of ops) {
        const member = known[o.who % Math.max(1, known.length)] ?? '';
        switch (o.kind) {
          case 'joinNew': known.push(d.joinAnswer(d.join('')).memberId); break;
          case 'rejoin': if (member) d.join(member); break;
          case 'sync': if (member) d.sync(member, d.group.generationId, Object.fromEntries(d.group.memberIds.map((m) => [m, m]))); break;
          case 'heartbeat': if (member) d.heartbeat(member, d.group.generationId); break;
          case 'leave': if (member) d.take(d.group.leave([{ memberId: member, groupInstanceId: null }]).outputs); break;
          case 'advance': d.advance(o.ms); break;
          case 'persist': if (d.persists.length > 0) d.persistLast(); break;
          case 'persistFail': if (d.persists.length > 0) d.persistLast({ error: Errors.REQUEST_TIMED_OUT, message: 'slow ISR' }); break;
        }
        expect(d.group.generationId).to.be.at.least(lastGeneration);
        lastGeneration = d.group.generationId;
        const members = d.group.memberIds;
        if (members.length > 0) expect(members).to.include(d.group.leader);
        if (d.group.state === 'Empty') expect(members).to.deep.equal([]);
      }
      d.take(d.group.shutdown(Errors.NOT_COORDINATOR, 'end of run'));
      for (const t of d.issued) expect(d.joins.has(t) || d.syncs.has(t), `token ${t} answered`).to.equal(true);
    }), { seed: 20_261_130, numRuns: 300 });
  });
});
