// Broker lifecycle commands (pure): registration, heartbeats, fencing and
// controlled shutdown — Kafka's ClusterControlManager.
//
// Lifecycle: register (fenced) → heartbeat until caught up with the metadata
// log (its metadata offset reaches its own registration record) → unfenced →
// serve. Heartbeats stop for broker.session.timeout.ms → fenced: out of ISRs
// where another member remains, leaderships moved. Fenced sooner, after
// broker.suspect.timeout.ms of silence, when another broker's heartbeats
// report its replica links to it down (decisions/broker-heartbeats.ts: the
// corroborated-death rule; docs/replication.md, "Failover"). A new incarnation (a
// restart) replaces the old registration and is fenced like any newcomer,
// because its log may have lost unflushed data. Controlled shutdown: the
// broker asks, the controller moves its leaderships away, then answers
// shouldShutdown once it leads nothing.

import type { BrokerId, Endpoint, MetadataRecord } from '../metadata/records.js';
import { Errors, type ErrorInfo } from '../util/errors.js';
import { brokerSetting, noRecords, type CommandContext, type CommandResult } from './context.js';
import { fenceSweep, leadershipsOf, shutdownSweep, unfenceSweep } from './partition-sweeps.js';
import { imageWithRecords } from '../metadata/delta.js';
import type { MetadataImage } from '../metadata/image.js';

export interface RegisterBrokerRequest {
  readonly brokerId: BrokerId;
  readonly incarnationId: string;
  readonly clusterId: string;
  readonly endpoints: readonly Endpoint[];
  readonly rack: string | null;
}

export type RegisterBrokerResponse = { readonly error: ErrorInfo; readonly message: string } | { readonly error: null; readonly brokerEpoch: number };

export interface HeartbeatRequest {
  readonly brokerId: BrokerId;
  readonly brokerEpoch: number;
  /** The highest metadata offset the broker has applied. */
  readonly currentMetadataOffset: number;
  readonly wantShutdown: boolean;
  /** Brokers this broker's replica fetchers cannot reach right now (their links failed or stopped answering). */
  readonly unreachableBrokers?: readonly BrokerId[];
}

export type HeartbeatResponse =
  | { readonly error: ErrorInfo; readonly message: string }
  | { readonly error: null; readonly isFenced: boolean; readonly isCaughtUp: boolean; readonly shouldShutdown: boolean };

export function registerBroker(ctx: CommandContext, req: RegisterBrokerRequest): CommandResult<RegisterBrokerResponse> {
  const { image } = ctx;
  if (image.cluster && req.clusterId !== image.cluster.clusterId) {
    return noRecords({ error: Errors.INCONSISTENT_CLUSTER_ID, message: `cluster id ${req.clusterId} is not ${image.cluster.clusterId}` });
  }
  const existing = image.brokers.get(req.brokerId);
  if (existing && existing.incarnationId === req.incarnationId) {
    ctx.heartbeats.touch(req.brokerId);
    return noRecords({ error: null, brokerEpoch: existing.brokerEpoch });
  }
  const brokerEpoch = ctx.nextOffset;
  const records: MetadataRecord[] = [{
    type: 'registerBroker', v: 1, brokerId: req.brokerId, incarnationId: req.incarnationId, brokerEpoch,
    endpoints: req.endpoints, rack: req.rack, fenced: true,
  }];
  if (existing) {
    // The old incarnation may still lead or sit in ISRs; its log may have lost data.
    records.push(...fenceSweep(imageWithRecords(image, records), req.brokerId, ctx.logger));
    ctx.logger.info({ broker: req.brokerId, incarnation: req.incarnationId }, 'broker re-registered with a new incarnation');
  }
  ctx.heartbeats.touch(req.brokerId);
  return { records, response: { error: null, brokerEpoch } };
}

export function brokerHeartbeat(ctx: CommandContext, req: HeartbeatRequest): CommandResult<HeartbeatResponse> {
  const { image } = ctx;
  const reg = image.brokers.get(req.brokerId);
  if (!reg || reg.brokerEpoch !== req.brokerEpoch) {
    return noRecords({ error: Errors.STALE_BROKER_EPOCH, message: `broker ${req.brokerId} epoch ${req.brokerEpoch} is not registered` });
  }
  ctx.heartbeats.touch(req.brokerId);
  ctx.heartbeats.report(req.brokerId, req.unreachableBrokers ?? []);
  const isCaughtUp = req.currentMetadataOffset >= reg.brokerEpoch;
  const records: MetadataRecord[] = [];
  if (req.wantShutdown) {
    if (!reg.inControlledShutdown) {
      records.push({ type: 'brokerRegistrationChange', v: 1, brokerId: req.brokerId, brokerEpoch: reg.brokerEpoch, inControlledShutdown: true });
    }
    const after = imageWithRecords(image, records);
    records.push(...shutdownSweep(after, req.brokerId, ctx.logger));
    const remaining = leadershipsOf(imageWithRecords(image, records), req.brokerId);
    return { records, response: { error: null, isFenced: reg.fenced, isCaughtUp, shouldShutdown: remaining === 0 } };
  }
  if (reg.fenced && isCaughtUp && !reg.inControlledShutdown) {
    records.push({ type: 'brokerRegistrationChange', v: 1, brokerId: req.brokerId, brokerEpoch: reg.brokerEpoch, fenced: false });
    records.push(...unfenceSweep(imageWithRecords(image, records), req.brokerId, ctx.logger));
    ctx.logger.info({ broker: req.brokerId }, 'broker unfenced');
    return { records, response: { error: null, isFenced: false, isCaughtUp, shouldShutdown: false } };
  }
  return { records, response: { error: null, isFenced: reg.fenced, isCaughtUp, shouldShutdown: false } };
}

/** Unfenced brokers to fence now, by reason (each in id order; a broker is in one list at most). */
export function brokersToFence(ctx: Pick<CommandContext, 'image' | 'heartbeats'>): { expired: BrokerId[]; corroborated: BrokerId[] } {
  const live = [...ctx.image.brokers.values()].filter((b) => !b.fenced).map((b) => b.brokerId);
  return { expired: ctx.heartbeats.expired(live), corroborated: ctx.heartbeats.corroboratedDead(live) };
}

/**
 * Fences every unfenced broker whose session expired or whose death is
 * corroborated (see the header). Run on a timer by the shell; answers with
 * the brokers fenced, in id order.
 */
export function fenceExpiredBrokers(ctx: CommandContext): CommandResult<BrokerId[]> {
  const { expired, corroborated } = brokersToFence(ctx);
  let image = ctx.image;
  const records: MetadataRecord[] = [];
  for (const brokerId of [...expired, ...corroborated].sort((a, b) => a - b)) {
    const reg = image.brokers.get(brokerId)!;
    const change: MetadataRecord = { type: 'brokerRegistrationChange', v: 1, brokerId, brokerEpoch: reg.brokerEpoch, fenced: true };
    image = imageWithRecords(image, [change]);
    const sweep = fenceSweep(image, brokerId, ctx.logger);
    image = imageWithRecords(image, sweep);
    records.push(change, ...sweep);
    if (expired.includes(brokerId)) {
      ctx.logger.warn({ broker: brokerId, sessionTimeoutMs: ctx.heartbeats.sessionTimeoutMs }, 'broker session expired: fenced');
    } else {
      const silentMs = ctx.clock.monotonicMs() - (ctx.heartbeats.lastContact(brokerId) ?? 0);
      ctx.logger.warn({ broker: brokerId, silentMs, reportedBy: ctx.heartbeats.reportersOf(brokerId) }, 'broker silent and reported unreachable by its peers: fenced');
    }
  }
  return { records, response: [...expired, ...corroborated].sort((a, b) => a - b) };
}

export function unregisterBroker(ctx: CommandContext, brokerId: BrokerId): CommandResult<{ error: ErrorInfo | null }> {
  const reg = ctx.image.brokers.get(brokerId);
  if (!reg) return noRecords({ error: Errors.INVALID_REQUEST });
  const fence: MetadataRecord[] = reg.fenced ? [] : [{ type: 'brokerRegistrationChange', v: 1, brokerId, brokerEpoch: reg.brokerEpoch, fenced: true }];
  const sweep = fenceSweep(imageWithRecords(ctx.image, fence), brokerId, ctx.logger);
  ctx.heartbeats.remove(brokerId);
  return { records: [...fence, ...sweep, { type: 'unregisterBroker', v: 1, brokerId, brokerEpoch: reg.brokerEpoch }], response: { error: null } };
}

export function sessionTimeoutMs(image: MetadataImage): number {
  return Number(brokerSetting(image, 'broker.session.timeout.ms'));
}

export function suspectTimeoutMs(image: MetadataImage): number {
  return Number(brokerSetting(image, 'broker.suspect.timeout.ms'));
}
