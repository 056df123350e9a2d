// MetadataDelta: the one path by which metadata changes. Records are replayed
// into a delta on top of a base image; apply() makes the next immutable image,
// sharing every untouched topic and broker with the base. The active
// controller, standby controllers and brokers all use this same code, so equal
// logs give equal images (the simulation checks exactly that).
//
// replay() asserts the invariants a correct controller never breaks (unknown
// topic ids, epochs that do not grow): a failure means a bug upstream, and the
// node stops rather than serve a wrong picture of the cluster.

import { assert, unreachable } from '../util/assert.js';
import {
  configKey,
  MetadataImage,
  type BrokerRegistration,
  type ClientQuotaEntry,
  type ClusterInfo,
  type PartitionRegistration,
  type ScramCredentialImage,
  type TopicImage,
} from './image.js';
import type { AclBinding } from '../security/acl.js';
import { entityOfParts, quotaEntityKey } from './quota-defs.js';
import { NO_LEADER, type BrokerId, type ClientQuotaRecord, type MetadataRecord, type PartitionChangeRecord, type PartitionRecord } from './records.js';

/** What changed in a delta, for publishers (replica manager, caches). */
export interface MetadataChanges {
  readonly brokers: ReadonlySet<BrokerId>;
  /** Topic ids whose partitions were created or changed. */
  readonly topics: ReadonlySet<string>;
  /** Topic ids removed, with their last image. */
  readonly removedTopics: ReadonlyMap<string, TopicImage>;
  readonly configs: ReadonlySet<string>;
  /** Whether any ACL was added or removed. */
  readonly acls: boolean;
  /** Whether any client quota changed. */
  readonly clientQuotas: boolean;
  /** Controller endpoints added, changed or removed (ControllerEndpointRecord). */
  readonly controllerEndpoints: boolean;
}

interface MutableTopic {
  name: string;
  topicId: string;
  partitions: Map<number, PartitionRegistration>;
}

export class MetadataDelta {
  private offset: number;
  private cluster: ClusterInfo | null;
  private nextProducerId: number;
  private readonly brokers = new Map<BrokerId, BrokerRegistration | null>();
  private readonly topics = new Map<string, MutableTopic | null>();
  private readonly configs = new Map<string, Map<string, string>>();
  private readonly removed = new Map<string, TopicImage>();
  /** ACL ids added (binding) or removed (null) by this delta. */
  private readonly acls = new Map<string, AclBinding | null>();
  /** Users whose SCRAM credentials changed: their whole new set (empty: no credentials left). */
  private readonly scram = new Map<string, Map<number, ScramCredentialImage>>();
  /** Changed quota entities: quotaEntityKey → the entity's quotas now (empty: none left). */
  private readonly quotas = new Map<string, ClientQuotaEntry>();
  /** Controller endpoints set (url) or removed (null) by this delta. */
  private readonly endpoints = new Map<number, string | null>();

  constructor(readonly base: MetadataImage) {
    this.offset = base.offset;
    this.cluster = base.cluster;
    this.nextProducerId = base.nextProducerId;
  }

  /** Replays one committed record found at metadata log index `offset`. */
  replay(record: MetadataRecord, offset: number): void {
    assert(offset > this.offset, `metadata replay out of order: ${offset} after ${this.offset}`);
    this.offset = offset;
    this.replayRecord(record);
  }

  /**
   * Replays records that together stand for metadata log index `offset`: the
   * records of one Raft entry (a controller command's output, applied
   * atomically), or a snapshot's payload.
   */
  replayBatch(records: readonly MetadataRecord[], offset: number): void {
    assert(offset > this.offset, `metadata batch at ${offset} is not after ${this.offset}`);
    for (const record of records) this.replayRecord(record);
    this.offset = offset;
  }

  private replayRecord(record: MetadataRecord): void {
    switch (record.type) {
      case 'cluster':
        this.cluster = { clusterId: record.clusterId, metadataVersion: record.metadataVersion };
        return;
      case 'controllerEndpoint':
        this.endpoints.set(record.nodeId, record.url);
        return;
      case 'registerBroker':
        this.brokers.set(record.brokerId, Object.freeze({
          brokerId: record.brokerId,
          incarnationId: record.incarnationId,
          brokerEpoch: record.brokerEpoch,
          endpoints: Object.freeze([...record.endpoints]),
          rack: record.rack,
          fenced: record.fenced,
          inControlledShutdown: false,
        }));
        return;
      case 'unregisterBroker':
        this.brokers.set(record.brokerId, null);
        return;
      case 'brokerRegistrationChange': {
        const current = this.broker(record.brokerId);
        assert(current, `registration change for unknown broker ${record.brokerId}`);
        this.brokers.set(record.brokerId, Object.freeze({
          ...current,
          fenced: record.fenced ?? current.fenced,
          inControlledShutdown: record.inControlledShutdown ?? current.inControlledShutdown,
        }));
        return;
      }
      case 'topic':
        assert(!this.topicById(record.topicId), `duplicate topic id ${record.topicId}`);
        this.topics.set(record.topicId, { name: record.name, topicId: record.topicId, partitions: new Map() });
        return;
      case 'partition':
        this.replayPartition(record);
        return;
      case 'partitionChange':
        this.replayPartitionChange(record);
        return;
      case 'config': {
        const key = configKey(record.resourceType, record.resourceName);
        const entries = this.configs.get(key) ?? new Map(this.base.configs.get(key) ?? []);
        if (record.value === null) entries.delete(record.name);
        else entries.set(record.name, record.value);
        this.configs.set(key, entries);
        return;
      }
      case 'removeTopic': {
        const topic = this.topicById(record.topicId);
        assert(topic, `remove of unknown topic id ${record.topicId}`);
        this.removed.set(record.topicId, freezeTopic(topic));
        this.topics.set(record.topicId, null);
        this.configs.set(configKey('topic', topic.name), new Map());
        return;
      }
      case 'clientQuota':
        this.replayClientQuota(record);
        return;
      case 'producerIds':
        assert(record.nextProducerId >= this.nextProducerId, 'producer id blocks must not go backwards');
        this.nextProducerId = record.nextProducerId;
        return;
      case 'accessControlEntry': {
        const { type: _t, v: _v, id, ...binding } = record;
        assert(!this.acl(id), `duplicate ACL id ${id}`);
        this.acls.set(id, Object.freeze(binding as AclBinding));
        return;
      }
      case 'removeAccessControlEntry':
        assert(this.acl(record.id), `remove of unknown ACL id ${record.id}`);
        this.acls.set(record.id, null);
        return;
      case 'userScramCredential': {
        const creds = this.scramOf(record.name);
        creds.set(record.mechanism, Object.freeze({ mechanism: record.mechanism, salt: record.salt, storedKey: record.storedKey, serverKey: record.serverKey, iterations: record.iterations }));
        return;
      }
      case 'removeUserScramCredential':
        this.scramOf(record.name).delete(record.mechanism);
        return;
      default:
        unreachable(record, 'metadata record');
    }
  }

  private replayPartition(record: PartitionRecord): void {
    const topic = this.mutableTopic(record.topicId);
    const reg: PartitionRegistration = {
      replicas: record.replicas,
      isr: record.isr,
      leader: record.leader,
      leaderEpoch: record.leaderEpoch,
      partitionEpoch: record.partitionEpoch,
      addingReplicas: record.addingReplicas,
      removingReplicas: record.removingReplicas,
    };
    checkPartition(reg, record.topicId, record.partition);
    topic.partitions.set(record.partition, Object.freeze(reg));
  }

  private replayPartitionChange(record: PartitionChangeRecord): void {
    const topic = this.mutableTopic(record.topicId);
    const current = topic.partitions.get(record.partition);
    assert(current, `change of unknown partition ${record.topicId}/${record.partition}`);
    const leader = record.leader ?? current.leader;
    const next: PartitionRegistration = {
      replicas: record.replicas ?? current.replicas,
      isr: record.isr ?? current.isr,
      leader,
      leaderEpoch: leader !== current.leader ? current.leaderEpoch + 1 : current.leaderEpoch,
      partitionEpoch: current.partitionEpoch + 1,
      addingReplicas: record.addingReplicas ?? current.addingReplicas,
      removingReplicas: record.removingReplicas ?? current.removingReplicas,
    };
    checkPartition(next, record.topicId, record.partition);
    topic.partitions.set(record.partition, Object.freeze(next));
  }

  private acl(id: string): AclBinding | undefined {
    if (this.acls.has(id)) return this.acls.get(id) ?? undefined;
    return this.base.acls.get(id);
  }

  private scramOf(name: string): Map<number, ScramCredentialImage> {
    let creds = this.scram.get(name);
    if (!creds) {
      creds = new Map(this.base.scramCredentials.get(name) ?? []);
      this.scram.set(name, creds);
    }
    return creds;
  }

  private replayClientQuota(record: ClientQuotaRecord): void {
    const entity = entityOfParts(record.entity);
    const key = quotaEntityKey(entity);
    const values = new Map(this.quotas.get(key)?.values ?? this.base.clientQuotas.get(key)?.values ?? []);
    if (record.remove) values.delete(record.key);
    else values.set(record.key, record.value);
    this.quotas.set(key, { entity, values });
  }

  /** The broker as of this delta (including unapplied changes). */
  broker(id: BrokerId): BrokerRegistration | undefined {
    if (this.brokers.has(id)) return this.brokers.get(id) ?? undefined;
    return this.base.brokers.get(id);
  }

  private topicById(topicId: string): MutableTopic | TopicImage | undefined {
    if (this.topics.has(topicId)) return this.topics.get(topicId) ?? undefined;
    return this.base.topicsById.get(topicId);
  }

  private mutableTopic(topicId: string): MutableTopic {
    const existing = this.topics.get(topicId);
    if (existing) return existing;
    const base = this.topics.has(topicId) ? undefined : this.base.topicsById.get(topicId);
    assert(base, `partition record for unknown topic id ${topicId}`);
    const copy: MutableTopic = { name: base.name, topicId, partitions: new Map(base.partitions) };
    this.topics.set(topicId, copy);
    return copy;
  }

  changes(): MetadataChanges {
    return {
      brokers: new Set(this.brokers.keys()),
      topics: new Set([...this.topics.entries()].filter(([, t]) => t !== null).map(([id]) => id)),
      removedTopics: new Map(this.removed),
      configs: new Set(this.configs.keys()),
      acls: this.acls.size > 0,
      clientQuotas: this.quotas.size > 0,
      controllerEndpoints: this.endpoints.size > 0,
    };
  }

  /** The next image. The delta may keep replaying afterwards; apply() again for a later image. */
  apply(): MetadataImage {
    const brokers = new Map(this.base.brokers);
    for (const [id, reg] of this.brokers) {
      if (reg) brokers.set(id, reg);
      else brokers.delete(id);
    }
    const byId = new Map(this.base.topicsById);
    const byName = new Map(this.base.topicsByName);
    // Drop every changed topic's old name first: a topic removed and a new one
    // created under the same name may appear in either order.
    for (const id of this.topics.keys()) {
      const old = this.base.topicsById.get(id);
      if (old) byName.delete(old.name);
    }
    for (const [id, topic] of this.topics) {
      if (topic === null) {
        byId.delete(id);
        continue;
      }
      const frozen = freezeTopic(topic);
      byId.set(id, frozen);
      byName.set(frozen.name, frozen);
    }
    const configs = new Map(this.base.configs);
    for (const [key, entries] of this.configs) {
      if (entries.size === 0) configs.delete(key);
      else configs.set(key, new Map(entries));
    }
    let acls = this.base.acls;
    if (this.acls.size > 0) {
      const next = new Map(this.base.acls);
      for (const [id, b] of this.acls) {
        if (b) next.set(id, b);
        else next.delete(id);
      }
      acls = next;
    }
    let scram = this.base.scramCredentials;
    if (this.scram.size > 0) {
      const next = new Map(scram);
      for (const [name, creds] of this.scram) {
        if (creds.size === 0) next.delete(name);
        else next.set(name, new Map(creds));
      }
      scram = next;
    }
    const quotas = new Map(this.base.clientQuotas);
    for (const [key, entry] of this.quotas) {
      if (entry.values.size === 0) quotas.delete(key);
      else quotas.set(key, Object.freeze({ entity: Object.freeze({ ...entry.entity }), values: new Map(entry.values) }));
    }
    let endpoints = this.base.controllerEndpoints;
    if (this.endpoints.size > 0) {
      const next = new Map(endpoints);
      for (const [id, url] of this.endpoints) {
        if (url === null) next.delete(id);
        else next.set(id, url);
      }
      endpoints = next;
    }
    return new MetadataImage(this.offset, this.cluster, brokers, byName, byId, configs, this.nextProducerId, scram, quotas, acls, endpoints);
  }
}

function freezeTopic(t: MutableTopic | TopicImage): TopicImage {
  return Object.freeze({ name: t.name, topicId: t.topicId, partitions: new Map(t.partitions) });
}

function checkPartition(reg: PartitionRegistration, topicId: string, partition: number): void {
  const where = `${topicId}/${partition}`;
  assert(reg.replicas.length > 0, `partition ${where} has no replicas`);
  assert(reg.isr.every((b) => reg.replicas.includes(b)), `partition ${where}: ISR ${reg.isr} not within replicas ${reg.replicas}`);
  // Unclean election also keeps this: it sets the ISR to just the new leader.
  assert(reg.leader === NO_LEADER || reg.isr.includes(reg.leader), `partition ${where}: leader ${reg.leader} not in ISR ${reg.isr}`);
}

/** Rebuilds an image from a snapshot's records, standing for metadata log index `offset`. */
export function imageFromRecords(records: readonly MetadataRecord[], offset: number): MetadataImage {
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  delta.replayBatch(records, offset);
  return delta.apply();
}

/**
 * The image after `records`, as one batch at the next offset: a transient
 * working image for decisions that must see earlier records of the same
 * command or batch (it is never published; replay of the committed entry
 * makes the real one).
 */
export function imageWithRecords(image: MetadataImage, records: readonly MetadataRecord[]): MetadataImage {
  if (records.length === 0) return image;
  const delta = new MetadataDelta(image);
  delta.replayBatch(records, image.offset + 1);
  return delta.apply();
}
