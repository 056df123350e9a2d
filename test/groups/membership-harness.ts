// A driver for the pure group state machine in tests: a ManualClock, a seeded
// Rng, tokens numbered per request, and a record of every answer. It checks
// the state machine's promise on every call — each token is answered at most
// once — and offers the steps a consumer takes (join with MEMBER_ID_REQUIRED,
// sync, heartbeat) as one-liners.

import { expect } from 'chai';
import { ManualClock } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { Group, type GroupDeps } from '../../src/groups/membership/group.js';
import type { GroupOutput, GroupSnapshot, JoinInput, Protocol } from '../../src/groups/membership/types.js';
import { GROUP_DEFAULTS } from '../../src/groups/defaults.js';
import type { JoinGroupResponse, SyncGroupResponse } from '../../src/protocol/apis/groups.js';

export const SESSION_MS = 10_000;
export const REBALANCE_MS = 5_000;

export function protocols(...names: string[]): Protocol[] {
  return names.map((name) => ({ name, metadata: Buffer.from(`meta:${name}`) }));
}

export function bytes(s: string): Buffer {
  return Buffer.from(s);
}

export class GroupDriver {
  readonly clock = new ManualClock();
  readonly rng = new SeededRng(7);
  group: Group;
  private nextToken = 1;
  readonly joins = new Map<number, JoinGroupResponse>();
  readonly syncs = new Map<number, SyncGroupResponse>();
  readonly persists: Array<{ seq: number; snapshot: GroupSnapshot }> = [];
  readonly issued = new Set<number>();

  constructor(groupId = 'g', readonly extraDeps: Partial<GroupDeps> = {}) {
    this.group = new Group(groupId, { clock: this.clock, rng: this.rng, limits: GROUP_DEFAULTS, ...extraDeps });
  }

  restore(snapshot: GroupSnapshot, groupId = 'g'): void {
    this.group = Group.restore(groupId, snapshot, { clock: this.clock, rng: this.rng, limits: GROUP_DEFAULTS });
  }

  /** Records the outputs of one call, failing the test on a second answer to one token. */
  take(outputs: readonly GroupOutput[]): void {
    for (const o of outputs) {
      if (o.kind === 'persist') {
        this.persists.push({ seq: o.seq, snapshot: o.snapshot });
        continue;
      }
      expect(this.issued.has(o.token), `token ${o.token} was issued`).to.equal(true);
      expect(this.joins.has(o.token) || this.syncs.has(o.token), `token ${o.token} answered twice`).to.equal(false);
      if (o.kind === 'joinResponse') this.joins.set(o.token, o.response);
      else this.syncs.set(o.token, o.response);
    }
  }

  token(): number {
    const t = this.nextToken++;
    this.issued.add(t);
    return t;
  }

  /** Sends a JoinGroup; returns its token (the answer may come later). */
  join(memberId: string, opts: Partial<JoinInput> = {}): number {
    const t = this.token();
    this.take(this.group.join(t, {
      memberId, groupInstanceId: null, clientId: 'client', clientHost: '/127.0.0.1', sessionTimeoutMs: SESSION_MS,
      rebalanceTimeoutMs: REBALANCE_MS, protocolType: 'consumer', protocols: protocols('range'), ...opts,
    }));
    return t;
  }

  /** A dynamic member's first join: MEMBER_ID_REQUIRED, then the rejoin with that id (whose token is returned). */
  joinNew(opts: Partial<JoinInput> = {}): { memberId: string; token: number } {
    const first = this.joins.get(this.join('', opts));
    expect(first?.errorCode, first?.errorMessage ?? 'no answer').to.equal(79);
    return { memberId: first!.memberId, token: this.join(first!.memberId, opts) };
  }

  sync(memberId: string, generationId: number, assignments: Record<string, string> = {}, groupInstanceId: string | null = null,
    protocol: { protocolType?: string | null; protocolName?: string | null } = {}): number {
    const t = this.token();
    this.take(this.group.sync(t, {
      memberId, groupInstanceId, generationId, assignments: Object.entries(assignments).map(([m, a]) => ({ memberId: m, assignment: bytes(a) })), ...protocol,
    }));
    return t;
  }

  heartbeat(memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    return this.group.heartbeat({ memberId, groupInstanceId, generationId })?.error.code ?? 0;
  }

  /** Acknowledges (or fails) the last persist output. */
  persistLast(error: { error: { code: number; name: string; retriable: boolean; message: string }; message: string } | null = null): void {
    const last = this.persists[this.persists.length - 1];
    expect(last, 'a persist output').to.not.equal(undefined);
    this.take(this.group.persisted(last!.seq, error));
  }

  advance(ms: number): void {
    this.clock.advance(ms);
    this.take(this.group.tick());
  }

  joinAnswer(token: number): JoinGroupResponse {
    const r = this.joins.get(token);
    expect(r, `an answer to join ${token}`).to.not.equal(undefined);
    return r!;
  }

  syncAnswer(token: number): SyncGroupResponse {
    const r = this.syncs.get(token);
    expect(r, `an answer to sync ${token}`).to.not.equal(undefined);
    return r!;
  }

  /** One member joins an empty group and completes generation 1 with `assignment`. */
  stableWithOne(opts: Partial<JoinInput> = {}): string {
    const { memberId, token } = this.joinNew(opts);
    const j = this.joinAnswer(token);
    this.sync(memberId, j.generationId, { [memberId]: 'a0' });
    this.persistLast();
    expect(this.group.state).to.equal('Stable');
    return memberId;
  }
}
