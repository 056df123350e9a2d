// One consumer group's membership: the state machine of Kafka's classic group
// protocol, pure (time from the injected Clock, member ids from the injected
// Rng, no timers or I/O). Calls return what the shell must do as values
// (GroupOutput): answer a pending JoinGroup/SyncGroup, or persist the group.
//
// States and the transitions this class owns:
//   Empty ──join (a member)──▶ PreparingRebalance
//   PreparingRebalance ──barrier: every member rejoined, or the rebalance timeout──▶
//       CompletingRebalance (members left: generation+1, protocol chosen, leader gets every member's metadata)
//       Empty (no member left: generation+1, persisted)
//   CompletingRebalance ──leader's SyncGroup persisted──▶ Stable (followers' pending syncs answered)
//   CompletingRebalance ──a member did not sync within the rebalance timeout──▶ PreparingRebalance
//   Stable/CompletingRebalance ──join of a new member, changed metadata, the leader rejoining,
//       a leave, a session expiry──▶ PreparingRebalance
//   Empty ──delete──▶ Dead (revive() undoes it when the tombstones could not be written)
//
// Invariants:
//   - joinToken is set only while PreparingRebalance (the member's JoinGroup
//     waits for the barrier); syncToken only while CompletingRebalance.
//   - a member with a pending request is kept alive (its session deadline is
//     not enforced); its session restarts when the answer goes out.
//   - staticMembers maps each groupInstanceId to the one member id that holds
//     it; an older id for the same instance is fenced (FENCED_INSTANCE_ID).
//   - while the group has members, the protocols they all support are a
//     non-empty set (protocols.ts).
//   - every Token handed to join()/sync() is answered exactly once, through
//     an output of this or a later call (shutdown() answers the rest).

import { assert } from '../../util/assert.js';
import type { Clock } from '../../util/clock.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';
import type { Rng } from '../../util/rng.js';
import { mutant } from '../../util/mutants.js';
import type { DescribedGroupMember, GroupState, JoinGroupMember, JoinGroupResponse, SyncGroupResponse } from '../../protocol/apis/groups.js';
import type { GroupLimits } from '../defaults.js';
import { CONSUMER_PROTOCOL_TYPE, decodeSubscription } from '../consumer-protocol.js';
import { commonProtocols, sameProtocols, selectProtocol } from './protocols.js';
import { SERVER_ASSIGNOR_PREFIX } from '../server-assignment.js';
import { EMPTY_BYTES, joinError, syncError } from './responses.js';
import type { GroupOutput, GroupSnapshot, HeartbeatInput, JoinInput, MemberRef, Protocol, SyncInput, Token } from './types.js';

export interface GroupDeps {
  readonly clock: Clock;
  readonly rng: Rng;
  readonly limits: GroupLimits;
  /**
   * Server-side assignment (server-assignment.ts): memberId → assignment for
   * a generation whose protocol is server-side, else null (a member leads).
   */
  readonly serverAssign?: (protocol: string, generationId: number, members: ReadonlyArray<{ memberId: string; groupInstanceId: string | null; metadata: Uint8Array }>) => Map<string, Uint8Array> | null;
}

/** Why a request was refused. */
export interface Refusal {
  readonly error: ErrorInfo;
  readonly message: string;
}

interface Member {
  memberId: string;
  readonly groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocols: readonly Protocol[];
  assignment: Uint8Array;
  joinToken: Token | null;
  syncToken: Token | null;
  /** Monotonic ms at which the member is removed unless it heartbeats (while no request of it is pending). */
  sessionDeadlineMs: number;
  /** Sent SyncGroup in the current generation (meaningful while CompletingRebalance). */
  synced: boolean;
}

export interface GroupDescription {
  readonly state: GroupState;
  readonly protocolType: string;
  readonly protocolName: string;
  readonly members: DescribedGroupMember[];
}

const MEMBER_ID_PREFIX_CHARS_MAX = 64;

function refusal(error: ErrorInfo, message: string): Refusal {
  return { error, message };
}

export class Group {
  private stateNow: GroupState = 'Empty';
  private generation = 0;
  private protocolTypeNow: string | null = null;
  private protocolNameNow: string | null = null;
  private leaderId: string | null = null;
  /** In join order: the first one becomes leader when the leader goes. */
  private readonly members = new Map<string, Member>();
  private readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED, with the deadline to rejoin by (monotonic ms). */
  private readonly pendingMembers = new Map<string, number>();
  private rebalanceDeadlineMs = 0;
  private syncDeadlineMs = 0;
  private persistSeq = 0;
  /** This generation's assignment was computed by the coordinator (server-side protocol): no member leads. */
  private serverAssigned = false;
  /** The leader's assignment while its write is in flight. */
  private assignmentWrite: { seq: number; assignments: Map<string, Uint8Array> } | null = null;

  constructor(readonly groupId: string, private readonly deps: GroupDeps) {}

  /** A group as a new coordinator loads it: Stable with its members (sessions restart now), or Empty. */
  static restore(groupId: string, s: GroupSnapshot, deps: GroupDeps): Group {
    const g = new Group(groupId, deps);
    g.generation = s.generationId;
    g.protocolTypeNow = s.protocolType;
    const now = deps.clock.monotonicMs();
    for (const m of s.members) {
      g.members.set(m.memberId, {
        ...m, protocols: [...m.protocols], joinToken: null, syncToken: null, sessionDeadlineMs: now + m.sessionTimeoutMs, synced: true,
      });
      if (m.groupInstanceId !== null) g.staticMembers.set(m.groupInstanceId, m.memberId);
    }
    if (g.members.size > 0) {
      g.stateNow = 'Stable';
      g.protocolNameNow = s.protocolName;
      g.leaderId = s.leader !== null && g.members.has(s.leader) ? s.leader : g.members.keys().next().value!;
      g.serverAssigned = s.protocolName !== null && s.protocolName.startsWith(SERVER_ASSIGNOR_PREFIX) && deps.serverAssign !== undefined;
    }
    return g;
  }

  get state(): GroupState {
    return this.stateNow;
  }

  get generationId(): number {
    return this.generation;
  }

  get protocolType(): string | null {
    return this.protocolTypeNow;
  }

  get protocolName(): string | null {
    return this.protocolNameNow;
  }

  get leader(): string | null {
    return this.leaderId;
  }

  get memberIds(): string[] {
    return [...this.members.keys()];
  }

  /** Nothing worth keeping: never had a generation, no member, no member id handed out. */
  get isVacant(): boolean {
    return this.stateNow === 'Empty' && this.generation === 0 && this.pendingMembers.size === 0;
  }

  private now(): number {
    return this.deps.clock.monotonicMs();
  }

  // ---- JoinGroup -------------------------------------------------------------

  join(token: Token, input: JoinInput): GroupOutput[] {
    const problem = this.joinProblem(input);
    if (problem) return [{ kind: 'joinResponse', token, response: joinError(problem.error, input.memberId, problem.message) }];
    return input.memberId === '' ? this.joinNewMember(token, input) : this.joinKnownMember(token, input);
  }

  private joinProblem(input: JoinInput): Refusal | null {
    const l = this.deps.limits;
    if (this.stateNow === 'Dead') return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `group ${this.groupId} is being deleted`);
    if (!(input.sessionTimeoutMs >= l.sessionTimeoutMsMin && input.sessionTimeoutMs <= l.sessionTimeoutMsMax)) {
      return refusal(Errors.INVALID_SESSION_TIMEOUT, `sessionTimeoutMs must be in [${l.sessionTimeoutMsMin}, ${l.sessionTimeoutMsMax}], got ${input.sessionTimeoutMs}`);
    }
    if (!(input.rebalanceTimeoutMs >= 1 && input.rebalanceTimeoutMs <= l.rebalanceTimeoutMsMax)) {
      return refusal(Errors.INVALID_REQUEST, `rebalanceTimeoutMs must be in [1, ${l.rebalanceTimeoutMsMax}], got ${input.rebalanceTimeoutMs}`);
    }
    if (input.protocolType === '' || input.protocols.length === 0) {
      return refusal(Errors.INCONSISTENT_GROUP_PROTOCOL, 'a member needs a protocol type and at least one protocol');
    }
    if (this.members.size === 0) return null;
    if (input.protocolType !== this.protocolTypeNow) {
      return refusal(Errors.INCONSISTENT_GROUP_PROTOCOL, `group ${this.groupId} has protocol type ${this.protocolTypeNow}, not ${input.protocolType}`);
    }
    const others = [...this.members.values()].filter((m) => m.memberId !== input.memberId && (input.groupInstanceId === null || m.groupInstanceId !== input.groupInstanceId));
    const shared = others.length === 0 ? input.protocols.map((p) => p.name) : commonProtocols(others);
    if (!input.protocols.some((p) => shared.includes(p.name))) {
      return refusal(Errors.INCONSISTENT_GROUP_PROTOCOL, `none of [${input.protocols.map((p) => p.name).join(', ')}] is supported by every member of ${this.groupId} ([${shared.join(', ')}])`);
    }
    return null;
  }

  private isFull(): boolean {
    return this.members.size + this.pendingMembers.size >= this.deps.limits.groupMembersMax;
  }

  private fullRefusal(): Refusal {
    return refusal(Errors.GROUP_MAX_SIZE_REACHED, `group ${this.groupId} has reached its size limit of ${this.deps.limits.groupMembersMax} members`);
  }

  /** A first join: a static member takes over its instance's place; a dynamic one gets an id to rejoin with (KIP-394). */
  private joinNewMember(token: Token, input: JoinInput): GroupOutput[] {
    const instance = input.groupInstanceId;
    if (instance !== null) {
      const oldId = this.staticMembers.get(instance);
      if (oldId !== undefined) return this.replaceStaticMember(token, input, oldId);
    }
    if (this.isFull()) {
      const r = this.fullRefusal();
      return [{ kind: 'joinResponse', token, response: joinError(r.error, '', r.message) }];
    }
    const memberId = this.newMemberId(instance ?? input.clientId);
    if (instance !== null) return this.addMemberAndRebalance(token, memberId, input);
    this.pendingMembers.set(memberId, this.now() + input.sessionTimeoutMs);
    return [{ kind: 'joinResponse', token, response: joinError(Errors.MEMBER_ID_REQUIRED, memberId, `rejoin group ${this.groupId} with member id ${memberId}`) }];
  }

  private joinKnownMember(token: Token, input: JoinInput): GroupOutput[] {
    if (this.pendingMembers.delete(input.memberId)) return this.addMemberAndRebalance(token, input.memberId, input);
    const problem = this.memberProblem(input);
    if (problem) return [{ kind: 'joinResponse', token, response: joinError(problem.error, input.memberId, problem.message) }];
    const m = this.members.get(input.memberId)!;
    const unchanged = sameProtocols(m.protocols, input.protocols);
    switch (this.stateNow) {
      case 'PreparingRebalance':
        return [...this.updateMember(m, input, token), ...this.maybeCompleteJoin()];
      case 'CompletingRebalance':
        // A retried join of this generation gets the same answer; changed metadata needs a new generation.
        if (unchanged) return [{ kind: 'joinResponse', token, response: this.joinAnswer(m, false) }];
        return [...this.updateMember(m, input, token), ...this.prepareRebalance()];
      case 'Stable':
        if (unchanged && (this.serverAssigned || m.memberId !== this.leaderId)) return [{ kind: 'joinResponse', token, response: this.joinAnswer(m, false) }];
        return [...this.updateMember(m, input, token), ...this.prepareRebalance()];
      default:
        // Empty and Dead groups have no members: memberProblem answered already.
        assert(false, `member ${m.memberId} in a ${this.stateNow} group`);
    }
  }

  private addMemberAndRebalance(token: Token, memberId: string, input: JoinInput): GroupOutput[] {
    const m: Member = {
      memberId, groupInstanceId: input.groupInstanceId, clientId: input.clientId, clientHost: input.clientHost,
      sessionTimeoutMs: input.sessionTimeoutMs, rebalanceTimeoutMs: input.rebalanceTimeoutMs, protocols: input.protocols,
      assignment: EMPTY_BYTES, joinToken: null, syncToken: null, sessionDeadlineMs: 0, synced: false,
    };
    if (this.members.size === 0) this.protocolTypeNow = input.protocolType;
    this.members.set(memberId, m);
    if (m.groupInstanceId !== null) this.staticMembers.set(m.groupInstanceId, memberId);
    if (this.leaderId === null) this.leaderId = memberId;
    const out = this.updateMember(m, input, token);
    if (this.stateNow === 'PreparingRebalance') return [...out, ...this.maybeCompleteJoin()];
    return [...out, ...this.prepareRebalance()];
  }

  /**
   * A static member restarted: its new member id replaces the old one, which
   * is fenced from now on. In a Stable group whose selected protocol its new
   * metadata keeps, there is no rebalance: the member takes the new metadata
   * and resumes its assignment (KIP-345; Kafka's coordinator decides on the
   * selected protocol too, since a restarted consumer's metadata differs —
   * cooperative-sticky lists the partitions it owns, none after a restart).
   * A subscription change is then seen at the next rebalance. Otherwise it
   * joins a rebalance.
   */
  private replaceStaticMember(token: Token, input: JoinInput, oldId: string): GroupOutput[] {
    const old = this.members.get(oldId);
    assert(old !== undefined, `static member ${oldId} is not a member`);
    const out: GroupOutput[] = [];
    const fenced = `member ${oldId} was replaced by a new member with group instance id ${input.groupInstanceId}`;
    if (old.joinToken !== null) out.push({ kind: 'joinResponse', token: old.joinToken, response: joinError(Errors.FENCED_INSTANCE_ID, oldId, fenced) });
    if (old.syncToken !== null) out.push({ kind: 'syncResponse', token: old.syncToken, response: syncError(Errors.FENCED_INSTANCE_ID, fenced) });
    const memberId = this.newMemberId(input.groupInstanceId!);
    const m: Member = { ...old, memberId, clientId: input.clientId, clientHost: input.clientHost, joinToken: null, syncToken: null };
    this.members.delete(oldId);
    this.members.set(memberId, m);
    this.staticMembers.set(input.groupInstanceId!, memberId);
    if (this.leaderId === oldId) this.leaderId = memberId;
    if (this.stateNow === 'Stable' && this.keepsSelectedProtocol(m, input)) {
      m.protocols = input.protocols;
      m.sessionTimeoutMs = input.sessionTimeoutMs;
      m.rebalanceTimeoutMs = input.rebalanceTimeoutMs;
      m.sessionDeadlineMs = this.now() + m.sessionTimeoutMs;
      // Persisted so a coordinator failover knows the new id (a lost write only costs a rejoin).
      out.push(this.persistOutput());
      out.push({ kind: 'joinResponse', token, response: this.joinAnswer(m, memberId === this.leaderId && !this.serverAssigned) });
      return out;
    }
    out.push(...this.updateMember(m, input, token));
    if (this.stateNow === 'PreparingRebalance') return [...out, ...this.maybeCompleteJoin()];
    return [...out, ...this.prepareRebalance()];
  }

  /** Whether the group would select the same protocol with `m` holding `input`'s protocols. */
  private keepsSelectedProtocol(m: Member, input: JoinInput): boolean {
    const others = [...this.members.values()].filter((x) => x !== m);
    const all = [...others, { protocols: input.protocols }];
    return this.protocolNameNow !== null && commonProtocols(all).length > 0 && selectProtocol(all) === this.protocolNameNow;
  }

  /** Takes the member's new metadata and parks its JoinGroup until the barrier. */
  private updateMember(m: Member, input: JoinInput, token: Token): GroupOutput[] {
    const out: GroupOutput[] = [];
    if (m.joinToken !== null) {
      out.push({ kind: 'joinResponse', token: m.joinToken, response: joinError(Errors.REBALANCE_IN_PROGRESS, m.memberId, 'superseded by a newer JoinGroup of the same member') });
    }
    m.protocols = input.protocols;
    m.sessionTimeoutMs = input.sessionTimeoutMs;
    m.rebalanceTimeoutMs = input.rebalanceTimeoutMs;
    m.clientId = input.clientId;
    m.clientHost = input.clientHost;
    m.joinToken = token;
    return out;
  }

  /** The JoinGroup answer of the current generation for `m` (every member's metadata for the leader). */
  private joinAnswer(m: Member, skipAssignment: boolean): JoinGroupResponse {
    const protocol = this.protocolNameNow;
    assert(protocol !== null, 'a generation with members has a protocol');
    const isLeader = m.memberId === this.leaderId && !this.serverAssigned;
    const members: JoinGroupMember[] = isLeader
      ? [...this.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: metadataFor(x, protocol) }))
      : [];
    return {
      errorCode: 0, errorMessage: null, generationId: this.generation, protocolType: this.protocolTypeNow, protocolName: protocol,
      leader: this.serverAssigned ? '' : (this.leaderId ?? ''), memberId: m.memberId, skipAssignment, members,
    };
  }

  // ---- rebalance ---------------------------------------------------------------

  private prepareRebalance(): GroupOutput[] {
    const out: GroupOutput[] = [];
    if (this.stateNow === 'CompletingRebalance') out.push(...this.abandonSyncs(Errors.REBALANCE_IN_PROGRESS, 'the group is rebalancing again'));
    this.stateNow = 'PreparingRebalance';
    let timeoutMs = 0;
    for (const m of this.members.values()) timeoutMs = Math.max(timeoutMs, m.rebalanceTimeoutMs);
    this.rebalanceDeadlineMs = this.now() + timeoutMs;
    return [...out, ...this.maybeCompleteJoin()];
  }

  /** Answers every parked SyncGroup with `error` and forgets this generation's assignment. */
  private abandonSyncs(error: ErrorInfo, message: string): GroupOutput[] {
    const out: GroupOutput[] = [];
    this.assignmentWrite = null;
    for (const m of this.members.values()) {
      m.assignment = EMPTY_BYTES;
      if (m.syncToken !== null) {
        out.push({ kind: 'syncResponse', token: m.syncToken, response: syncError(error, message) });
        m.syncToken = null;
        m.sessionDeadlineMs = this.now() + m.sessionTimeoutMs;
      }
    }
    return out;
  }

  private maybeCompleteJoin(): GroupOutput[] {
    if (this.stateNow !== 'PreparingRebalance' || this.pendingMembers.size > 0) return [];
    for (const m of this.members.values()) if (m.joinToken === null) return [];
    return this.completeJoin();
  }

  /** The barrier: members that did not rejoin are removed; a new generation starts. */
  private completeJoin(): GroupOutput[] {
    assert(this.stateNow === 'PreparingRebalance', `completeJoin in ${this.stateNow}`);
    for (const m of [...this.members.values()]) if (m.joinToken === null) this.removeMember(m);
    this.generation++;
    if (this.members.size === 0) {
      this.stateNow = 'Empty';
      this.protocolNameNow = null;
      this.leaderId = null;
      return [this.persistOutput()];
    }
    this.protocolNameNow = selectProtocol([...this.members.values()]);
    this.stateNow = 'CompletingRebalance';
    const now = this.now();
    let timeoutMs = 0;
    const out: GroupOutput[] = [];
    // Server-side assignment: written now, so no member's SyncGroup waits on another's.
    const protocol = this.protocolNameNow;
    const assigned = this.deps.serverAssign?.(protocol, this.generation,
      [...this.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: metadataFor(x, protocol) }))) ?? null;
    this.serverAssigned = assigned !== null;
    if (assigned !== null) {
      const write = this.persistOutput(assigned);
      this.assignmentWrite = { seq: write.seq, assignments: assigned };
      out.push(write);
    }
    for (const m of this.members.values()) {
      out.push({ kind: 'joinResponse', token: m.joinToken!, response: this.joinAnswer(m, false) });
      m.joinToken = null;
      m.synced = false;
      m.sessionDeadlineMs = now + m.sessionTimeoutMs;
      timeoutMs = Math.max(timeoutMs, m.rebalanceTimeoutMs);
    }
    this.syncDeadlineMs = now + timeoutMs;
    return out;
  }

  private removeMember(m: Member): void {
    this.members.delete(m.memberId);
    if (m.groupInstanceId !== null && this.staticMembers.get(m.groupInstanceId) === m.memberId) this.staticMembers.delete(m.groupInstanceId);
    if (this.leaderId === m.memberId) this.leaderId = this.members.keys().next().value ?? null;
  }

  /** A member leaves (LeaveGroup, session expiry, missed sync): its parked requests are answered, the group rebalances. */
  private removeMemberAndRebalance(m: Member, why: string): GroupOutput[] {
    const out: GroupOutput[] = [];
    if (m.joinToken !== null) out.push({ kind: 'joinResponse', token: m.joinToken, response: joinError(Errors.UNKNOWN_MEMBER_ID, m.memberId, why) });
    if (m.syncToken !== null) out.push({ kind: 'syncResponse', token: m.syncToken, response: syncError(Errors.UNKNOWN_MEMBER_ID, why) });
    m.joinToken = null;
    m.syncToken = null;
    this.removeMember(m);
    if (this.stateNow === 'Stable' || this.stateNow === 'CompletingRebalance') out.push(...this.prepareRebalance());
    else out.push(...this.maybeCompleteJoin());
    return out;
  }

  // ---- SyncGroup -------------------------------------------------------------

  sync(token: Token, input: SyncInput): GroupOutput[] {
    const problem = this.syncProblem(input);
    if (problem) return [{ kind: 'syncResponse', token, response: syncError(problem.error, problem.message) }];
    const m = this.members.get(input.memberId)!;
    if (this.stateNow === 'Stable') {
      m.sessionDeadlineMs = this.now() + m.sessionTimeoutMs;
      return [{ kind: 'syncResponse', token, response: this.syncAnswer(m.assignment) }];
    }
    const out: GroupOutput[] = [];
    if (m.syncToken !== null) out.push({ kind: 'syncResponse', token: m.syncToken, response: syncError(Errors.REBALANCE_IN_PROGRESS, 'superseded by a newer SyncGroup of the same member') });
    m.syncToken = token;
    m.synced = true;
    if (m.memberId === this.leaderId && this.assignmentWrite === null) {
      const assignments = new Map<string, Uint8Array>();
      for (const a of input.assignments) if (this.members.has(a.memberId)) assignments.set(a.memberId, a.assignment);
      const write = this.persistOutput(assignments);
      this.assignmentWrite = { seq: write.seq, assignments };
      out.push(write);
    }
    return out;
  }

  private syncProblem(input: SyncInput): Refusal | null {
    if (this.stateNow === 'Dead') return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `group ${this.groupId} is being deleted`);
    const problem = this.memberProblem(input);
    if (problem) return problem;
    if (input.generationId !== this.generation) {
      return refusal(Errors.ILLEGAL_GENERATION, `generation ${input.generationId} is not the current generation ${this.generation} of ${this.groupId}`);
    }
    const wrongType = input.protocolType != null && input.protocolType !== this.protocolTypeNow;
    if (wrongType || (input.protocolName != null && input.protocolName !== this.protocolNameNow)) {
      return refusal(Errors.INCONSISTENT_GROUP_PROTOCOL, `group ${this.groupId} has protocol ${this.protocolTypeNow}/${this.protocolNameNow}, not ${input.protocolType}/${input.protocolName}`);
    }
    if (this.stateNow === 'PreparingRebalance') return refusal(Errors.REBALANCE_IN_PROGRESS, `group ${this.groupId} is rebalancing; rejoin`);
    return null;
  }

  private syncAnswer(assignment: Uint8Array): SyncGroupResponse {
    return { errorCode: 0, errorMessage: null, protocolType: this.protocolTypeNow, protocolName: this.protocolNameNow, assignment };
  }

  /**
   * The shell wrote (or failed to write) the group for output `seq`. The
   * leader's assignment takes effect only once written: then the group is
   * Stable and every parked SyncGroup is answered. A failed write sends the
   * group into a new rebalance.
   */
  persisted(seq: number, error: Refusal | null): GroupOutput[] {
    const write = this.assignmentWrite;
    if (write === null || write.seq !== seq || this.stateNow !== 'CompletingRebalance') return [];
    if (error) return [...this.abandonSyncs(error.error, error.message), ...this.prepareRebalance()];
    this.assignmentWrite = null;
    this.stateNow = 'Stable';
    const out: GroupOutput[] = [];
    const now = this.now();
    for (const m of this.members.values()) {
      m.assignment = write.assignments.get(m.memberId) ?? EMPTY_BYTES;
      if (m.syncToken !== null) {
        out.push({ kind: 'syncResponse', token: m.syncToken, response: this.syncAnswer(m.assignment) });
        m.syncToken = null;
        m.sessionDeadlineMs = now + m.sessionTimeoutMs;
      }
    }
    return out;
  }

  private persistOutput(assignments?: ReadonlyMap<string, Uint8Array>): GroupOutput & { kind: 'persist' } {
    return { kind: 'persist', seq: ++this.persistSeq, snapshot: this.snapshot(assignments) };
  }

  // ---- Heartbeat, LeaveGroup, OffsetCommit checks ---------------------------------

  /** Keeps the member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin. */
  heartbeat(input: HeartbeatInput): Refusal | null {
    if (this.stateNow === 'Dead') return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `group ${this.groupId} is being deleted`);
    const problem = this.memberProblem(input);
    if (problem) return problem;
    if (input.generationId !== this.generation) {
      return refusal(Errors.ILLEGAL_GENERATION, `generation ${input.generationId} is not the current generation ${this.generation} of ${this.groupId}`);
    }
    const m = this.members.get(input.memberId)!;
    m.sessionDeadlineMs = this.now() + m.sessionTimeoutMs;
    if (this.stateNow === 'PreparingRebalance') return refusal(Errors.REBALANCE_IN_PROGRESS, `group ${this.groupId} is rebalancing; rejoin`);
    return null;
  }

  /** Members leave (a static one by its instance id; member id '' removes whoever holds it). */
  leave(leaving: readonly MemberRef[]): { results: Array<Refusal | null>; outputs: GroupOutput[] } {
    const outputs: GroupOutput[] = [];
    const results = leaving.map((ref): Refusal | null => {
      if (this.stateNow === 'Dead') return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `group ${this.groupId} is being deleted`);
      let memberId = ref.memberId;
      if (ref.groupInstanceId !== null) {
        const holder = this.staticMembers.get(ref.groupInstanceId);
        if (holder === undefined) return refusal(Errors.UNKNOWN_MEMBER_ID, `no member of ${this.groupId} has group instance id ${ref.groupInstanceId}`);
        if (memberId !== '' && memberId !== holder) return refusal(Errors.FENCED_INSTANCE_ID, `group instance id ${ref.groupInstanceId} belongs to member ${holder}, not ${memberId}`);
        memberId = holder;
      } else if (this.pendingMembers.delete(memberId)) {
        outputs.push(...this.maybeCompleteJoin());
        return null;
      }
      const m = this.members.get(memberId);
      if (!m) return refusal(Errors.UNKNOWN_MEMBER_ID, `member ${memberId} is not in group ${this.groupId}`);
      outputs.push(...this.removeMemberAndRebalance(m, `member ${memberId} left group ${this.groupId}`));
      return null;
    });
    return { results, outputs };
  }

  /**
   * Whether an OffsetCommit may be written: a member's needs its current
   * generation; generation -1 without a member id (a consumer using assign())
   * only while the group has no members.
   */
  commitProblem(memberId: string, groupInstanceId: string | null, generationId: number): Refusal | null {
    if (this.stateNow === 'Dead') return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `group ${this.groupId} is being deleted`);
    if (generationId < 0 && memberId === '' && groupInstanceId === null) {
      if (this.members.size > 0) return refusal(Errors.UNKNOWN_MEMBER_ID, `group ${this.groupId} has members: only they may commit`);
      return null;
    }
    const problem = this.memberProblem({ memberId, groupInstanceId });
    if (problem) return problem;
    // Mutant: a member's commit from a generation that is over is taken (its partitions may be someone else's now).
    if (generationId !== this.generation && !mutant('stale-generation-commit')) {
      return refusal(Errors.ILLEGAL_GENERATION, `generation ${generationId} is not the current generation ${this.generation} of ${this.groupId}`);
    }
    if (this.stateNow === 'CompletingRebalance') return refusal(Errors.REBALANCE_IN_PROGRESS, `group ${this.groupId} is completing a rebalance; commit after SyncGroup`);
    const m = this.members.get(memberId)!;
    m.sessionDeadlineMs = Math.max(m.sessionDeadlineMs, this.now() + m.sessionTimeoutMs);
    return null;
  }

  /**
   * TxnOffsetCommit's group checks (KIP-447; Kafka's validateOffsetCommit for
   * a transactional commit): an Empty group takes generation -1 from anyone;
   * a producer that names no member and no generation (pre-KIP-447) is
   * taken whatever the group's state, since its transaction fences zombies;
   * a named member must be in the group at its current generation. Unlike
   * OffsetCommit, CompletingRebalance is no refusal, and the member's session
   * is not extended (a producer is not the member's heartbeat).
   */
  txnCommitProblem(memberId: string, groupInstanceId: string | null, generationId: number): Refusal | null {
    if (this.stateNow === 'Dead') return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `group ${this.groupId} is being deleted`);
    if (generationId < 0 && this.stateNow === 'Empty') return null;
    if (generationId < 0 && memberId === '' && groupInstanceId === null) return null;
    const problem = this.memberProblem({ memberId, groupInstanceId });
    if (problem) return problem;
    if (generationId !== this.generation) {
      return refusal(Errors.ILLEGAL_GENERATION, `generation ${generationId} is not the current generation ${this.generation} of ${this.groupId}`);
    }
    return null;
  }

  private memberProblem(ref: MemberRef): Refusal | null {
    if (ref.groupInstanceId !== null) {
      const holder = this.staticMembers.get(ref.groupInstanceId);
      if (holder !== undefined && holder !== ref.memberId) {
        return refusal(Errors.FENCED_INSTANCE_ID, `group instance id ${ref.groupInstanceId} now belongs to member ${holder}, not ${ref.memberId}`);
      }
    }
    if (!this.members.has(ref.memberId)) return refusal(Errors.UNKNOWN_MEMBER_ID, `member ${ref.memberId || "''"} is not in group ${this.groupId}`);
    return null;
  }

  // ---- time ------------------------------------------------------------------

  /**
   * Applies every deadline that has passed: expired sessions and unclaimed
   * member ids are removed, the join barrier closes at the rebalance
   * timeout, members that never synced are removed.
   */
  tick(): GroupOutput[] {
    const now = this.now();
    const out: GroupOutput[] = [];
    for (const [id, deadline] of [...this.pendingMembers]) {
      if (now >= deadline) {
        this.pendingMembers.delete(id);
        out.push(...this.maybeCompleteJoin());
      }
    }
    for (const m of [...this.members.values()]) {
      if (this.members.get(m.memberId) !== m || m.joinToken !== null || m.syncToken !== null || now < m.sessionDeadlineMs) continue;
      out.push(...this.removeMemberAndRebalance(m, `the session of member ${m.memberId} expired`));
    }
    if (this.stateNow === 'PreparingRebalance' && now >= this.rebalanceDeadlineMs) out.push(...this.completeJoin());
    if (this.stateNow === 'CompletingRebalance' && this.assignmentWrite === null && now >= this.syncDeadlineMs) {
      for (const m of [...this.members.values()]) if (!m.synced) this.removeMember(m);
      out.push(...this.prepareRebalance());
    }
    return out;
  }

  /** The earliest monotonic time at which tick() has something to do, or null. */
  nextDeadlineMs(): number | null {
    let next = Infinity;
    for (const d of this.pendingMembers.values()) next = Math.min(next, d);
    for (const m of this.members.values()) if (m.joinToken === null && m.syncToken === null) next = Math.min(next, m.sessionDeadlineMs);
    if (this.stateNow === 'PreparingRebalance') next = Math.min(next, this.rebalanceDeadlineMs);
    if (this.stateNow === 'CompletingRebalance' && this.assignmentWrite === null) next = Math.min(next, this.syncDeadlineMs);
    return next === Infinity ? null : next;
  }

  // ---- deletion, unloading, describing ---------------------------------------------

  deletionProblem(): Refusal | null {
    if (this.stateNow === 'Dead') return refusal(Errors.GROUP_ID_NOT_FOUND, `group ${this.groupId} is being deleted`);
    if (this.stateNow !== 'Empty') return refusal(Errors.NON_EMPTY_GROUP, `group ${this.groupId} has ${this.members.size} members`);
    return null;
  }

  markDead(): void {
    assert(this.deletionProblem() === null, `cannot delete group ${this.groupId} in ${this.stateNow}`);
    this.stateNow = 'Dead';
    this.pendingMembers.clear();
  }

  /** The deletion could not be written: the group is Empty again. */
  revive(): void {
    assert(this.stateNow === 'Dead', `revive a ${this.stateNow} group`);
    this.stateNow = 'Empty';
  }

  /** This coordinator lets go of the group: every parked request is answered with `error`. */
  shutdown(error: ErrorInfo, message: string): GroupOutput[] {
    const out: GroupOutput[] = [];
    for (const m of this.members.values()) {
      if (m.joinToken !== null) out.push({ kind: 'joinResponse', token: m.joinToken, response: joinError(error, m.memberId, message) });
      if (m.syncToken !== null) out.push({ kind: 'syncResponse', token: m.syncToken, response: syncError(error, message) });
      m.joinToken = null;
      m.syncToken = null;
    }
    this.assignmentWrite = null;
    return out;
  }

  describe(): GroupDescription {
    const stable = this.stateNow === 'Stable';
    const protocol = this.protocolNameNow;
    return {
      state: this.stateNow, protocolType: this.protocolTypeNow ?? '', protocolName: protocol ?? '',
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        metadata: stable && protocol !== null ? metadataFor(m, protocol) : EMPTY_BYTES,
        assignment: stable ? m.assignment : EMPTY_BYTES,
      })),
    };
  }

  /**
   * The topics the members subscribe to, read from their metadata for the
   * chosen protocol (Kafka's consumer protocol), or null when that cannot be
   * known: no protocol chosen yet, or a member's metadata does not parse.
   */
  subscribedTopics(): Set<string> | null {
    const protocol = this.protocolNameNow;
    if (protocol === null || this.protocolTypeNow !== CONSUMER_PROTOCOL_TYPE) return null;
    const topics = new Set<string>();
    try {
      for (const m of this.members.values()) for (const t of decodeSubscription(metadataFor(m, protocol)).topics) topics.add(t);
    } catch {
      return null;
    }
    return topics;
  }

  /** The durable form; `assignments` replaces the members' current ones (the leader's, before they take effect). */
  snapshot(assignments?: ReadonlyMap<string, Uint8Array>): GroupSnapshot {
    return {
      protocolType: this.protocolTypeNow, generationId: this.generation, protocolName: this.protocolNameNow, leader: this.leaderId,
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        sessionTimeoutMs: m.sessionTimeoutMs, rebalanceTimeoutMs: m.rebalanceTimeoutMs, protocols: m.protocols,
        assignment: assignments ? (assignments.get(m.memberId) ?? EMPTY_BYTES) : m.assignment,
      })),
    };
  }

  private newMemberId(prefix: string): string {
    let suffix = '';
    for (let i = 0; i < 8; i++) suffix += this.deps.rng.int(0x10000).toString(16).padStart(4, '0');
    return `${(prefix || 'member').slice(0, MEMBER_ID_PREFIX_CHARS_MAX)}-${suffix}`;
  }
}

function metadataFor(m: Member, protocol: string): Uint8Array {
  return m.protocols.find((p) => p.name === protocol)?.metadata ?? EMPTY_BYTES;
}
