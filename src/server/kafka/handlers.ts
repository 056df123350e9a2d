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
import { findCoordinatorHandler } from './find-coordinator.js';
import { joinGroupHandler } from './join-group.js';
import { syncGroupHandler } from './sync-group.js';
import { heartbeatHandler } from './heartbeat.js';
import { leaveGroupHandler } from './leave-group.js';
import { offsetCommitHandler } from './offset-commit.js';
import { offsetFetchHandler } from './offset-fetch.js';
import { listGroupsHandler } from './list-groups.js';
import { describeGroupsHandler } from './describe-groups.js';
import { deleteGroupsHandler } from './delete-groups.js';
import { offsetDeleteHandler } from './offset-delete.js';
import { initProducerIdHandler } from './init-producer-id.js';
import { createAclsHandler, deleteAclsHandler, describeAclsHandler } from './acls.js';
import { saslAuthenticateHandler, saslHandshakeHandler } from './sasl.js';
import { alterUserScramCredentialsHandler, describeUserScramCredentialsHandler } from './scram-credentials.js';
import { alterClientQuotasHandler, describeClientQuotasHandler } from './client-quotas.js';
import { addPartitionsToTxnHandler } from './add-partitions-to-txn.js';
import { addOffsetsToTxnHandler } from './add-offsets-to-txn.js';
import { endTxnHandler } from './end-txn.js';
import { txnOffsetCommitHandler } from './txn-offset-commit.js';
import { describeTransactionsHandler, listTransactionsHandler } from './transactions-admin.js';

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
  offsetCommitHandler,
  offsetFetchHandler,
  findCoordinatorHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  initProducerIdHandler,
  deleteGroupsHandler,
  offsetDeleteHandler,
  describeAclsHandler,
  createAclsHandler,
  deleteAclsHandler,
  saslHandshakeHandler,
  saslAuthenticateHandler,
  describeUserScramCredentialsHandler,
  alterUserScramCredentialsHandler,
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  txnOffsetCommitHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
];

export const KAFKA_HANDLERS: ReadonlyMap<number, KafkaApiHandler> = new Map(handlers.map((h) => [h.spec.apiKey, h]));
