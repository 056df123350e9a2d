// The simulated admin client: one request at a time to the controller it
// believes active (following NOT_CONTROLLER hints), chosen at random from
// create topics (RF 1..3, 1..4 partitions or the cluster defaults, some with
// unclean.leader.election.enable=true), add partitions, delete topics,
// start or cancel reassignments, preferred-leader elections, config changes
// (topic retention; cluster defaults and auto.leader.rebalance.enable — never
// unclean.leader.election.enable after creation, so the unclean-election
// check knows each topic's setting) and broker unregistration. Topic names
// come from a small pool so deleted names are created again (with new ids).
// Like a broker it keeps a fetched, possibly stale, metadata image to choose
// its targets; a request built on a stale image just gets its error.
//
// createUntilDone() is the heal phase's probe: it retries one CreateTopics
// until the controller answers it (an earlier attempt whose reply was lost
// shows up as TOPIC_ALREADY_EXISTS).

import type { CreatableTopic, CreatedTopic, ItemError } from '../../../src/controller/replication-control.js';
import { MetadataImage } from '../../../src/metadata/image.js';
import type { NodeId } from '../../../src/raft/types.js';
import { Errors } from '../../../src/util/errors.js';
import type { Rng } from '../../../src/util/rng.js';
import { every, newer, nextController, pick, type ActorEnv } from './actor-env.js';
import type { ControllerReply, ControllerRequest, RpcClient } from './rpc.js';

export interface AdminTiming {
  readonly actIntervalMaxMs: number;
  readonly topicNames: number;
  readonly partitionsMax: number;
}

type Action = (image: MetadataImage) => ControllerRequest | undefined;

export class SimAdmin {
  image: MetadataImage = MetadataImage.EMPTY;
  private controller: NodeId;
  private inFlight = false;
  private running = false;

  constructor(
    private readonly env: ActorEnv,
    private readonly client: RpcClient,
    private readonly rng: Rng,
    private readonly timing: AdminTiming,
  ) {
    this.controller = pick(rng, env.controllers);
  }

  start(): void {
    this.running = true;
    const alive = (): boolean => this.running;
    every(this.env.queue, this.rng, 1, 40, 'admin fetch', alive, () => {
      this.image = newer(this.image, this.env.imageOf(pick(this.rng, this.env.controllers)));
    });
    every(this.env.queue, this.rng, 10, this.timing.actIntervalMaxMs, 'admin', alive, () => this.act());
  }

  stop(): void {
    this.running = false;
  }

  /** Sends `request`; `onReply` gets the reply (undefined: timed out). */
  private call(request: ControllerRequest, onReply: (reply: ControllerReply | undefined) => void): void {
    const to = this.controller;
    this.inFlight = true;
    this.client.call(to, request, (reply) => {
      this.inFlight = false;
      this.controller = nextController(this.env, this.rng, to, reply);
      onReply(reply);
    });
  }

  private act(): void {
    if (this.inFlight) return;
    const actions: [number, Action][] = [
      [4, (img) => this.createTopics(img)],
      [2, (img) => this.addPartitions(img)],
      [1.5, (img) => this.deleteTopic(img)],
      [2, (img) => this.reassign(img)],
      [1, (img) => this.electPreferred(img)],
      [1, (img) => this.alterConfigs(img)],
      [0.3, (img) => this.unregister(img)],
    ];
    let r = this.rng.next() * actions.reduce((s, [w]) => s + w, 0);
    const chosen = actions.find(([w]) => (r -= w) < 0)?.[1] ?? actions[0]![1];
    const request = chosen(this.image);
    if (request === undefined) return;
    this.call(request, (reply) => {
      if (reply?.ok === true) this.count(request, reply.response);
    });
  }

  private topicName(): string {
    return `t${this.rng.int(this.timing.topicNames)}`;
  }

  private createTopics(_image: MetadataImage): ControllerRequest {
    const topics = Array.from({ length: this.rng.range(1, 2) }, (): CreatableTopic => ({
      name: this.topicName(),
      numPartitions: this.rng.chance(0.1) ? -1 : this.rng.range(1, 4),
      replicationFactor: this.rng.chance(0.1) ? -1 : this.rng.range(1, 3),
      configs: this.rng.chance(0.3) ? { 'unclean.leader.election.enable': 'true' } : {},
    }));
    return { kind: 'createTopics', topics };
  }

  private addPartitions(image: MetadataImage): ControllerRequest | undefined {
    const topics = [...image.topicsByName.values()].filter((t) => t.partitions.size < this.timing.partitionsMax);
    if (topics.length === 0) return undefined;
    const t = pick(this.rng, topics);
    return { kind: 'createPartitions', name: t.name, totalCount: t.partitions.size + this.rng.range(1, 2) };
  }

  private deleteTopic(image: MetadataImage): ControllerRequest | undefined {
    const names = [...image.topicsByName.keys()];
    return names.length === 0 ? undefined : { kind: 'deleteTopics', names: [pick(this.rng, names)] };
  }

  private reassign(image: MetadataImage): ControllerRequest | undefined {
    const parts = [...image.topicsByName.values()].flatMap((t) => [...t.partitions].map(([p, reg]) => ({ topic: t.name, partition: p, reg })));
    const brokers = [...image.brokers.keys()];
    if (parts.length === 0 || brokers.length === 0) return undefined;
    const { topic, partition, reg } = pick(this.rng, parts);
    if (reg.addingReplicas.length > 0 && this.rng.chance(0.3)) {
      return { kind: 'alterReassignments', items: [{ topic, partition, replicas: null }] };
    }
    const size = Math.min(brokers.length, this.rng.range(1, 3));
    const target: number[] = [];
    while (target.length < size) {
      const b = pick(this.rng, brokers);
      if (!target.includes(b)) target.push(b);
    }
    return { kind: 'alterReassignments', items: [{ topic, partition, replicas: target }] };
  }

  private electPreferred(image: MetadataImage): ControllerRequest {
    const parts = [...image.topicsByName.values()].flatMap((t) => [...t.partitions.keys()].map((partition) => ({ topic: t.name, partition })));
    if (parts.length === 0 || this.rng.chance(0.3)) return { kind: 'electLeaders', partitions: null };
    return { kind: 'electLeaders', partitions: [pick(this.rng, parts)] };
  }

  /** Harmless topic settings, or cluster defaults that change what later commands decide. */
  private alterConfigs(image: MetadataImage): ControllerRequest {
    const topics = [...image.topicsByName.keys()];
    if (topics.length > 0 && this.rng.chance(0.5)) {
      const set = { 'retention.ms': String(this.rng.range(1, 100) * 60_000) };
      return { kind: 'alterConfigs', resources: [{ resourceType: 'topic', resourceName: pick(this.rng, topics), set, delete: [] }] };
    }
    const [name, value] = pick(this.rng, [
      ['auto.leader.rebalance.enable', this.rng.chance(0.5) ? 'true' : 'false'],
      ['num.partitions', String(this.rng.range(1, 3))],
      ['default.replication.factor', String(this.rng.range(1, 3))],
    ] as const);
    return { kind: 'alterConfigs', resources: [{ resourceType: 'cluster', resourceName: '', set: { [name]: value }, delete: [] }] };
  }

  /** Decommissions a broker, a fenced one when there is one (a live one re-registers). */
  private unregister(image: MetadataImage): ControllerRequest | undefined {
    const brokers = [...image.brokers.values()];
    if (brokers.length === 0) return undefined;
    const fenced = brokers.filter((b) => b.fenced);
    return { kind: 'unregisterBroker', brokerId: pick(this.rng, fenced.length > 0 ? fenced : brokers).brokerId };
  }

  private count(request: ControllerRequest, response: unknown): void {
    const okItems = (): number => (response as ItemError[]).filter((i) => i.errorCode === 0).length;
    const s = this.env.stats;
    switch (request.kind) {
      case 'createTopics':
        s.topicsCreated += okItems();
        break;
      case 'createPartitions':
        if ((response as ItemError).errorCode === 0) s.partitionsAdded++;
        break;
      case 'deleteTopics':
        s.topicsDeleted += okItems();
        break;
      case 'alterReassignments':
        if (request.items[0]?.replicas === null) s.reassignmentsCancelled += okItems();
        else s.reassignmentsStarted += okItems();
        break;
      case 'electLeaders':
        s.preferredElections += okItems();
        break;
      case 'alterConfigs':
        s.configChanges += okItems();
        break;
      case 'unregisterBroker':
        if ((response as { error: unknown }).error === null) s.unregistrations++;
        break;
      default:
        break;
    }
  }

  /**
   * Retries CreateTopics(name) until the controller answers it; `done` gets
   * the topic id (null when an earlier, unanswered attempt had created it).
   */
  createUntilDone(name: string, done: (topicId: string | null) => void): void {
    const request: ControllerRequest = { kind: 'createTopics', topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: {} }] };
    const attempt = (): void => {
      if (this.inFlight) return void this.env.queue.schedule(5, 'admin heal create (busy)', attempt);
      this.call(request, (reply) => {
        const created = reply?.ok === true ? (reply.response as CreatedTopic[])[0] : undefined;
        if (created?.errorCode === 0) return done(created.topicId);
        if (created?.errorCode === Errors.TOPIC_ALREADY_EXISTS.code) return done(null);
        this.env.queue.schedule(20, 'admin heal create (retry)', attempt);
      });
    };
    attempt();
  }
}
