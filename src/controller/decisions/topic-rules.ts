// Validation of topic creation requests, with Kafka's rules so names that work
// in Kafka work here: 1–249 characters from [a-zA-Z0-9._-], not "." or "..".
// Pure functions returning a SluiceError (or null), never throwing, so the
// controller can answer per topic in a batch request.

import { Errors, SluiceError } from '../../util/errors.js';

export const TOPIC_NAME_LENGTH_MAX = 249;
export const PARTITIONS_PER_TOPIC_MAX = 100_000;
const LEGAL_TOPIC_CHARS = /^[a-zA-Z0-9._-]+$/;

export function topicNameProblem(name: string): SluiceError | null {
  if (typeof name !== 'string' || name.length === 0) return new SluiceError(Errors.INVALID_TOPIC, 'topic name is empty');
  if (name === '.' || name === '..') return new SluiceError(Errors.INVALID_TOPIC, `topic name cannot be "${name}"`);
  if (name.length > TOPIC_NAME_LENGTH_MAX) {
    return new SluiceError(Errors.INVALID_TOPIC, `topic name is ${name.length} characters; the maximum is ${TOPIC_NAME_LENGTH_MAX}`);
  }
  if (!LEGAL_TOPIC_CHARS.test(name)) {
    return new SluiceError(Errors.INVALID_TOPIC, `topic name "${name}" may only contain ASCII letters, digits, '.', '_' and '-'`);
  }
  return null;
}

/** Kafka warns that '.' and '_' collide in metric names; we report the collision as an error. */
export function collidingTopicName(name: string, existing: Iterable<string>): string | null {
  const norm = name.replace(/\./g, '_');
  for (const other of existing) if (other !== name && other.replace(/\./g, '_') === norm) return other;
  return null;
}

export function partitionCountProblem(partitions: number): SluiceError | null {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > PARTITIONS_PER_TOPIC_MAX) {
    return new SluiceError(Errors.INVALID_PARTITIONS, `partition count must be an integer from 1 to ${PARTITIONS_PER_TOPIC_MAX}, got ${partitions}`);
  }
  return null;
}

export function replicationFactorProblem(rf: number, unfencedBrokers: number): SluiceError | null {
  if (!Number.isInteger(rf) || rf < 1 || rf > 32767) {
    return new SluiceError(Errors.INVALID_REPLICATION_FACTOR, `replication factor must be a positive integer, got ${rf}`);
  }
  if (rf > unfencedBrokers) {
    return new SluiceError(Errors.INVALID_REPLICATION_FACTOR, `replication factor ${rf} is larger than the ${unfencedBrokers} available brokers`);
  }
  return null;
}
