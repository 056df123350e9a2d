// Requests to the controller quorum in the controller simulation, and the
// network they cross. Brokers and the admin client are endpoints next to the
// controller nodes (endpoint ids: controllers 1..5 are their Raft node ids,
// broker b is BROKER_ENDPOINT_BASE + b, the admin is ADMIN_ENDPOINT). Every
// request and reply crosses a SimNetwork of its own (its own fault profile
// and cuts, independent of the Raft network) serialized with msgpackr, so no
// object is shared between the two ends.
//
// A client has at most the requests it sent in flight; each one ends exactly
// once: with the first reply, or with a timeout after requestTimeoutMs (a
// late or duplicated reply is then ignored). A crash of the client forgets
// everything in flight.

import { Packr } from 'msgpackr';
import {
  brokerHeartbeat,
  registerBroker,
  unregisterBroker,
  type HeartbeatRequest,
  type RegisterBrokerRequest,
} from '../../../src/controller/cluster-control.js';
import { allocateProducerIds, alterConfigs, type AlterConfigsResource } from '../../../src/controller/config-control.js';
import type { CommandContext, CommandResult } from '../../../src/controller/context.js';
import type { AlterPartitionRequest } from '../../../src/controller/decisions/alter-partition.js';
import {
  alterPartition,
  alterReassignments,
  createPartitions,
  createTopics,
  deleteTopics,
  electPreferredLeaders,
  type CreatableTopic,
  type ReassignmentItem,
  type TopicPartition,
} from '../../../src/controller/replication-control.js';
import type { Rng } from '../../../src/util/rng.js';
import type { EventQueue } from '../event-queue.js';
import { SimNetwork, type NetworkFaults } from '../sim-network.js';

export type Endpoint = number;
export const BROKER_ENDPOINT_BASE = 100;
export const ADMIN_ENDPOINT = 200;

export type ControllerRequest =
  | { readonly kind: 'register'; readonly req: RegisterBrokerRequest }
  | { readonly kind: 'heartbeat'; readonly req: HeartbeatRequest }
  | { readonly kind: 'alterPartition'; readonly req: AlterPartitionRequest }
  | { readonly kind: 'createTopics'; readonly topics: readonly CreatableTopic[] }
  | { readonly kind: 'createPartitions'; readonly name: string; readonly totalCount: number }
  | { readonly kind: 'deleteTopics'; readonly names: readonly string[] }
  | { readonly kind: 'alterReassignments'; readonly items: readonly ReassignmentItem[] }
  | { readonly kind: 'electLeaders'; readonly partitions: readonly TopicPartition[] | null }
  | { readonly kind: 'alterConfigs'; readonly resources: readonly AlterConfigsResource[] }
  | { readonly kind: 'allocateProducerIds'; readonly brokerId: number; readonly brokerEpoch: number }
  | { readonly kind: 'unregisterBroker'; readonly brokerId: number };

export type ControllerReply =
  | { readonly ok: true; readonly response: unknown }
  /** NOT_CONTROLLER carries the node's view of the Raft leader (-1: none known). */
  | { readonly ok: false; readonly error: 'NOT_CONTROLLER' | 'REQUEST_TIMED_OUT'; readonly controllerId: number };

export type AnyCommand = (ctx: CommandContext) => CommandResult<unknown>;

/** The pure controller command that serves a request. */
export function commandFor(r: ControllerRequest): AnyCommand {
  switch (r.kind) {
    case 'register':
      return (ctx) => registerBroker(ctx, r.req);
    case 'heartbeat':
      return (ctx) => brokerHeartbeat(ctx, r.req);
    case 'alterPartition':
      return (ctx) => alterPartition(ctx, r.req);
    case 'createTopics':
      return (ctx) => createTopics(ctx, r.topics);
    case 'createPartitions':
      return (ctx) => createPartitions(ctx, r.name, r.totalCount);
    case 'deleteTopics':
      return (ctx) => deleteTopics(ctx, r.names);
    case 'alterReassignments':
      return (ctx) => alterReassignments(ctx, r.items);
    case 'electLeaders':
      return (ctx) => electPreferredLeaders(ctx, r.partitions);
    case 'alterConfigs':
      return (ctx) => alterConfigs(ctx, r.resources);
    case 'allocateProducerIds':
      return (ctx) => allocateProducerIds(ctx, r.brokerId, r.brokerEpoch);
    case 'unregisterBroker':
      return (ctx) => unregisterBroker(ctx, r.brokerId);
  }
}

const packr = new Packr({ useRecords: false, moreTypes: false });

type Receiver = (from: Endpoint, payload: unknown) => void;

export class RpcNetwork {
  readonly net: SimNetwork;
  private readonly receivers = new Map<Endpoint, Receiver>();
  sent = 0;
  dropped = 0;

  constructor(
    private readonly queue: EventQueue,
    rng: Rng,
    faults: NetworkFaults,
    private readonly note: (text: string | (() => string)) => void,
  ) {
    this.net = new SimNetwork(rng, faults);
  }

  listen(endpoint: Endpoint, receiver: Receiver): void {
    this.receivers.set(endpoint, receiver);
  }

  /** Sends `payload` (serialized now, decoded afresh for each delivered copy). */
  send(from: Endpoint, to: Endpoint, what: string, payload: unknown): void {
    this.sent++;
    const delays = this.net.plan(from, to, this.queue.now());
    if (delays.length === 0) {
      this.dropped++;
      this.note(() => `rpc drop ${from}->${to} ${what}`);
      return;
    }
    const bytes = packr.pack(payload);
    for (const d of delays) {
      this.queue.schedule(d, () => `rpc ${from}->${to} ${what}`, () => {
        if (this.net.isCut(from, to)) return this.note('  (lost: link cut)');
        this.receivers.get(to)?.(from, packr.unpack(bytes));
      });
    }
  }
}

export interface RequestEnvelope {
  readonly id: number;
  readonly request: ControllerRequest;
}

export interface ReplyEnvelope {
  readonly id: number;
  readonly reply: ControllerReply;
}

/** One actor's side of the RPCs: request ids, timeouts, late replies. */
export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, (reply: ControllerReply | undefined) => void>();

  constructor(
    readonly endpoint: Endpoint,
    private readonly rpc: RpcNetwork,
    private readonly queue: EventQueue,
    private readonly requestTimeoutMs: number,
  ) {
    rpc.listen(endpoint, (_from, payload) => this.receive(payload as ReplyEnvelope));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends `request` to controller `to`; `done` gets the reply, or undefined on timeout. */
  call(to: Endpoint, request: ControllerRequest, done: (reply: ControllerReply | undefined) => void): void {
    const id = this.nextId++;
    this.pending.set(id, done);
    const envelope: RequestEnvelope = { id, request };
    this.rpc.send(this.endpoint, to, `${request.kind}#${id}`, envelope);
    this.queue.schedule(this.requestTimeoutMs, `timeout ${this.endpoint}#${id}`, () => this.finish(id, undefined));
  }

  /** The actor crashed: nothing in flight will be answered any more. */
  reset(): void {
    this.pending.clear();
  }

  private receive(envelope: ReplyEnvelope): void {
    this.finish(envelope.id, envelope.reply);
  }

  private finish(id: number, reply: ControllerReply | undefined): void {
    const done = this.pending.get(id);
    if (done === undefined) return;
    this.pending.delete(id);
    done(reply);
  }
}
