// A simulated broker, as the controller sees one: it registers (a new
// incarnation id on every start), heartbeats every heartbeatIntervalMs to the
// controller it believes active (following NOT_CONTROLLER hints), reports the
// offset of the metadata image it has, may ask for a controlled shutdown, and
// — as partition leader — asks to shrink or expand ISRs with the epochs of its
// own, possibly stale, image. It holds no partition data.
//
// Its metadata image stands for a Raft observer fetching the metadata log:
// every few ms it looks at the image of a random live controller node and
// keeps it if newer, so it is caught up after a delay and never goes back.
//
// It also asks for producer id blocks now and then (as InitProducerId does).
//
// Invariants: at most one heartbeat/registration, one AlterPartition and one
// producer id request in flight; replies to an older incarnation are ignored (the generation check);
// every AlterPartition the controller accepts is audited against the
// committed partition history.

import type { HeartbeatResponse, RegisterBrokerResponse } from '../../../src/controller/cluster-control.js';
import type { ProducerIdBlock } from '../../../src/controller/config-control.js';
import type { AlterPartitionRequest } from '../../../src/controller/decisions/alter-partition.js';
import type { AlterPartitionResult } from '../../../src/controller/replication-control.js';
import { MetadataImage, type PartitionRegistration } from '../../../src/metadata/image.js';
import type { NodeId } from '../../../src/raft/types.js';
import { Errors } from '../../../src/util/errors.js';
import type { Rng } from '../../../src/util/rng.js';
import { InvariantViolation } from '../invariants.js';
import { every, newer, nextController, pick, type ActorEnv } from './actor-env.js';
import type { ControllerReply, ControllerRequest, RpcClient } from './rpc.js';

export interface BrokerTiming {
  readonly heartbeatIntervalMs: number;
  readonly fetchIntervalMaxMs: number;
  readonly alterIntervalMaxMs: number;
  /** Probability that an AlterPartition is built on the previous image instead of the latest. */
  readonly staleAlterRate: number;
  /** Whether it sends AlterPartition requests at all. */
  readonly alters: boolean;
}

const STALE_ERRORS: ReadonlySet<number> = new Set([
  Errors.FENCED_LEADER_EPOCH.code, Errors.INVALID_UPDATE_VERSION.code, Errors.NOT_LEADER_OR_FOLLOWER.code,
  Errors.STALE_BROKER_EPOCH.code, Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
]);

export class SimBroker {
  up = false;
  incarnations = 0;
  brokerEpoch = -1;
  image: MetadataImage = MetadataImage.EMPTY;
  private previousImage: MetadataImage = MetadataImage.EMPTY;
  private wantShutdown = false;
  private incarnationId = '';
  private generation = 0;
  private controller: NodeId;
  private heartbeatInFlight = false;
  private alterInFlight = false;
  private producerIdsInFlight = false;

  constructor(
    readonly brokerId: number,
    private readonly env: ActorEnv,
    private readonly client: RpcClient,
    private readonly rng: Rng,
    private readonly timing: BrokerTiming,
  ) {
    this.controller = pick(rng, env.controllers);
  }

  /** Starts a new incarnation (first start, or a restart after a crash or shutdown). */
  start(): void {
    if (this.up) return;
    this.up = true;
    this.generation++;
    this.incarnationId = `b${this.brokerId}-${++this.incarnations}`;
    this.brokerEpoch = -1;
    this.wantShutdown = false;
    this.heartbeatInFlight = false;
    this.alterInFlight = false;
    this.producerIdsInFlight = false;
    this.env.note(`broker ${this.brokerId} starts as ${this.incarnationId}`);
    const gen = this.generation;
    const alive = (): boolean => this.up && this.generation === gen;
    const t = this.timing;
    every(this.env.queue, this.rng, 1, t.fetchIntervalMaxMs, `b${this.brokerId} fetch`, alive, () => this.fetchMetadata());
    every(this.env.queue, this.rng, t.heartbeatIntervalMs, t.heartbeatIntervalMs, `b${this.brokerId} heartbeat`, alive, () => this.heartbeat());
    every(this.env.queue, this.rng, 100, 1500, `b${this.brokerId} producer ids`, alive, () => this.allocateProducerIds());
    if (t.alters) every(this.env.queue, this.rng, 10, t.alterIntervalMaxMs, `b${this.brokerId} alter`, alive, () => this.alterPartition());
  }

  /** The process dies: no more requests, nothing in flight will be read. */
  crash(): void {
    if (!this.up) return;
    this.up = false;
    this.generation++;
    this.client.reset();
    this.env.note(`broker ${this.brokerId} (${this.incarnationId}) stops`);
  }

  requestShutdown(): void {
    if (!this.up || this.brokerEpoch < 0 || this.wantShutdown) return;
    this.wantShutdown = true;
    this.env.note(`broker ${this.brokerId} asks for a controlled shutdown`);
  }

  /** Sends one request; `onReply` runs only if this incarnation is still up. */
  private call(request: ControllerRequest, onReply: (reply: ControllerReply | undefined, to: NodeId) => void): void {
    const gen = this.generation;
    const to = this.controller;
    this.client.call(to, request, (reply) => {
      if (gen !== this.generation) return;
      this.controller = nextController(this.env, this.rng, to, reply);
      onReply(reply, to);
    });
  }

  private fetchMetadata(): void {
    const fetched = newer(this.image, this.env.imageOf(pick(this.rng, this.env.controllers)));
    if (fetched === this.image) return;
    this.previousImage = this.image;
    this.image = fetched;
  }

  // ------------------------------------------------------------ registration and heartbeats

  private heartbeat(): void {
    if (this.heartbeatInFlight) return;
    this.heartbeatInFlight = true;
    if (this.brokerEpoch < 0) return this.register();
    const req = { brokerId: this.brokerId, brokerEpoch: this.brokerEpoch, currentMetadataOffset: this.image.offset, wantShutdown: this.wantShutdown };
    this.call({ kind: 'heartbeat', req }, (reply) => {
      this.heartbeatInFlight = false;
      if (reply?.ok === true) this.onHeartbeat(reply.response as HeartbeatResponse);
    });
  }

  private register(): void {
    const req = {
      brokerId: this.brokerId, incarnationId: this.incarnationId, clusterId: this.env.clusterId,
      endpoints: [{ name: 'CLIENT', url: `ws://broker-${this.brokerId}:9092` }], rack: null,
    };
    this.call({ kind: 'register', req }, (reply) => {
      this.heartbeatInFlight = false;
      if (reply?.ok !== true) return;
      const resp = reply.response as RegisterBrokerResponse;
      if (resp.error !== null) {
        throw new InvariantViolation('broker registration', `broker ${this.brokerId} ${this.incarnationId} refused: ${resp.error.name} ${resp.message}`);
      }
      this.brokerEpoch = resp.brokerEpoch;
      this.env.stats.registrations++;
      this.env.note(`broker ${this.brokerId} registered ${this.incarnationId} with epoch ${resp.brokerEpoch}`);
    });
  }

  private onHeartbeat(resp: HeartbeatResponse): void {
    if (resp.error !== null) {
      // The registration this epoch names is gone or replaced: register again.
      if (resp.error.code === Errors.STALE_BROKER_EPOCH.code) this.brokerEpoch = -1;
      return;
    }
    if (this.wantShutdown && resp.shouldShutdown) {
      this.env.stats.controlledShutdowns++;
      this.crash();
      this.env.queue.schedule(this.rng.range(50, 800), `b${this.brokerId} restart after shutdown`, () => this.start());
    }
  }

  /** Asks for a block of producer ids (as InitProducerId needs them). */
  private allocateProducerIds(): void {
    if (this.producerIdsInFlight || this.brokerEpoch < 0) return;
    this.producerIdsInFlight = true;
    this.call({ kind: 'allocateProducerIds', brokerId: this.brokerId, brokerEpoch: this.brokerEpoch }, (reply) => {
      this.producerIdsInFlight = false;
      const block = reply?.ok === true ? (reply.response as ProducerIdBlock) : undefined;
      if (block === undefined || block.error !== null) return;
      this.env.producerIds.handedOut(this.brokerId, block.firstProducerId, block.size);
      this.env.stats.producerIdBlocks++;
    });
  }

  // ------------------------------------------------------------ AlterPartition

  private alterPartition(): void {
    if (this.alterInFlight || this.brokerEpoch < 0) return;
    const source = this.rng.chance(this.timing.staleAlterRate) ? this.previousImage : this.image;
    const led: [string, number, PartitionRegistration][] = [];
    for (const t of source.topicsById.values()) {
      for (const [p, reg] of t.partitions) if (reg.leader === this.brokerId) led.push([t.topicId, p, reg]);
    }
    if (led.length === 0) return;
    const [topicId, partition, reg] = pick(this.rng, led);
    const newIsr = this.wantedIsr(reg);
    if (newIsr === undefined) return;
    const req: AlterPartitionRequest = {
      brokerId: this.brokerId, brokerEpoch: this.brokerEpoch, topicId, partition,
      leaderEpoch: reg.leaderEpoch, partitionEpoch: reg.partitionEpoch, newIsr,
    };
    this.alterInFlight = true;
    this.call({ kind: 'alterPartition', req }, (reply) => {
      this.alterInFlight = false;
      if (reply?.ok === true) this.onAlterPartition(req, reply.response as AlterPartitionResult);
    });
  }

  /** Expand by a replica outside the ISR, or shrink by a follower in it. */
  private wantedIsr(reg: PartitionRegistration): number[] | undefined {
    const missing = reg.replicas.filter((b) => !reg.isr.includes(b));
    const followers = reg.isr.filter((b) => b !== this.brokerId);
    const expand = missing.length > 0 && (followers.length === 0 || this.rng.chance(0.6));
    if (expand) return [...reg.isr, pick(this.rng, missing)];
    if (followers.length === 0) return undefined;
    const out = pick(this.rng, followers);
    return reg.isr.filter((b) => b !== out);
  }

  private onAlterPartition(req: AlterPartitionRequest, resp: AlterPartitionResult): void {
    const stats = this.env.stats;
    if (resp.errorCode === 0) {
      this.env.history.acceptedAlterPartition(req, resp);
      stats.alterPartitionAccepted++;
    } else if (STALE_ERRORS.has(resp.errorCode)) {
      stats.alterPartitionRejectedStale++;
    } else {
      stats.alterPartitionRejectedOther++;
    }
  }
}
