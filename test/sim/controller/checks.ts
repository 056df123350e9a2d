// Safety invariants of the controller layer, checked by the controller
// simulation whenever a node's metadata image changes and whenever a node
// becomes the active controller. Like test/sim/invariants.ts, every checker
// takes plain observations (node ids, terms, MetadataImages, requests and
// responses), never simulation objects, so a test can feed it a hand-made bad
// history and see it throw.
//
// - ActiveControllerSafety: at most one node becomes ACTIVE per Raft term,
//   and it becomes active only once its image holds every entry of an
//   earlier term that any node has applied (metadata leader completeness).
// - ProducerIdBlocks: the producer id blocks handed out (answered, so
//   committed) never overlap, whichever controller handed them out.
// - ImageAgreement: nodes whose images stand for the same metadata offset hold
//   identical images (canonical encoding of image.toRecords()).
// - PartitionHistory, per partition (keyed by topic id, so a deleted and
//   re-created topic starts afresh):
//     * one registration per partition epoch across all nodes and the whole
//       run (so in particular one leader per leader epoch);
//     * in the successive images of one node (since its last restart) the
//       leader epoch and partition epoch never go back, any change of the
//       registration bumps the partition epoch, any change of leader bumps
//       the leader epoch;
//     * the ISR is never empty and holds the leader (or there is none); the
//       leader is a registered, unfenced broker; a reassignment whose target
//       replicas are all in the ISR is complete (never left open);
//     * unless the topic has unclean.leader.election.enable=true: no leader
//       from outside the previous ISR (an unclean election), and a broker
//       joins the ISR only through an AlterPartition of the leader — never
//       by some fallback (a replica that never caught up would pass for in
//       sync, and a later "clean" election could make it leader);
//     * an AlterPartition the controller accepted was built on the then
//       current registration (the broker led it with those epochs), and the
//       response describes the committed result (unless a later command of
//       the same batch changed the partition again or deleted its topic: then
//       that intermediate state was never an image).

import type { AlterPartitionRequest } from '../../../src/controller/decisions/alter-partition.js';
import type { AlterPartitionResult } from '../../../src/controller/replication-control.js';
import { topicSetting } from '../../../src/controller/context.js';
import type { MetadataImage, PartitionRegistration } from '../../../src/metadata/image.js';
import { NO_LEADER } from '../../../src/metadata/records.js';
import type { NodeId } from '../../../src/raft/types.js';
import { InvariantViolation } from '../invariants.js';

function violated(invariant: string, detail: string): never {
  throw new InvariantViolation(invariant, detail);
}

export class ActiveControllerSafety {
  private readonly activeInTerm = new Map<number, NodeId>();
  /** Entry term → the highest index of that term some node applied (so: committed). */
  private readonly appliedOfTerm = new Map<number, number>();

  /** Some node applied the committed entry `index` of term `term`. */
  applied(index: number, term: number): void {
    if (index > (this.appliedOfTerm.get(term) ?? 0)) this.appliedOfTerm.set(term, index);
  }

  /**
   * Node `node` became the active controller in Raft term `term`, its image
   * having applied the log up to `appliedIndex`: no other node did in that
   * term, and it holds every entry of an earlier term known committed.
   */
  activated(term: number, node: NodeId, appliedIndex: number): void {
    const other = this.activeInTerm.get(term);
    if (other !== undefined && other !== node) {
      violated('one active controller per term', `nodes ${other} and ${node} both became active in term ${term}`);
    }
    this.activeInTerm.set(term, node);
    for (const [t, index] of this.appliedOfTerm) {
      if (t < term && index > appliedIndex) {
        violated('active controller sees every commit', `n${node} became active in term ${term} having applied ${appliedIndex}, ` +
          `but entry ${index} of term ${t} was committed`);
      }
    }
  }

  /** Terms that had an active controller. */
  get terms(): number {
    return this.activeInTerm.size;
  }
}

export class ProducerIdBlocks {
  /** first id → [end (exclusive), broker], of every block handed out. */
  private readonly blocks = new Map<number, [number, number]>();

  handedOut(broker: number, first: number, size: number): void {
    const end = first + size;
    for (const [f, [e, b]] of this.blocks) {
      if (first < e && f < end) violated('producer id blocks are disjoint', `broker ${broker} got [${first}, ${end}), broker ${b} had [${f}, ${e})`);
    }
    this.blocks.set(first, [end, broker]);
  }

  get count(): number {
    return this.blocks.size;
  }
}

/** JSON with object keys sorted: equal values give equal text whatever their construction order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

export function encodeImage(image: MetadataImage): string {
  return canonicalJson(image.toRecords());
}

export class ImageAgreement {
  /** Metadata offset → the first node seen there and its image's encoding. */
  private readonly byOffset = new Map<number, { node: NodeId; encoding: string }>();

  observe(node: NodeId, image: MetadataImage): void {
    if (image.offset < 0) return;
    const encoding = encodeImage(image);
    const first = this.byOffset.get(image.offset);
    if (first === undefined) {
      this.byOffset.set(image.offset, { node, encoding });
      return;
    }
    if (first.encoding !== encoding) {
      violated('image agreement', `nodes ${first.node} and ${node} hold different images at metadata offset ${image.offset}:\n` +
        `  n${first.node}: ${first.encoding}\n  n${node}: ${encoding}`);
    }
  }

  get offsets(): number {
    return this.byOffset.size;
  }
}

const partitionKey = (topicId: string, partition: number): string => `${topicId}/${partition}`;

function describeReg(r: PartitionRegistration): string {
  return `leader=${r.leader} le=${r.leaderEpoch} pe=${r.partitionEpoch} isr=[${r.isr.join(',')}] replicas=[${r.replicas.join(',')}]` +
    (r.addingReplicas.length + r.removingReplicas.length > 0 ? ` +[${r.addingReplicas.join(',')}] -[${r.removingReplicas.join(',')}]` : '');
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameRegistration(a: PartitionRegistration, b: PartitionRegistration): boolean {
  return a.leader === b.leader && a.leaderEpoch === b.leaderEpoch && a.partitionEpoch === b.partitionEpoch &&
    sameList(a.isr, b.isr) && sameList(a.replicas, b.replicas) &&
    sameList(a.addingReplicas, b.addingReplicas) && sameList(a.removingReplicas, b.removingReplicas);
}

export class PartitionHistory {
  /** topicId/partition/leaderEpoch → leader, over all nodes and the whole run. */
  private readonly leaders = new Map<string, number>();
  /** topicId/partition/partitionEpoch → registration, over all nodes and the whole run. */
  private readonly registrations = new Map<string, PartitionRegistration>();
  /** Topic ids some node held and later saw deleted. */
  private readonly deletedTopics = new Set<string>();
  /** topicId/partition → the highest partition epoch any node held. */
  private readonly maxEpoch = new Map<string, number>();
  /** Per node: topicId/partition → the registration in its latest image (since its last restart). */
  private readonly lastSeen = new Map<NodeId, Map<string, PartitionRegistration>>();
  uncleanElections = 0;
  leaderChanges = 0;

  /** The node restarted from its disk: its next image may be older than the last one. */
  resetNode(node: NodeId): void {
    this.lastSeen.delete(node);
  }

  /**
   * A node now holds `image`. `changedTopics`: ids of the topics whose
   * partitions changed since its previous image (null: anything may have).
   */
  observe(node: NodeId, image: MetadataImage, changedTopics: ReadonlySet<string> | null): void {
    const seen = this.seenBy(node);
    for (const key of seen.keys()) {
      const topicId = key.slice(0, key.lastIndexOf('/'));
      if (image.topicsById.has(topicId)) continue;
      seen.delete(key);
      this.deletedTopics.add(topicId);
    }
    const topicIds = changedTopics ?? image.topicsById.keys();
    for (const topicId of topicIds) {
      const topic = image.topicsById.get(topicId);
      if (topic === undefined) continue;
      for (const [partition, reg] of topic.partitions) this.observePartition(node, image, topic.name, topicId, partition, reg);
    }
  }

  /** The registration some node held at this partition epoch, if any was seen. */
  registrationAt(topicId: string, partition: number, partitionEpoch: number): PartitionRegistration | undefined {
    return this.registrations.get(`${partitionKey(topicId, partition)}/${partitionEpoch}`);
  }

  /** The controller answered `req` with success: check it against the committed history. */
  acceptedAlterPartition(req: AlterPartitionRequest, resp: AlterPartitionResult): void {
    const where = `${req.topicId}/${req.partition}`;
    const base = this.registrationAt(req.topicId, req.partition, req.partitionEpoch);
    if (base === undefined || base.leader !== req.brokerId || base.leaderEpoch !== req.leaderEpoch) {
      violated('stale AlterPartition accepted', `broker ${req.brokerId} le=${req.leaderEpoch} pe=${req.partitionEpoch} isr=[${req.newIsr.join(',')}] ` +
        `on ${where} was accepted, but the registration at pe=${req.partitionEpoch} was ${base ? describeReg(base) : 'never seen'}`);
    }
    if (resp.partitionEpoch !== req.partitionEpoch && resp.partitionEpoch !== req.partitionEpoch + 1) {
      violated('AlterPartition response', `${where}: request at pe=${req.partitionEpoch} answered with pe=${resp.partitionEpoch}`);
    }
    // A later command of the same batch may have changed the partition again,
    // or deleted its topic: then the state the response describes was never
    // an image of its own.
    const after = this.registrationAt(req.topicId, req.partition, resp.partitionEpoch);
    const superseded = after === undefined &&
      ((this.maxEpoch.get(partitionKey(req.topicId, req.partition)) ?? -1) > resp.partitionEpoch || this.deletedTopics.has(req.topicId));
    if (superseded) return;
    if (after === undefined || after.leader !== resp.leader || after.leaderEpoch !== resp.leaderEpoch || !sameList(after.isr, resp.isr)) {
      violated('AlterPartition response', `${where}: response leader=${resp.leader} le=${resp.leaderEpoch} pe=${resp.partitionEpoch} ` +
        `isr=[${resp.isr.join(',')}] but the committed registration is ${after ? describeReg(after) : 'unknown'}`);
    }
  }

  private seenBy(node: NodeId): Map<string, PartitionRegistration> {
    let seen = this.lastSeen.get(node);
    if (seen === undefined) {
      seen = new Map();
      this.lastSeen.set(node, seen);
    }
    return seen;
  }

  private observePartition(node: NodeId, image: MetadataImage, topic: string, topicId: string, partition: number, reg: PartitionRegistration): void {
    const key = partitionKey(topicId, partition);
    const where = `n${node} at offset ${image.offset}: ${topic} (${key})`;
    checkShape(image, where, reg);
    this.checkUnique(where, key, reg);
    const seen = this.seenBy(node);
    const prev = seen.get(key);
    if (prev !== undefined) checkSuccessor(image, where, topic, prev, reg);
    seen.set(key, reg);
  }

  private checkUnique(where: string, key: string, reg: PartitionRegistration): void {
    const leader = this.leaders.get(`${key}/${reg.leaderEpoch}`);
    if (leader !== undefined && leader !== reg.leader) {
      violated('one leader per leader epoch', `${where}: leader ${reg.leader} at leader epoch ${reg.leaderEpoch}, which ${leader} already had`);
    }
    this.leaders.set(`${key}/${reg.leaderEpoch}`, reg.leader);
    const epochKey = `${key}/${reg.partitionEpoch}`;
    const known = this.registrations.get(epochKey);
    if (known !== undefined && !sameRegistration(known, reg)) {
      violated('one registration per partition epoch', `${where}: ${describeReg(reg)}, but elsewhere ${describeReg(known)}`);
    }
    if (known === undefined) this.countElection(key, reg);
    this.registrations.set(epochKey, reg);
    if (reg.partitionEpoch > (this.maxEpoch.get(key) ?? -1)) this.maxEpoch.set(key, reg.partitionEpoch);
  }

  private countElection(key: string, reg: PartitionRegistration): void {
    const prev = this.registrations.get(`${key}/${reg.partitionEpoch - 1}`);
    if (prev === undefined || prev.leader === reg.leader) return;
    this.leaderChanges++;
    if (isUncleanStep(prev, reg)) this.uncleanElections++;
  }
}

/**
 * ISR non-empty, leader in it (or none), leader a registered and unfenced
 * broker; no reassignment is left open once every target replica is in the
 * ISR (it completes at the change that makes it so, as in Kafka) — except
 * right after an unclean election (the new leader alone in the ISR), which
 * Kafka too leaves for the partition's next change.
 */
function checkShape(image: MetadataImage, where: string, reg: PartitionRegistration): void {
  if (reg.isr.length === 0) violated('partition shape', `${where}: empty ISR (${describeReg(reg)})`);
  if (reassignmentOverdue(reg)) {
    violated('reassignment completes', `${where}: every target replica is in the ISR, yet the reassignment is still open (${describeReg(reg)})`);
  }
  if (reg.leader === NO_LEADER) return;
  if (!reg.isr.includes(reg.leader)) violated('partition shape', `${where}: leader outside the ISR (${describeReg(reg)})`);
  const broker = image.brokers.get(reg.leader);
  if (broker === undefined || broker.fenced) {
    violated('partition shape', `${where}: leader ${reg.leader} is ${broker ? 'fenced' : 'not registered'} (${describeReg(reg)})`);
  }
}

/**
 * Whether the leader before a change (consecutive partition epochs) vouched
 * for the ISR after it: it is still in it (its own AlterPartition, or a
 * sweep that only removed others), or its AlterPartition completed a
 * reassignment that removed it.
 */
export function vouchedByLeader(prev: PartitionRegistration, next: PartitionRegistration): boolean {
  if (prev.leader === NO_LEADER) return false;
  return next.isr.includes(prev.leader) || (prev.removingReplicas.includes(prev.leader) && !next.replicas.includes(prev.leader));
}

/**
 * Whether one change elected a leader from outside the ISR: an unclean
 * election leaves the new leader alone in the ISR, with no previous leader
 * vouching for it (an AlterPartition expand from a leader in controlled
 * shutdown, or one that completes a reassignment removing that leader, may
 * look alike otherwise).
 */
export function isUncleanStep(prev: PartitionRegistration, next: PartitionRegistration): boolean {
  return next.leader !== prev.leader && next.leader !== NO_LEADER && !prev.isr.includes(next.leader) &&
    next.isr.length === 1 && !vouchedByLeader(prev, next);
}

export function reassignmentOverdue(reg: PartitionRegistration): boolean {
  if (reg.addingReplicas.length === 0 && reg.removingReplicas.length === 0) return false;
  const target = reg.replicas.filter((b) => !reg.removingReplicas.includes(b));
  const afterUnclean = reg.isr.length === 1 && reg.isr[0] === reg.leader;
  return target.every((b) => reg.isr.includes(b)) && !afterUnclean;
}

/** `next` follows `prev` in the images of one node. */
function checkSuccessor(image: MetadataImage, where: string, topic: string, prev: PartitionRegistration, next: PartitionRegistration): void {
  const step = `${describeReg(prev)} -> ${describeReg(next)}`;
  if (next.partitionEpoch < prev.partitionEpoch || next.leaderEpoch < prev.leaderEpoch) {
    violated('epochs only grow', `${where}: ${step}`);
  }
  if (next.partitionEpoch === prev.partitionEpoch && !sameRegistration(prev, next)) {
    violated('epochs only grow', `${where}: registration changed without a new partition epoch: ${step}`);
  }
  if (next.leader !== prev.leader && next.leaderEpoch === prev.leaderEpoch) {
    violated('epochs only grow', `${where}: leader changed without a new leader epoch: ${step}`);
  }
  if (next.partitionEpoch !== prev.partitionEpoch + 1) return;
  if (topicSetting(image, topic, 'unclean.leader.election.enable') === 'true') return;
  if (isUncleanStep(prev, next)) violated('unclean election only where enabled', `${where}: ${step}`);
  const newcomers = next.isr.filter((b) => !prev.isr.includes(b));
  if (newcomers.length > 0 && !vouchedByLeader(prev, next)) {
    violated('ISR grows only through its leader', `${where}: brokers [${newcomers.join(',')}] joined the ISR without the leader's AlterPartition: ${step}`);
  }
}
