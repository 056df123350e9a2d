// The values the pure group state machine (group.ts) takes and returns: what
// a member asks, what the shell must do next (answer a pending request,
// persist the group), and the group's durable form (a snapshot). No I/O, no
// time source here: the shell owns both.

import type { JoinGroupResponse, SyncGroupResponse } from '../../protocol/apis/groups.js';

/** A protocol a member supports, with its opaque metadata (e.g. a consumer's subscription). */
export interface Protocol {
  readonly name: string;
  readonly metadata: Uint8Array;
}

/** The shell's handle for a request whose answer may come later (JoinGroup, SyncGroup). */
export type Token = number;

export interface JoinInput {
  /** '' on a member's first join. */
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocolType: string;
  /** In the member's order of preference. */
  readonly protocols: readonly Protocol[];
}

export interface SyncInput {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly generationId: number;
  /** The leader's assignment per member; empty from the other members. */
  readonly assignments: ReadonlyArray<{ readonly memberId: string; readonly assignment: Uint8Array }>;
  /** SyncGroup v5+: the protocol the member believes the group chose; checked after the member and generation (Kafka's order). */
  readonly protocolType?: string | null;
  readonly protocolName?: string | null;
}

export interface MemberRef {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface HeartbeatInput extends MemberRef {
  readonly generationId: number;
}

/** What the shell must do after a call into the group. */
export type GroupOutput =
  | { readonly kind: 'joinResponse'; readonly token: Token; readonly response: JoinGroupResponse }
  | { readonly kind: 'syncResponse'; readonly token: Token; readonly response: SyncGroupResponse }
  /** Append `snapshot` to the group's __consumer_offsets partition, then call group.persisted(seq, error). */
  | { readonly kind: 'persist'; readonly seq: number; readonly snapshot: GroupSnapshot };

export interface MemberSnapshot {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocols: readonly Protocol[];
  readonly assignment: Uint8Array;
}

/** The durable form of a group: what a new coordinator restores after failover. */
export interface GroupSnapshot {
  readonly protocolType: string | null;
  readonly generationId: number;
  readonly protocolName: string | null;
  readonly leader: string | null;
  readonly members: readonly MemberSnapshot[];
}
