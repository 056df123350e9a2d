// The portable entry of the client library: everything a program needs to
// produce, consume and administer, with no Node-only module. The WebSocket
// implementation comes from the `webSocketFactory` option (or the global
// WebSocket); the Node entry point (src/index.ts) fills in ws's.
//
// `Client` adds the factories (producer, consumer, admin, groupAdmin) to the
// cluster client core (client.ts), which Producer, Consumer and Admin are
// built on.

import { Client as ClusterClient } from './client.js';
import { Producer, type ProducerOptions } from './producer.js';
import { Consumer, type ConsumerOptions } from './consumer.js';
import { Admin, type AdminOptions } from './admin.js';
import { GroupAdmin } from './group-admin.js';

export class Client extends ClusterClient {
  producer(opts: ProducerOptions = {}): Producer {
    return new Producer(this, opts);
  }

  consumer(opts: ConsumerOptions = {}): Consumer {
    return new Consumer(this, opts);
  }

  admin(opts: AdminOptions = {}): Admin {
    return new Admin(this, opts);
  }

  groupAdmin(): GroupAdmin {
    return new GroupAdmin(this);
  }
}

export type { ClientOptions, ClientLogger, RetryOptions, TopicInfo, PartitionInfo, ClusterInfo } from './client.js';
export { Producer } from './producer.js';
export type { ProducerOptions, ProducerMessage, ProducerRecord, ProducerBatchRecord, RecordMetadata, Acks } from './producer.js';
export type { Transaction, SendOffsetsInput, ConsumerGroupMetadata, GroupMetadataSource, TransactionState, TransactionStatus } from './transaction.js';
export { Consumer } from './consumer.js';
export type {
  ConsumerOptions, SubscribeOptions, ConsumerEvents, Batch, ConsumerMessage, EachBatchPayload, EachMessagePayload,
  KafkaMessage, RunOptions, GroupJoinEvent, TopicPartition, IsolationLevelName,
} from './consumer.js';
export { Admin } from './admin.js';
export type { AdminOptions, NewTopic, TopicDescription, BrokerDescription, ClusterDescription, ConfigResource, ConfigResourceType } from './admin.js';
export type { ListTransactionsOptions, TransactionDescription, TransactionListing } from './admin.js';
export type { QuorumDescription, QuorumMember, BrokerLogDirs, ElectionResult, OngoingReassignment } from './admin.js';
export { GroupAdmin } from './group-admin.js';
export type { GroupListing, GroupDescription, GroupMemberDescription, PartitionOffsets, ResetTarget, ResetOffsetsOptions } from './group-admin.js';
export { DefaultPartitioner } from './partitioners.js';
export type { Partitioner, PartitionerInput } from './partitioners.js';
export { murmur2, murmur2Partition } from './murmur2.js';
export type { Message, MessageBytes, ConsumedRecord } from './records.js';
export { BrokerConnection } from './broker-connection.js';
export type { SaslOptions, ClientSaslMechanism } from './sasl.js';
export type { WebSocketFactory, WebSocketLike } from '../net/client-link.js';
