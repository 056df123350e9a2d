// The per-item answers of the controller's admin APIs (createTopics,
// deleteTopics, alterConfigs, describeConfigs, electLeaders,
// alterPartitionReassignments, listPartitionReassignments) — wire shapes, so
// they live here: the controller's commands produce them and the client reads
// them, and neither imports the other (the client never imports server code;
// LAYERS in eslint.config.js).
//
// item     { errorCode, errorMessage }                          (0, null: done)
// created  item + { name, topicId, numPartitions, replicationFactor }
// config   { name, value, source: 'topic'|'cluster'|'default', doc }
// resource item + { resourceType: 'topic'|'broker'|'cluster', resourceName }
// ongoing  { topic, partition, replicas, addingReplicas, removingReplicas, original, target }

/** One item's outcome: errorCode 0 and errorMessage null when it succeeded. */
export interface ItemError {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface CreatedTopic extends ItemError {
  readonly name: string;
  readonly topicId: string | null;
  readonly numPartitions: number;
  readonly replicationFactor: number;
}

/** A partition being reassigned: its replica set now, and where it came from and goes (broker ids). */
export interface OngoingReassignment extends TopicPartition {
  readonly replicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
  readonly original: readonly number[];
  readonly target: readonly number[];
}

/** The outcome of altering one resource's configs. */
export interface ResourceResult extends ItemError {
  readonly resourceType: 'topic' | 'broker' | 'cluster';
  readonly resourceName: string;
}

/** One config key's effective value and where it comes from. */
export interface DescribedConfig {
  readonly name: string;
  readonly value: string;
  readonly source: 'topic' | 'cluster' | 'default';
  readonly doc: string;
}
