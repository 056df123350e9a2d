// The consumer's group membership loop (src/client/consumer-group.ts) on
// simulated time: the real GroupMembership, CoordinatorLink, BrokerConnection
// and Client, talking through a stub link to the brokers' real pure group
// state machine (src/groups/membership/group.ts), all on one ManualScheduler.
// No sockets and no sleeping: the test moves time and checks the timing the
// loop promises — heartbeats every heartbeatIntervalMs, a rebalance picked
// up at the next heartbeat, a member cut off for longer than its session
// expired and rejoining with a fresh id — and that one seed gives one
// schedule (backoff jitter comes from the client's injected Rng).

import '../../src/node.js';
import { expect } from 'chai';
import { Client, type TopicInfo } from '../../src/client/client.js';
import { BrokerConnection, type RequestLink } from '../../src/client/broker-connection.js';
import { CoordinatorLink } from '../../src/client/consumer-coordinator.js';
import { GroupMembership, type GroupJoinEvent, type MembershipHost } from '../../src/client/consumer-group.js';
import type { TopicPartition } from '../../src/client/consumer-fetcher.js';
import { resolveConsumerOptions } from '../../src/client/consumer-options.js';
import { Group } from '../../src/groups/membership/group.js';
import type { GroupOutput } from '../../src/groups/membership/types.js';
import { GROUP_DEFAULTS } from '../../src/groups/defaults.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { Errors, SluiceError } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';

const GROUP = 'g';
const TOPIC = 't';
const SESSION_MS = 10_000;
const HEARTBEAT_MS = 3_000;
/** Time moves in steps this long; between steps every callback and promise continuation runs. */
const STEP_MS = 50;

/** Drains promise continuations (everything here is in memory: no I/O to wait for). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

/**
 * The broker's side: one pure Group behind a RequestLink, with the timer and
 * pending answers the broker's GroupCoordinator shell keeps — minus the log
 * (a group write is acknowledged at once). `reachable` false refuses every
 * request with NETWORK_EXCEPTION, as a lost connection would.
 */
class StubCoordinator {
  readonly group: Group;
  readonly requests: Array<{ api: string; atMs: number; memberId: string; generationId: number }> = [];
  reachable = true;
  /** Refuse this many JoinGroups with COORDINATOR_LOAD_IN_PROGRESS (retriable: the client backs off). */
  loadingJoins = 0;
  private readonly pending = new Map<number, (body: unknown) => void>();
  private nextToken = 1;
  private cancelTimer: (() => void) | null = null;

  constructor(private readonly scheduler: ManualScheduler, seed: number) {
    this.group = new Group(GROUP, { clock: scheduler.clock, rng: new SeededRng(seed), limits: GROUP_DEFAULTS });
  }

  link(): RequestLink {
    return {
      url: 'ws://coordinator', isOpen: true,
      request: <T>(apiKey: number, _version: number, body: object) => this.handle(apiKey, body as Record<string, unknown>) as Promise<T>,
      send: () => Promise.reject(new Error('no one-way requests here')),
      onClose: () => undefined,
      close: () => undefined,
    };
  }

  heartbeatsOf(memberId: string): number[] {
    return this.requests.filter((r) => r.api === 'Heartbeat' && r.memberId === memberId).map((r) => r.atMs);
  }

  private handle(apiKey: number, body: Record<string, unknown>): Promise<unknown> {
    const api = ApiKey[apiKey] ?? String(apiKey);
    this.requests.push({ api, atMs: this.scheduler.clock.monotonicMs(), memberId: String(body.memberId ?? ''), generationId: Number(body.generationId ?? -1) });
    if (!this.reachable) return Promise.reject(new SluiceError(Errors.NETWORK_EXCEPTION, 'the coordinator is unreachable'));
    switch (apiKey) {
      case ApiKey.JoinGroup: {
        if (this.loadingJoins > 0) {
          this.loadingJoins--;
          return Promise.resolve({ errorCode: Errors.COORDINATOR_LOAD_IN_PROGRESS.code, errorMessage: 'loading', generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: '', skipAssignment: false, members: [] });
        }
        const protocols = (body.protocols as Array<{ name: string; metadata: Uint8Array }>).map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) }));
        return this.parked((token) => this.group.join(token, {
          memberId: body.memberId as string, groupInstanceId: null, clientId: 'test', clientHost: '/sim',
          sessionTimeoutMs: body.sessionTimeoutMs as number, rebalanceTimeoutMs: body.rebalanceTimeoutMs as number,
          protocolType: body.protocolType as string, protocols,
        }));
      }
      case ApiKey.SyncGroup:
        return this.parked((token) => this.group.sync(token, {
          memberId: body.memberId as string, groupInstanceId: null, generationId: body.generationId as number,
          assignments: (body.assignments as Array<{ memberId: string; assignment: Uint8Array }>).map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) })),
        }));
      case ApiKey.Heartbeat: {
        const refused = this.group.heartbeat({ memberId: body.memberId as string, groupInstanceId: null, generationId: body.generationId as number });
        this.rearm();
        return Promise.resolve(refused ? { errorCode: refused.error.code, errorMessage: refused.message } : { errorCode: 0, errorMessage: null });
      }
      default:
        return Promise.reject(new Error(`unexpected ${api}`));
    }
  }

  private parked(call: (token: number) => GroupOutput[]): Promise<unknown> {
    const token = this.nextToken++;
    const answer = new Promise<unknown>((resolve) => this.pending.set(token, resolve));
    this.dispatch(call(token));
    return answer;
  }

  private dispatch(outputs: readonly GroupOutput[]): void {
    for (const o of outputs) {
      if (o.kind === 'persist') {
        this.dispatch(this.group.persisted(o.seq, null));
        continue;
      }
      const resolve = this.pending.get(o.token);
      this.pending.delete(o.token);
      resolve?.(o.response);
    }
    this.rearm();
  }

  /** One timer at the group's next deadline, as the coordinator shell keeps. */
  private rearm(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    const at = this.group.nextDeadlineMs();
    if (at === null) return;
    this.cancelTimer = this.scheduler.schedule(Math.max(0, at - this.scheduler.clock.monotonicMs()), () => {
      this.cancelTimer = null;
      this.dispatch(this.group.tick());
    });
  }
}

const TOPIC_INFO: TopicInfo = {
  name: TOPIC, topicId: 'topic-id',
  partitions: [0, 1, 2, 3].map((partition) => ({ partition, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [], errorCode: 0 })),
};

/** One consumer's membership with a host that records what it is told. */
class Member {
  readonly client: Client;
  readonly membership: GroupMembership;
  readonly joins: GroupJoinEvent[] = [];
  readonly lost: TopicPartition[][] = [];
  readonly fatal: SluiceError[] = [];
  owned: TopicPartition[] = [];

  constructor(coordinator: StubCoordinator, scheduler: ManualScheduler, seed: number) {
    this.client = new Client({
      bootstrap: 'ws://coordinator', clock: scheduler.clock, scheduler, rng: new SeededRng(seed),
      webSocketFactory: () => { throw new Error('no sockets in this test'); },
    });
    // The leader asks the client for partition counts; the metadata is the test's.
    Object.assign(this.client, { topic: async () => TOPIC_INFO });
    const coord = new CoordinatorLink(this.client, GROUP);
    const conn = new BrokerConnection(coordinator.link(), { scheduler });
    Object.assign(coord, { connection: async () => conn });
    const host: MembershipHost = {
      subscribedTopics: async () => [TOPIC],
      assigned: (added) => { this.owned.push(...added); },
      revoke: async (tps) => { this.owned = this.owned.filter((x) => !tps.some((y) => y.topic === x.topic && y.partition === x.partition)); },
      lost: (tps) => { this.lost.push([...tps]); this.owned = []; },
      joined: (e) => { this.joins.push(e); },
      fatal: (err) => { this.fatal.push(err); },
    };
    const opts = resolveConsumerOptions({ groupId: GROUP, sessionTimeoutMs: SESSION_MS, heartbeatIntervalMs: HEARTBEAT_MS, partitionAssigners: ['range'] });
    this.membership = new GroupMembership(this.client, coord, opts, host, this.client.logger);
  }

  get last(): GroupJoinEvent | undefined {
    return this.joins.at(-1);
  }
}

describe('client: group membership on simulated time', () => {
  let scheduler: ManualScheduler;
  let coordinator: StubCoordinator;
  const members: Member[] = [];

  function world(seed = 1): void {
    scheduler = new ManualScheduler();
    coordinator = new StubCoordinator(scheduler, seed);
  }

  function member(seed: number): Member {
    const m = new Member(coordinator, scheduler, seed);
    members.push(m);
    m.membership.start();
    return m;
  }

  /** Moves time `ms` forward in STEP_MS steps, running what each step makes due. */
  async function run(ms: number): Promise<void> {
    await settle();
    for (let t = 0; t < ms; t += STEP_MS) {
      scheduler.advance(Math.min(STEP_MS, ms - t));
      await settle();
    }
  }

  afterEach(async () => {
    for (const m of members.splice(0)) {
      const stopped = m.membership.stop(false);
      await run(STEP_MS);
      await stopped;
      m.client.close();
    }
  });

  it('heartbeats every heartbeatIntervalMs of the client clock and keeps its session for as long as it runs', async () => {
    world();
    const a = member(11);
    await run(STEP_MS);
    expect(a.last, 'joined generation 1').to.include({ generationId: 1, isLeader: true });
    const joinedAtMs = scheduler.clock.monotonicMs();
    await run(60_000);
    const beats = coordinator.heartbeatsOf(a.last!.memberId);
    expect(beats.length, 'one per interval over a minute').to.be.within(19, 20);
    const gaps = beats.slice(1).map((t, i) => t - beats[i]!);
    for (const gap of gaps) expect(gap, 'heartbeat spacing').to.be.within(HEARTBEAT_MS, HEARTBEAT_MS + STEP_MS);
    expect(beats[0]! - joinedAtMs).to.be.at.most(HEARTBEAT_MS);
    expect(a.joins, 'no rebalance while heartbeats flow').to.have.length(1);
    expect(coordinator.group.state).to.equal('Stable');
    expect(a.owned.map((tp) => tp.partition).sort()).to.deep.equal([0, 1, 2, 3]);
  });

  it('learns of a rebalance at its next heartbeat, rejoins, and shares the partitions with the newcomer', async () => {
    world();
    const a = member(11);
    await run(5_000);
    const b = member(12);
    const bStartedMs = scheduler.clock.monotonicMs();
    await run(HEARTBEAT_MS + STEP_MS);
    expect(a.last).to.include({ generationId: 2 });
    expect(b.last).to.include({ generationId: 2 });
    const rejoinedAtMs = coordinator.requests.filter((r) => r.api === 'JoinGroup' && r.memberId === a.last!.memberId).at(-1)!.atMs;
    expect(rejoinedAtMs - bStartedMs, 'a rejoined within one heartbeat interval').to.be.at.most(HEARTBEAT_MS + STEP_MS);
    expect([...a.owned, ...b.owned].map((tp) => tp.partition).sort()).to.deep.equal([0, 1, 2, 3]);
    expect(a.owned).to.have.length(2);
    expect(b.owned).to.have.length(2);
  });

  it('cut off for longer than its session, loses its partitions and rejoins under a fresh member id', async () => {
    world();
    const a = member(11);
    await run(HEARTBEAT_MS + STEP_MS);
    const firstId = a.last!.memberId;
    const lastHeardMs = coordinator.heartbeatsOf(firstId).at(-1)!;
    coordinator.reachable = false;
    await run(lastHeardMs + SESSION_MS - STEP_MS - scheduler.clock.monotonicMs());
    expect(coordinator.group.describe().members.map((m) => m.memberId), 'not yet expired').to.deep.equal([firstId]);
    await run(HEARTBEAT_MS);
    expect(coordinator.group.describe().members, 'expired by the coordinator').to.deep.equal([]);
    expect(a.owned, 'the client does not know yet').to.have.length(4);
    coordinator.reachable = true;
    await run(2 * HEARTBEAT_MS + 5_000);
    expect(a.lost, 'told UNKNOWN_MEMBER_ID: its partitions were lost, not revoked').to.have.length(1);
    expect(a.last!.memberId).to.not.equal(firstId);
    expect(a.last!.generationId).to.be.greaterThan(1);
    expect(a.owned).to.have.length(4);
    expect(a.fatal).to.deep.equal([]);
  });

  it('replays the same request schedule from the same seeds; backoff jitter comes from the client rng', async () => {
    const trace = async (clientSeed: number): Promise<string> => {
      world(5);
      coordinator.loadingJoins = 4;
      const a = member(clientSeed);
      await run(10_000);
      expect(a.last?.generationId, 'joined after the coordinator loaded').to.equal(1);
      const out = coordinator.requests.map((r) => `${r.atMs}:${r.api}:${r.generationId}`).join(' ');
      for (const m of members.splice(0)) {
        const stopped = m.membership.stop(false);
        await run(STEP_MS);
        await stopped;
        m.client.close();
      }
      return out;
    };
    const first = await trace(21);
    expect(await trace(21), 'same seed, same schedule').to.equal(first);
    expect(await trace(22), 'another seed, other backoff delays').to.not.equal(first);
  });
});
