// Every API the Kafka listener serves, by api key. One line per API; its
// handler lives in its own file beside this one, its wire table under
// src/protocol/kafka/apis/.

import type { KafkaApiHandler } from './api.js';
import { apiVersionsHandler } from './api-versions.js';
import { metadataHandler } from './metadata.js';
import { createTopicsHandler } from './create-topics.js';
import { deleteTopicsHandler } from './delete-topics.js';
import { deleteRecordsHandler } from './delete-records.js';
import { describeConfigsHandler } from './describe-configs.js';
import { alterConfigsHandler, incrementalAlterConfigsHandler } from './alter-configs.js';
import { describeLogDirsHandler } from './describe-log-dirs.js';
import { createPartitionsHandler } from './create-partitions.js';
import { electLeadersHandler } from './elect-leaders.js';
import { alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler } from './partition-reassignments.js';
import { describeClusterHandler } from './describe-cluster.js';
import { produceHandler } from './produce.js';
import { fetchHandler } from './fetch.js';
import { listOffsetsHandler } from './list-offsets.js';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch.js';

const handlers: KafkaApiHandler[] = [
  apiVersionsHandler(() => KAFKA_HANDLERS),
  metadataHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  describeLogDirsHandler,
  createPartitionsHandler,
  electLeadersHandler,
  incrementalAlterConfigsHandler,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
  describeClusterHandler,
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  offsetForLeaderEpochHandler,
];

export const KAFKA_HANDLERS: ReadonlyMap<number, KafkaApiHandler> = new Map(handlers.map((h) => [h.spec.apiKey, h]));
