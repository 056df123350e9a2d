// A broker's life as the controller sees it (Kafka's BrokerLifecycleManager):
//
//   starting ──register ok──▶ fenced (catching up) ──heartbeat: caught up──▶ running
//   running ──heartbeat says fenced (session lost)──▶ fenced (re-register if the epoch is stale)
//   any ──shutdown()──▶ shuttingDown ──heartbeat: shouldShutdown──▶ stopped
//
// It registers with a fresh incarnation id, then heartbeats every
// heartbeatIntervalMs with the metadata offset this broker has applied, so
// the controller unfences it only once its metadata image has caught up with
// its own registration. A STALE_BROKER_EPOCH answer (the controller forgot
// this incarnation, e.g. it was unregistered) leads to a new registration.
// Controlled shutdown asks with wantShutdown until the controller has moved
// every leadership away (shouldShutdown) or shutdownTimeoutMs passes.
//
// Fast failover (docs/replication.md, "Failover"): every heartbeat also
// names the brokers this broker's replica fetchers cannot reach right now
// (leaderLink(), fed by the fetchers' onLeaderLink). When a leader becomes
// unreachable the next heartbeat goes at once rather than after the
// interval, so the controller hears of a dead leader within a round trip
// and can fence it as soon as its own heartbeat stream from it has been
// silent for broker.suspect.timeout.ms.
//
// The controller is reached through `call` (QuorumClient.controller in a
// server, which follows NOT_CONTROLLER hints); errors of one heartbeat are
// logged and the next one retries, so a controller failover only delays it.
// Every timer — the heartbeat and the shutdown deadline — runs on the injected
// Scheduler, so a simulation can pause, delay or speed up a broker's beats.

import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import type { Scheduler } from '../util/clock.js';
import { Errors } from '../util/errors.js';
import type { Endpoint } from '../metadata/records.js';

export type BrokerState = 'starting' | 'fenced' | 'running' | 'shuttingDown' | 'stopped';

export type ControllerCall = <T>(api: string, body: Record<string, unknown>) => Promise<T>;

export interface BrokerLifecycleOptions {
  readonly brokerId: number;
  readonly clusterId: string;
  readonly endpoints: readonly Endpoint[];
  readonly rack: string | null;
  readonly call: ControllerCall;
  /** The metadata offset this broker has applied (its image's offset). */
  readonly metadataOffset: () => number;
  readonly rng: Rng;
  /** Arms the heartbeat and the shutdown deadline. */
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly heartbeatIntervalMs?: number;
  readonly shutdownTimeoutMs?: number;
}

interface RegisterAnswer { errorCode: number; errorMessage?: string | null; brokerEpoch?: number }
interface HeartbeatAnswer { errorCode: number; errorMessage?: string | null; isFenced?: boolean; isCaughtUp?: boolean; shouldShutdown?: boolean }

export class BrokerLifecycle {
  private stateNow: BrokerState = 'starting';
  private brokerEpoch = -1;
  private incarnationId: string;
  /** Cancels the armed heartbeat (undefined: none armed). */
  private cancelBeat: (() => void) | undefined;
  private readonly waiters: Array<{ state: BrokerState; resolve: () => void }> = [];
  private beating = false;
  /** A heartbeat is owed as soon as the one in flight ends (a leader became unreachable meanwhile). */
  private beatAgain = false;
  /**
   * Leader id → how many of this broker's fetchers report it unreachable. A
   * count, not a flag: a fetcher replaced for a new URL may withdraw its
   * report after its successor made one.
   */
  private readonly unreachableLeaders = new Map<number, number>();

  constructor(private readonly opts: BrokerLifecycleOptions) {
    this.incarnationId = newIncarnationId(opts.rng);
  }

  get state(): BrokerState {
    return this.stateNow;
  }

  get epoch(): number {
    return this.brokerEpoch;
  }

  /** Starts registering and heartbeating. */
  start(): void {
    this.schedule(0);
  }

  /** Resolves when the broker reaches `state` (e.g. 'running' once unfenced). */
  when(state: BrokerState): Promise<void> {
    if (this.stateNow === state) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ state, resolve }));
  }

  /** Controlled shutdown: resolves once the controller let go (or the timeout passed). */
  async shutdown(): Promise<void> {
    if (this.stateNow === 'stopped') return;
    const registered = this.brokerEpoch >= 0;
    this.setState('shuttingDown');
    if (!registered) return this.stop();
    this.schedule(0);
    let cancelTimeout = (): void => undefined;
    await Promise.race([
      this.when('stopped'),
      new Promise<void>((r) => {
        cancelTimeout = this.opts.scheduler.schedule(this.opts.shutdownTimeoutMs ?? 10_000, r);
      }),
    ]);
    cancelTimeout();
    if ((this.stateNow as BrokerState) !== 'stopped') this.opts.logger.warn('controlled shutdown timed out; stopping anyway');
    this.stop();
  }

  /** A replica fetcher's link to `leaderId` went down (false) or answers again (true). */
  leaderLink(leaderId: number, reachable: boolean): void {
    const n = (this.unreachableLeaders.get(leaderId) ?? 0) + (reachable ? -1 : 1);
    if (n > 0) this.unreachableLeaders.set(leaderId, n);
    else this.unreachableLeaders.delete(leaderId);
    if (reachable || n !== 1 || this.brokerEpoch < 0 || this.stateNow === 'stopped') return;
    // Tell the controller now: it fences a dead leader only once it has heard from a peer.
    if (this.beating) this.beatAgain = true;
    else this.schedule(0);
  }

  /** The brokers this broker's heartbeats report unreachable, in id order. */
  get unreachableBrokers(): number[] {
    return [...this.unreachableLeaders.keys()].sort((a, b) => a - b);
  }

  /** Stops heartbeating at once (a crash-like stop; the session will expire). */
  stop(): void {
    this.cancelBeat?.();
    this.cancelBeat = undefined;
    this.setState('stopped');
  }

  private schedule(delayMs: number): void {
    if (this.stateNow === 'stopped') return;
    this.cancelBeat?.();
    this.cancelBeat = this.opts.scheduler.schedule(delayMs, () => {
      this.cancelBeat = undefined;
      void this.beat();
    });
  }

  private async beat(): Promise<void> {
    if (this.beating || this.stateNow === 'stopped') return;
    this.beating = true;
    try {
      if (this.brokerEpoch < 0) await this.register();
      else await this.heartbeat();
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message }, 'controller unreachable; retrying');
    } finally {
      this.beating = false;
    }
    const again = this.beatAgain;
    this.beatAgain = false;
    this.schedule(again ? 0 : this.opts.heartbeatIntervalMs ?? 500);
  }

  private async register(): Promise<void> {
    const a = await this.opts.call<RegisterAnswer>('registerBroker', {
      brokerId: this.opts.brokerId, incarnationId: this.incarnationId, clusterId: this.opts.clusterId,
      endpoints: this.opts.endpoints.map((e) => ({ ...e })), rack: this.opts.rack,
    });
    if (a.errorCode !== 0 || a.brokerEpoch === undefined) {
      this.opts.logger.error({ errorCode: a.errorCode, error: a.errorMessage }, 'broker registration refused');
      return;
    }
    this.brokerEpoch = a.brokerEpoch;
    if (this.stateNow === 'starting') this.setState('fenced');
    this.opts.logger.info({ brokerEpoch: a.brokerEpoch, incarnationId: this.incarnationId }, 'broker registered');
  }

  private async heartbeat(): Promise<void> {
    const shutting = this.stateNow === 'shuttingDown';
    const a = await this.opts.call<HeartbeatAnswer>('brokerHeartbeat', {
      brokerId: this.opts.brokerId, brokerEpoch: this.brokerEpoch, currentMetadataOffset: this.opts.metadataOffset(), wantShutdown: shutting,
      unreachableBrokers: this.unreachableBrokers,
    });
    if (a.errorCode === Errors.STALE_BROKER_EPOCH.code) {
      this.opts.logger.warn('the controller does not know this registration; registering again');
      this.brokerEpoch = -1;
      this.incarnationId = newIncarnationId(this.opts.rng);
      if (!shutting) this.setState('starting');
      return;
    }
    if (a.errorCode !== 0) {
      this.opts.logger.warn({ errorCode: a.errorCode, error: a.errorMessage }, 'heartbeat refused');
      return;
    }
    if (shutting) {
      if (a.shouldShutdown) this.setState('stopped');
      return;
    }
    this.setState(a.isFenced ? 'fenced' : 'running');
  }

  private setState(next: BrokerState): void {
    if (next === this.stateNow) return;
    if (this.stateNow === 'stopped') return;
    this.opts.logger.info({ from: this.stateNow, to: next }, 'broker state');
    this.stateNow = next;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.state === next) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }
}

function newIncarnationId(rng: Rng): string {
  let id = '';
  for (let i = 0; i < 4; i++) id += rng.int(0x10000).toString(16).padStart(4, '0');
  return id;
}
