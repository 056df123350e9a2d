// MetadataImage: the immutable picture of the cluster that every node builds
// by replaying the metadata log (brokers, topics, partitions, configs). A new
// image is only ever made by MetadataDelta.apply(); unchanged parts are shared
// with the previous image, so publishing an image per committed batch is cheap.
//
// Invariants: topicsByName and topicsById index the same TopicImage objects;
// every partition's isr ⊆ replicas and leader ∈ isr ∪ {NO_LEADER};
// `offset` is the metadata log index of the last record replayed into it.

import type { BrokerId, Endpoint, MetadataRecord, ConfigResourceType, PartitionRecord } from './records.js';
import { partsOfEntity, type QuotaEntity } from './quota-defs.js';
import type { AclBinding } from '../security/acl.js';
import { AclIndex } from '../security/authorizer.js';

export interface BrokerRegistration {
  readonly brokerId: BrokerId;
  readonly incarnationId: string;
  readonly brokerEpoch: number;
  readonly endpoints: readonly Endpoint[];
  readonly rack: string | null;
  readonly fenced: boolean;
  readonly inControlledShutdown: boolean;
}

/** A partition's state in the image: the fields of its PartitionRecord after every change. */
export type PartitionRegistration = Omit<PartitionRecord, 'type' | 'v' | 'topicId' | 'partition'>;

export interface TopicImage {
  readonly name: string;
  readonly topicId: string;
  readonly partitions: ReadonlyMap<number, PartitionRegistration>;
}

export interface ClusterInfo {
  readonly clusterId: string;
  readonly metadataVersion: number;
}

/** The client quotas of one entity (a user, a client id, or both). */
export interface ClientQuotaEntry {
  readonly entity: QuotaEntity;
  /** Quota key → value; never empty (an entity with no keys left is dropped). */
  readonly values: ReadonlyMap<string, number>;
}

/** Key of a config resource in MetadataImage.configs. */
export function configKey(type: ConfigResourceType, name: string): string {
  return `${type}:${name}`;
}

// Before the class: its static EMPTY image is built at class definition.
const EMPTY_ACLS: ReadonlyMap<string, AclBinding> = new Map();
const ACL_INDEXES = new WeakMap<ReadonlyMap<string, AclBinding>, AclIndex>();
/** A user's SCRAM credential for one mechanism, as replayed from UserScramCredentialRecord. */
export interface ScramCredentialImage {
  /** Kafka's ScramMechanism id (1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512). */
  readonly mechanism: number;
  readonly salt: Uint8Array;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
  readonly iterations: number;
}

/** Declared before the class: MetadataImage.EMPTY uses it while the class initializes. */
const EMPTY_ENDPOINTS: ReadonlyMap<number, string> = new Map();

export class MetadataImage {
  static readonly EMPTY = new MetadataImage(-1, null, new Map(), new Map(), new Map(), new Map(), 0, new Map());

  constructor(
    /** Metadata log index of the last replayed record; -1 for the empty image. */
    readonly offset: number,
    readonly cluster: ClusterInfo | null,
    readonly brokers: ReadonlyMap<BrokerId, BrokerRegistration>,
    readonly topicsByName: ReadonlyMap<string, TopicImage>,
    readonly topicsById: ReadonlyMap<string, TopicImage>,
    /** configKey(type, name) → key → value. */
    readonly configs: ReadonlyMap<string, ReadonlyMap<string, string>>,
    /** The next producer id the controller may hand out. */
    readonly nextProducerId: number,
    /** User name → mechanism id → salted SCRAM credential (never a password). */
    readonly scramCredentials: ReadonlyMap<string, ReadonlyMap<number, ScramCredentialImage>> = new Map(),
    /** quotaEntityKey(entity) → that entity's client quotas. */
    readonly clientQuotas: ReadonlyMap<string, ClientQuotaEntry> = new Map(),
    /** ACLs by the id the controller gave each (AccessControlEntryRecord). */
    readonly acls: ReadonlyMap<string, AclBinding> = EMPTY_ACLS,
    /** Raft listener url of each controller added at runtime (ControllerEndpointRecord), by node id. */
    readonly controllerEndpoints: ReadonlyMap<number, string> = EMPTY_ENDPOINTS,
  ) {}

  /** The ACLs indexed for the authorizer; built once per set of ACLs, shared by images that did not change them. */
  aclIndex(): AclIndex {
    let index = ACL_INDEXES.get(this.acls);
    if (!index) ACL_INDEXES.set(this.acls, index = new AclIndex(this.acls.values()));
    return index;
  }

  scramCredential(user: string, mechanism: number): ScramCredentialImage | undefined {
    return this.scramCredentials.get(user)?.get(mechanism);
  }

  topic(name: string): TopicImage | undefined {
    return this.topicsByName.get(name);
  }

  partition(topic: string, partition: number): PartitionRegistration | undefined {
    return this.topicsByName.get(topic)?.partitions.get(partition);
  }

  config(type: ConfigResourceType, name: string): ReadonlyMap<string, string> {
    return this.configs.get(configKey(type, name)) ?? EMPTY_CONFIG;
  }

  /** Brokers that are registered and not fenced, in id order. */
  unfencedBrokers(): BrokerRegistration[] {
    return [...this.brokers.values()].filter((b) => !b.fenced).sort((a, b) => a.brokerId - b.brokerId);
  }

  /**
   * Records that rebuild this image from empty: the payload of a metadata
   * snapshot. Deterministic order (by id/name) so equal images give equal bytes.
   */
  toRecords(): MetadataRecord[] {
    const out: MetadataRecord[] = [];
    if (this.cluster) out.push({ type: 'cluster', v: 1, ...this.cluster });
    for (const b of sortedBy([...this.brokers.values()], (x) => x.brokerId)) {
      out.push({ type: 'registerBroker', v: 1, brokerId: b.brokerId, incarnationId: b.incarnationId, brokerEpoch: b.brokerEpoch, endpoints: b.endpoints, rack: b.rack, fenced: b.fenced });
      if (b.inControlledShutdown) out.push({ type: 'brokerRegistrationChange', v: 1, brokerId: b.brokerId, brokerEpoch: b.brokerEpoch, inControlledShutdown: true });
    }
    for (const t of sortedBy([...this.topicsByName.values()], (x) => x.name)) {
      out.push({ type: 'topic', v: 1, name: t.name, topicId: t.topicId });
      for (const [p, reg] of sortedBy([...t.partitions.entries()], (x) => x[0])) {
        out.push({ type: 'partition', v: 1, topicId: t.topicId, partition: p, ...reg });
      }
    }
    for (const [key, entries] of sortedBy([...this.configs.entries()], (x) => x[0])) {
      const sep = key.indexOf(':');
      const resourceType = key.slice(0, sep) as ConfigResourceType;
      const resourceName = key.slice(sep + 1);
      for (const [name, value] of sortedBy([...entries.entries()], (x) => x[0])) {
        out.push({ type: 'config', v: 1, resourceType, resourceName, name, value });
      }
    }
    for (const [id, b] of sortedBy([...this.acls.entries()], (x) => x[0])) out.push({ type: 'accessControlEntry', v: 1, id, ...b });
    for (const [name, byMechanism] of sortedBy([...this.scramCredentials.entries()], (x) => x[0])) {
      for (const [mechanism, c] of sortedBy([...byMechanism.entries()], (x) => x[0])) {
        out.push({ type: 'userScramCredential', v: 1, name, mechanism, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey, iterations: c.iterations });
      }
    }
    for (const [, q] of sortedBy([...this.clientQuotas.entries()], (x) => x[0])) {
      for (const [key, value] of sortedBy([...q.values.entries()], (x) => x[0])) {
        out.push({ type: 'clientQuota', v: 1, entity: partsOfEntity(q.entity), key, value, remove: false });
      }
    }
    for (const [nodeId, url] of sortedBy([...this.controllerEndpoints.entries()], (x) => x[0])) out.push({ type: 'controllerEndpoint', v: 1, nodeId, url });
    if (this.nextProducerId > 0) out.push({ type: 'producerIds', v: 1, brokerId: -1, brokerEpoch: -1, nextProducerId: this.nextProducerId });
    return out;
  }
}

const EMPTY_CONFIG: ReadonlyMap<string, string> = new Map();


function sortedBy<T>(items: T[], key: (x: T) => number | string): T[] {
  return items.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}
