// Broker liveness as the active controller sees it (pure; time from the
// injected Clock). Two ways a broker stops counting as live:
//
// 1. Session expiry: its last heartbeat is older than
//    broker.session.timeout.ms — the only evidence Kafka uses.
// 2. Corroborated death (fast failover, docs/replication.md "Failover"): the
//    controller has not heard from it for broker.suspect.timeout.ms (its own
//    evidence: two heartbeat intervals went by without one) AND another
//    broker, itself heard from within that time, reports in its heartbeats
//    that its replica fetchers cannot reach it (their links to it failed or
//    their fetches stopped being answered). Neither alone is enough: a
//    broker that still heartbeats is never fenced on a peer's word (an
//    asymmetric cut between two brokers is not a dead leader), and a broker
//    that is merely slow to heartbeat but still serves its followers is left
//    to its session.
//
// Fencing on either is equally safe for acknowledged writes — the rule that
// protects them (a new leader comes from the ISR, and an old leader cannot
// move its high watermark past what that new leader holds) does not depend
// on when the controller decides — so the suspect timeout trades only false
// positives (an early fence of a broker that was alive, which unfences at
// its next heartbeat) against failover time.
//
// On controller failover the new controller starts every deadline afresh and
// with no reports (it cannot know when the old one last heard from a broker,
// or what it was told), so failover never fences a healthy broker instantly.

import type { Clock } from '../../util/clock.js';
import type { BrokerId } from '../../metadata/records.js';

export class BrokerHeartbeats {
  /** Monotonic ms of the last heartbeat (or of the controller taking over). */
  private readonly lastContactMs = new Map<BrokerId, number>();
  /**
   * suspect → reporter → monotonic ms of the reporter's latest heartbeat that
   * named it. A reporter's heartbeat replaces all its earlier reports, so a
   * report holds only while every heartbeat of its reporter repeats it.
   */
  private readonly reports = new Map<BrokerId, Map<BrokerId, number>>();

  /** suspectMs 0 (or ≥ the session): only session expiry fences. */
  constructor(private readonly clock: Clock, private sessionMs: number, private suspectMs = 0) {}

  get sessionTimeoutMs(): number {
    return this.sessionMs;
  }

  /** The silence after which a reported broker is fenced; 0 when corroborated fencing is off. */
  get suspectTimeoutMs(): number {
    return this.suspectMs > 0 && this.suspectMs < this.sessionMs ? this.suspectMs : 0;
  }

  /** broker.session.timeout.ms changed (a cluster config alter). */
  setSessionTimeoutMs(ms: number): void {
    this.sessionMs = ms;
  }

  /** broker.suspect.timeout.ms changed (a cluster config alter). */
  setSuspectTimeoutMs(ms: number): void {
    this.suspectMs = ms;
  }

  /** Called when this node becomes the active controller: every registered broker gets a full session, and no report carries over. */
  resetAll(brokers: Iterable<BrokerId>): void {
    this.lastContactMs.clear();
    this.reports.clear();
    const now = this.clock.monotonicMs();
    for (const b of brokers) this.lastContactMs.set(b, now);
  }

  touch(broker: BrokerId): void {
    this.lastContactMs.set(broker, this.clock.monotonicMs());
  }

  /** `reporter`'s heartbeat says its fetchers cannot reach `unreachable` (and can reach every other leader). */
  report(reporter: BrokerId, unreachable: readonly BrokerId[]): void {
    const now = this.clock.monotonicMs();
    for (const [suspect, by] of this.reports) {
      by.delete(reporter);
      if (by.size === 0) this.reports.delete(suspect);
    }
    for (const suspect of unreachable) {
      if (suspect === reporter) continue;
      let by = this.reports.get(suspect);
      if (!by) this.reports.set(suspect, (by = new Map()));
      by.set(reporter, now);
    }
  }

  remove(broker: BrokerId): void {
    this.lastContactMs.delete(broker);
    this.report(broker, []);
    this.reports.delete(broker);
  }

  isAlive(broker: BrokerId): boolean {
    const last = this.lastContactMs.get(broker);
    return last !== undefined && this.clock.monotonicMs() - last < this.sessionMs;
  }

  /** Brokers among `candidates` whose session has expired, in id order. */
  expired(candidates: Iterable<BrokerId>): BrokerId[] {
    return [...candidates].filter((b) => !this.isAlive(b)).sort((a, b) => a - b);
  }

  /** Reporters whose report about `broker` is fresh (younger than the suspect timeout). */
  reportersOf(broker: BrokerId): BrokerId[] {
    const suspectMs = this.suspectTimeoutMs;
    const now = this.clock.monotonicMs();
    return [...(this.reports.get(broker) ?? [])].filter(([, at]) => now - at < suspectMs).map(([r]) => r).sort((a, b) => a - b);
  }

  /**
   * Brokers among `candidates` that are still within their session but whose
   * death is corroborated: silent for the suspect timeout and reported
   * unreachable by a broker heard from within it. In id order.
   */
  corroboratedDead(candidates: Iterable<BrokerId>): BrokerId[] {
    const suspectMs = this.suspectTimeoutMs;
    if (suspectMs === 0) return [];
    const now = this.clock.monotonicMs();
    return [...candidates].filter((b) => {
      if (!this.isAlive(b)) return false;
      const last = this.lastContactMs.get(b)!;
      if (now - last < suspectMs) return false;
      return this.reportersOf(b).length > 0;
    }).sort((a, b) => a - b);
  }

  /**
   * The monotonic time at which a broker among `candidates` that has a fresh
   * report becomes corroborated dead if nothing else happens (its silence
   * reaches the suspect timeout), or undefined. The driver wakes then rather
   * than at its next periodic check.
   */
  nextCorroborationAtMs(candidates: Iterable<BrokerId>): number | undefined {
    const suspectMs = this.suspectTimeoutMs;
    if (suspectMs === 0) return undefined;
    let next: number | undefined;
    for (const b of candidates) {
      const last = this.lastContactMs.get(b);
      if (last === undefined || this.reportersOf(b).length === 0) continue;
      const at = last + suspectMs;
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  lastContact(broker: BrokerId): number | undefined {
    return this.lastContactMs.get(broker);
  }
}
