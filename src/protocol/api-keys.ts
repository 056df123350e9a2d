// API keys of the client/broker protocol. Numbers follow Kafka's where the
// API has the same purpose, so traces and docs read alike; versions are
// Sluice's own (the bodies are msgpack maps, not Kafka's binary schemas).
// Each API's request/response types live in src/protocol/apis/<name>.ts.

export enum ApiKey {
  Produce = 0,
  Fetch = 1,
  ListOffsets = 2,
  Metadata = 3,
  ControlledShutdown = 7,
  OffsetCommit = 8,
  OffsetFetch = 9,
  FindCoordinator = 10,
  JoinGroup = 11,
  Heartbeat = 12,
  LeaveGroup = 13,
  SyncGroup = 14,
  DescribeGroups = 15,
  ListGroups = 16,
  SaslHandshake = 17,
  ApiVersions = 18,
  CreateTopics = 19,
  DeleteTopics = 20,
  DeleteRecords = 21,
  InitProducerId = 22,
  OffsetForLeaderEpoch = 23,
  DescribeAcls = 29,
  CreateAcls = 30,
  DeleteAcls = 31,
  DescribeConfigs = 32,
  AlterConfigs = 33,
  DescribeLogDirs = 35,
  SaslAuthenticate = 36,
  CreatePartitions = 37,
  DeleteGroups = 42,
  ElectLeaders = 43,
  AlterPartitionReassignments = 45,
  ListPartitionReassignments = 46,
  OffsetDelete = 47,
  DescribeClientQuotas = 48,
  AlterClientQuotas = 49,
  DescribeUserScramCredentials = 50,
  AlterUserScramCredentials = 51,
  DescribeQuorum = 55,
  AlterPartition = 56,
  DescribeCluster = 60,
  BrokerRegistration = 62,
  BrokerHeartbeat = 63,
}

export function apiName(key: number): string {
  return ApiKey[key] ?? `Unknown(${key})`;
}
