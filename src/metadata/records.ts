// Metadata records: the commands of the metadata log (KRaft's record types,
// trimmed to what Sluice needs). The active controller generates them, Raft
// commits them, and every node replays them into its MetadataImage through
// the same delta path (delta.ts). Records are plain data; `v` is the record
// version so a newer node can still read older logs and snapshots.
//
// Invariants the controller guarantees when it emits a record (replay asserts
// the cheap ones): topic ids are unique; a PartitionChange only names an
// existing partition; partitionEpoch grows by exactly one per change;
// leaderEpoch grows by one whenever the leader changes.

export type BrokerId = number;
/** Leader value of a partition with no leader (offline). */
export const NO_LEADER = -1;

export interface Endpoint {
  /** Listener name, e.g. "CLIENT" or "CONTROLLER". */
  readonly name: string;
  /** ws://host:port as clients should dial it. */
  readonly url: string;
}

export interface ClusterRecord {
  readonly type: 'cluster';
  readonly v: 1;
  readonly clusterId: string;
  /** Feature level of the metadata format; gates new record types. */
  readonly metadataVersion: number;
}

export interface RegisterBrokerRecord {
  readonly type: 'registerBroker';
  readonly v: 1;
  readonly brokerId: BrokerId;
  /** Random per process start; a new incarnation replaces the old registration. */
  readonly incarnationId: string;
  /** The metadata offset of this record: monotonic per broker, fences stale heartbeats. */
  readonly brokerEpoch: number;
  readonly endpoints: readonly Endpoint[];
  readonly rack: string | null;
  /** A broker registers fenced; it is unfenced once caught up with the metadata log. */
  readonly fenced: boolean;
}

export interface UnregisterBrokerRecord {
  readonly type: 'unregisterBroker';
  readonly v: 1;
  readonly brokerId: BrokerId;
  readonly brokerEpoch: number;
}

export interface BrokerRegistrationChangeRecord {
  readonly type: 'brokerRegistrationChange';
  readonly v: 1;
  readonly brokerId: BrokerId;
  readonly brokerEpoch: number;
  readonly fenced?: boolean;
  readonly inControlledShutdown?: boolean;
}

export interface TopicRecord {
  readonly type: 'topic';
  readonly v: 1;
  readonly name: string;
  readonly topicId: string;
}

export interface PartitionRecord {
  readonly type: 'partition';
  readonly v: 1;
  readonly topicId: string;
  readonly partition: number;
  readonly replicas: readonly BrokerId[];
  readonly isr: readonly BrokerId[];
  readonly leader: BrokerId;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  /** Reassignment in progress: replicas being added / removed (both ⊆ replicas). */
  readonly addingReplicas: readonly BrokerId[];
  readonly removingReplicas: readonly BrokerId[];
}

/** A change to one partition; absent fields are unchanged. Always bumps partitionEpoch. */
export interface PartitionChangeRecord {
  readonly type: 'partitionChange';
  readonly v: 1;
  readonly topicId: string;
  readonly partition: number;
  readonly leader?: BrokerId;
  readonly isr?: readonly BrokerId[];
  readonly replicas?: readonly BrokerId[];
  readonly addingReplicas?: readonly BrokerId[];
  readonly removingReplicas?: readonly BrokerId[];
}

export type ConfigResourceType = 'topic' | 'broker' | 'cluster';

/** Sets (value non-null) or deletes (null) one config key of a resource. */
export interface ConfigRecord {
  readonly type: 'config';
  readonly v: 1;
  readonly resourceType: ConfigResourceType;
  /** Topic name, broker id as a string, or "" for the cluster. */
  readonly resourceName: string;
  readonly name: string;
  readonly value: string | null;
}

export interface RemoveTopicRecord {
  readonly type: 'removeTopic';
  readonly v: 1;
  readonly topicId: string;
}

/** A block of producer ids handed to a broker (idempotent producers). */
export interface ProducerIdsRecord {
  readonly type: 'producerIds';
  readonly v: 1;
  readonly brokerId: BrokerId;
  readonly brokerEpoch: number;
  /** The first id not yet handed out after this block. */
  readonly nextProducerId: number;
}

/**
 * One ACL (Kafka's AccessControlEntryRecord): a binding with the id the
 * controller gave it. Codes are Kafka's (src/security/acl.ts).
 */
export interface AccessControlEntryRecord {
  readonly type: 'accessControlEntry';
  readonly v: 1;
  readonly id: string;
  readonly resourceType: number;
  readonly resourceName: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

/** Removes the ACL with this id (Kafka's RemoveAccessControlEntryRecord). */
export interface RemoveAccessControlEntryRecord {
  readonly type: 'removeAccessControlEntry';
  readonly v: 1;
  readonly id: string;
}

/**
 * A user's salted SCRAM credential for one mechanism (Kafka's
 * UserScramCredentialRecord); replaces any earlier one for the same
 * (name, mechanism). Never a password: see security/sasl/scram-credential.ts.
 */
export interface UserScramCredentialRecord {
  readonly type: 'userScramCredential';
  readonly v: 1;
  readonly name: string;
  /** Kafka's ScramMechanism id: 1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512. */
  readonly mechanism: number;
  readonly salt: Uint8Array;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
  readonly iterations: number;
}

/** Removes a user's credential for one mechanism (Kafka's RemoveUserScramCredentialRecord). */
export interface RemoveUserScramCredentialRecord {
  readonly type: 'removeUserScramCredential';
  readonly v: 1;
  readonly name: string;
  readonly mechanism: number;
}

/** One component of a client-quota entity (Kafka's EntityData); a null name is the type's default. */
export interface QuotaEntityPart {
  readonly entityType: 'user' | 'client-id';
  readonly entityName: string | null;
}

/**
 * Kafka's ClientQuotaRecord: sets (remove false) or removes one quota key of
 * one entity. The entity is a user, a client id, or a user and a client id,
 * each by name or as the default (docs/security.md, "Quotas").
 */
export interface ClientQuotaRecord {
  readonly type: 'clientQuota';
  readonly v: 1;
  /** At most one part per entity type, in the order user, client-id. */
  readonly entity: readonly QuotaEntityPart[];
  readonly key: string;
  readonly value: number;
  readonly remove: boolean;
}

/**
 * The Raft listener of a controller added at runtime (sluice cluster
 * add-controller, KIP-853): every voter dials it from this record, since the
 * node is in no node's --controller-quorum. url null: the entry is removed.
 */
export interface ControllerEndpointRecord {
  readonly type: 'controllerEndpoint';
  readonly v: 1;
  readonly nodeId: number;
  readonly url: string | null;
}

export type MetadataRecord =
  | ClusterRecord
  | ControllerEndpointRecord
  | RegisterBrokerRecord
  | UnregisterBrokerRecord
  | BrokerRegistrationChangeRecord
  | TopicRecord
  | PartitionRecord
  | PartitionChangeRecord
  | ConfigRecord
  | RemoveTopicRecord
  | ProducerIdsRecord
  | AccessControlEntryRecord
  | RemoveAccessControlEntryRecord
  | UserScramCredentialRecord
  | RemoveUserScramCredentialRecord
  | ClientQuotaRecord;

export type MetadataRecordType = MetadataRecord['type'];
