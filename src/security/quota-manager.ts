// The client quota manager (pure; time from an injected Clock): Kafka's
// ClientQuotaManager and ClientRequestQuotaManager in one class.
//
// Which quota applies. For each quota key separately, the first entity in
// Kafka's precedence order (KIP-55) that sets that key wins:
//   1 user=U,client-id=C   2 user=U,client-id=<default>   3 user=U
//   4 user=<default>,client-id=C   5 user=<default>,client-id=<default>   6 user=<default>
//   7 client-id=C   8 client-id=<default>
// The rate is measured per *metric entity* of the match, as in Kafka: the
// parts the matching entity names take the connection's values, the others
// are empty. So a quota on user=alice is shared by all of alice's client ids,
// and a quota on user=<default> gives every user a bucket of its own.
//
// How rates are measured (Kafka's Rate over a SampledStat): `windowNum`
// samples (quota.window.num) of `windowSizeMs` each (quota.window.size.seconds);
// a sample starts when the first value after the previous one's end arrives;
// samples older than windowNum × windowSizeMs are dropped. The rate is the sum
// over the samples divided by the time since the oldest sample began, counted
// as at least (windowNum − 1) whole windows so a fresh sensor is not fooled by
// one burst into a huge rate.
//
// The throttle time (KIP-219): a value is always recorded; when the rate after
// it exceeds the bound, throttle = (rate − bound) / bound × window, in ms —
// the time after which the rate, with nothing more recorded, is back at the
// bound. request_percentage throttles are capped at one window (Kafka's
// ClientRequestQuotaManager). The caller answers at once with the throttle
// time and mutes the connection for that long.
//
// Bounds: one sensor per (quota kind, metric entity) seen; a sensor idle for a
// whole quota window span is dropped (it would measure nothing anyway). The
// match of each (user, client id) is cached until the quotas change, at most
// RESOLVED_MAX of them (the cache is emptied past that).

import type { Clock } from '../util/clock.js';
import type { ClientQuotaEntry } from '../metadata/image.js';
import { quotaEntityKey, type QuotaEntity, type QuotaKey } from '../metadata/quota-defs.js';

export type QuotaKind = 'produce' | 'fetch' | 'request';

export const QUOTA_KEY_OF: Readonly<Record<QuotaKind, QuotaKey>> = {
  produce: 'producer_byte_rate',
  fetch: 'consumer_byte_rate',
  request: 'request_percentage',
};

export interface QuotaWindowConfig {
  /** quota.window.num: samples kept (Kafka's default 11). */
  readonly windowNum: number;
  /** quota.window.size.seconds × 1000: the length of one sample (Kafka's default 1 s). */
  readonly windowSizeMs: number;
}

export const DEFAULT_QUOTA_WINDOWS: QuotaWindowConfig = { windowNum: 11, windowSizeMs: 1000 };

/** Who a request is from, in quota terms: the principal's name and the client id (empty when none). */
export interface QuotaClient {
  readonly user: string;
  readonly clientId: string;
}

/** The entity a rate is measured for (Kafka's metric tags): '' for a part the matched quota entity does not name. */
export interface QuotaMetricEntity {
  readonly user: string;
  readonly clientId: string;
}

export interface QuotaMatch {
  readonly bound: number;
  readonly entity: QuotaEntity;
  readonly metric: QuotaMetricEntity;
  /** The sensor's key: kind and metric entity. */
  readonly sensorKey: string;
}

const RESOLVED_MAX = 10_000;

interface Sample { startMs: number; value: number }

class Sensor {
  readonly samples: Sample[] = [];
  lastRecordMs: number;
  throttleMsTotal = 0;
  throttledCount = 0;

  constructor(nowMs: number) {
    this.lastRecordMs = nowMs;
  }

  private purge(cfg: QuotaWindowConfig, nowMs: number): void {
    const expireBefore = nowMs - cfg.windowNum * cfg.windowSizeMs;
    while (this.samples.length > 0 && this.samples[0]!.startMs <= expireBefore) this.samples.shift();
  }

  add(cfg: QuotaWindowConfig, value: number, nowMs: number): void {
    this.purge(cfg, nowMs);
    let current = this.samples[this.samples.length - 1];
    if (!current || nowMs >= current.startMs + cfg.windowSizeMs) {
      current = { startMs: nowMs, value: 0 };
      this.samples.push(current);
      if (this.samples.length > cfg.windowNum) this.samples.shift();
    }
    current.value += value;
    this.lastRecordMs = nowMs;
  }

  /** The span the rate is taken over, ms (Kafka's Rate.windowSize). */
  windowMs(cfg: QuotaWindowConfig, nowMs: number): number {
    this.purge(cfg, nowMs);
    let elapsed = nowMs - (this.samples[0]?.startMs ?? nowMs);
    const full = Math.floor(elapsed / cfg.windowSizeMs);
    if (full < cfg.windowNum - 1) elapsed += (cfg.windowNum - 1 - full) * cfg.windowSizeMs;
    return Math.max(elapsed, 1);
  }

  /** Units per second. */
  rate(cfg: QuotaWindowConfig, nowMs: number): number {
    const span = this.windowMs(cfg, nowMs);
    let total = 0;
    for (const s of this.samples) total += s.value;
    return total / (span / 1000);
  }
}

/** Kafka's precedence order of the entities that may hold a client's quota. */
export function candidateEntities(c: QuotaClient): QuotaEntity[] {
  return [
    { user: c.user, clientId: c.clientId },
    { user: c.user, clientId: null },
    { user: c.user },
    { user: null, clientId: c.clientId },
    { user: null, clientId: null },
    { user: null },
    { clientId: c.clientId },
    { clientId: null },
  ];
}

export interface ThrottleStat {
  readonly kind: QuotaKind;
  readonly user: string;
  readonly clientId: string;
  /** Sum of the throttle times handed out, ms. */
  readonly throttleMsTotal: number;
  readonly throttledCount: number;
  /** The measured rate now (bytes/s, or percent for request). */
  readonly rate: number;
  readonly bound: number;
}

export class QuotaManager {
  private quotas: ReadonlyMap<string, ClientQuotaEntry> = new Map();
  private readonly sensors = new Map<string, { kind: QuotaKind; metric: QuotaMetricEntity; bound: number; sensor: Sensor }>();
  private lastSweepMs: number;
  /** user → client id → kind → match (null: no quota); emptied when the quotas change. */
  private resolved = new Map<string, Map<string, Partial<Record<QuotaKind, QuotaMatch | null>>>>();
  private resolvedCount = 0;

  constructor(
    private readonly clock: Clock,
    readonly windows: QuotaWindowConfig = DEFAULT_QUOTA_WINDOWS,
  ) {
    if (!(windows.windowNum >= 1 && windows.windowSizeMs >= 1)) throw new RangeError('quota windows need windowNum >= 1 and windowSizeMs >= 1');
    this.lastSweepMs = clock.monotonicMs();
  }

  /** The quotas of the metadata image (MetadataImage.clientQuotas); sensors keep their history. */
  setQuotas(quotas: ReadonlyMap<string, ClientQuotaEntry>): void {
    this.quotas = quotas;
    this.resolved = new Map();
    this.resolvedCount = 0;
  }

  /** Whether any quota is set: without one, nothing is measured. */
  get enabled(): boolean {
    return this.quotas.size > 0;
  }

  /** The quota of `kind` that applies to `client`, or null (unlimited). */
  match(kind: QuotaKind, client: QuotaClient): QuotaMatch | null {
    if (this.quotas.size === 0) return null;
    let byClient = this.resolved.get(client.user);
    if (!byClient) this.resolved.set(client.user, byClient = new Map());
    let kinds = byClient.get(client.clientId);
    if (!kinds) {
      if (this.resolvedCount >= RESOLVED_MAX) {
        this.resolved = new Map([[client.user, byClient = new Map()]]);
        this.resolvedCount = 0;
      }
      byClient.set(client.clientId, kinds = {});
      this.resolvedCount++;
    }
    let m = kinds[kind];
    if (m === undefined) kinds[kind] = m = this.resolve(kind, client);
    return m;
  }

  private resolve(kind: QuotaKind, client: QuotaClient): QuotaMatch | null {
    const key = QUOTA_KEY_OF[kind];
    for (const entity of candidateEntities(client)) {
      const bound = this.quotas.get(quotaEntityKey(entity))?.values.get(key);
      if (bound === undefined) continue;
      const metric = { user: entity.user === undefined ? '' : client.user, clientId: entity.clientId === undefined ? '' : client.clientId };
      return { bound, entity, metric, sensorKey: sensorKey(kind, metric) };
    }
    return null;
  }

  /**
   * Records `value` (bytes, or percent-seconds of handler time for request)
   * against the quota that applies to `client`; returns the throttle time in
   * ms, 0 while within the quota or when no quota applies.
   */
  record(kind: QuotaKind, client: QuotaClient, value: number): number {
    const now = this.clock.monotonicMs();
    this.maybeSweep(now);
    const m = this.match(kind, client);
    if (!m) return 0;
    const s = this.sensorOf(kind, m, now);
    s.add(this.windows, value, now);
    const rate = s.rate(this.windows, now);
    if (rate <= m.bound) return 0;
    let throttleMs = Math.round(((rate - m.bound) / m.bound) * s.windowMs(this.windows, now));
    if (kind === 'request') throttleMs = Math.min(throttleMs, this.windows.windowSizeMs);
    throttleMs = Math.min(throttleMs, 0x7fffffff);
    if (throttleMs > 0) {
      const entry = this.sensors.get(m.sensorKey)!;
      entry.sensor.throttleMsTotal += throttleMs;
      entry.sensor.throttledCount++;
    }
    return throttleMs;
  }

  /** Whether `client` is over its `kind` quota now, before anything more is recorded. */
  overQuota(kind: QuotaKind, client: QuotaClient): boolean {
    const m = this.match(kind, client);
    if (!m) return false;
    const entry = this.sensors.get(m.sensorKey);
    return entry !== undefined && entry.sensor.rate(this.windows, this.clock.monotonicMs()) > m.bound;
  }

  /** Takes back a recorded value (Kafka does so for a fetch it answers empty because it throttles). */
  unrecord(kind: QuotaKind, client: QuotaClient, value: number): void {
    const m = this.match(kind, client);
    if (!m) return;
    const now = this.clock.monotonicMs();
    this.sensorOf(kind, m, now).add(this.windows, -value, now);
  }

  /** Most a client may take in one go without exceeding its quota over the window span (fetch size cap). */
  windowBudget(kind: QuotaKind, client: QuotaClient): number | null {
    const m = this.match(kind, client);
    if (!m) return null;
    return Math.max(1, Math.floor(m.bound * ((this.windows.windowNum - 1) * this.windows.windowSizeMs) / 1000));
  }

  /** Every sensor's throttle totals and current rate (metrics). */
  stats(): ThrottleStat[] {
    const now = this.clock.monotonicMs();
    return [...this.sensors.values()].map(({ kind, metric, bound, sensor }) => ({
      kind, user: metric.user, clientId: metric.clientId, throttleMsTotal: sensor.throttleMsTotal,
      throttledCount: sensor.throttledCount, rate: sensor.rate(this.windows, now), bound,
    }));
  }

  private sensorOf(kind: QuotaKind, m: QuotaMatch, now: number): Sensor {
    let entry = this.sensors.get(m.sensorKey);
    if (!entry) this.sensors.set(m.sensorKey, entry = { kind, metric: m.metric, bound: m.bound, sensor: new Sensor(now) });
    entry.bound = m.bound;
    return entry.sensor;
  }

  private maybeSweep(now: number): void {
    const span = this.windows.windowNum * this.windows.windowSizeMs;
    if (now - this.lastSweepMs < span) return;
    this.lastSweepMs = now;
    for (const [key, e] of this.sensors) if (now - e.sensor.lastRecordMs > span) this.sensors.delete(key);
  }
}

function sensorKey(kind: QuotaKind, m: QuotaMetricEntity): string {
  return JSON.stringify([kind, m.user, m.clientId]);
}
