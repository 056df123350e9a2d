// What the simulated brokers and the admin client see of the simulation, the
// counters they keep for the coverage assertions, and small helpers they share.
// Actors are deterministic: every timer is an event on the simulation's queue,
// every choice comes from their own forked Rng.

import type { MetadataImage } from '../../../src/metadata/image.js';
import type { NodeId } from '../../../src/raft/types.js';
import type { Rng } from '../../../src/util/rng.js';
import type { EventQueue } from '../event-queue.js';
import type { PartitionHistory, ProducerIdBlocks } from './checks.js';
import type { ControllerReply } from './rpc.js';

export interface ActorEnv {
  readonly queue: EventQueue;
  readonly clusterId: string;
  /** Controller node ids (request targets). */
  readonly controllers: readonly NodeId[];
  /** The metadata image live controller node `id` holds now (undefined while it is down). */
  imageOf(id: NodeId): MetadataImage | undefined;
  note(text: string | (() => string)): void;
  readonly stats: ControllerStats;
  readonly history: PartitionHistory;
  readonly producerIds: ProducerIdBlocks;
}

export interface ControllerStats {
  registrations: number;
  brokerCrashes: number;
  controlledShutdowns: number;
  fencedBySession: number;
  notControllerReplies: number;
  requestTimeouts: number;
  alterPartitionAccepted: number;
  alterPartitionRejectedStale: number;
  alterPartitionRejectedOther: number;
  topicsCreated: number;
  topicsDeleted: number;
  partitionsAdded: number;
  reassignmentsStarted: number;
  reassignmentsCancelled: number;
  preferredElections: number;
  producerIdBlocks: number;
  unregistrations: number;
  configChanges: number;
}

export function newStats(): ControllerStats {
  return {
    registrations: 0, brokerCrashes: 0, controlledShutdowns: 0, fencedBySession: 0, notControllerReplies: 0,
    requestTimeouts: 0, alterPartitionAccepted: 0, alterPartitionRejectedStale: 0, alterPartitionRejectedOther: 0,
    topicsCreated: 0, topicsDeleted: 0, partitionsAdded: 0, reassignmentsStarted: 0, reassignmentsCancelled: 0,
    preferredElections: 0, producerIdBlocks: 0, unregistrations: 0, configChanges: 0,
  };
}

export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)] as T;
}

/** Runs `act` every [minMs, maxMs] while `alive()` holds. */
export function every(queue: EventQueue, rng: Rng, minMs: number, maxMs: number, label: string, alive: () => boolean, act: () => void): void {
  queue.schedule(rng.range(minMs, maxMs), label, () => {
    if (!alive()) return;
    act();
    every(queue, rng, minMs, maxMs, label, alive, act);
  });
}

/**
 * Where a client sends its next request after `reply` from `from`: the same
 * controller after an answer (even "busy"), the leader a NOT_CONTROLLER
 * names, else (no hint, or a timeout: undefined) another one at random.
 */
export function nextController(env: ActorEnv, rng: Rng, from: NodeId, reply: ControllerReply | undefined): NodeId {
  const others = env.controllers.filter((c) => c !== from);
  const elsewhere = (): NodeId => (others.length > 0 ? pick(rng, others) : from);
  if (reply === undefined) {
    env.stats.requestTimeouts++;
    return elsewhere();
  }
  if (reply.ok || reply.error === 'REQUEST_TIMED_OUT') return from;
  env.stats.notControllerReplies++;
  return reply.controllerId > 0 ? reply.controllerId : elsewhere();
}

/** Keeps the newer of two images: a broker's metadata never goes back. */
export function newer(mine: MetadataImage, fetched: MetadataImage | undefined): MetadataImage {
  return fetched !== undefined && fetched.offset > mine.offset ? fetched : mine;
}
