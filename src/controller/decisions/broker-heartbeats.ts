// Broker liveness as the active controller sees it (pure; time from the
// injected Clock). A broker is live while its last heartbeat is younger than
// broker.session.timeout.ms. On controller failover the new controller starts
// every deadline afresh (it cannot know when the old one last heard from a
// broker), so failover never fences a healthy broker instantly.

import type { Clock } from '../../util/clock.js';
import type { BrokerId } from '../../metadata/records.js';

export class BrokerHeartbeats {
  /** Monotonic ms of the last heartbeat (or of the controller taking over). */
  private readonly lastContactMs = new Map<BrokerId, number>();

  constructor(private readonly clock: Clock, private sessionMs: number) {}

  get sessionTimeoutMs(): number {
    return this.sessionMs;
  }

  /** broker.session.timeout.ms changed (a cluster config alter). */
  setSessionTimeoutMs(ms: number): void {
    this.sessionMs = ms;
  }

  /** Called when this node becomes the active controller: every registered broker gets a full session. */
  resetAll(brokers: Iterable<BrokerId>): void {
    this.lastContactMs.clear();
    const now = this.clock.monotonicMs();
    for (const b of brokers) this.lastContactMs.set(b, now);
  }

  touch(broker: BrokerId): void {
    this.lastContactMs.set(broker, this.clock.monotonicMs());
  }

  remove(broker: BrokerId): void {
    this.lastContactMs.delete(broker);
  }

  isAlive(broker: BrokerId): boolean {
    const last = this.lastContactMs.get(broker);
    return last !== undefined && this.clock.monotonicMs() - last < this.sessionMs;
  }

  /** Brokers among `candidates` whose session has expired, in id order. */
  expired(candidates: Iterable<BrokerId>): BrokerId[] {
    return [...candidates].filter((b) => !this.isAlive(b)).sort((a, b) => a - b);
  }

  lastContact(broker: BrokerId): number | undefined {
    return this.lastContactMs.get(broker);
  }
}
