// Where a group lives: partition abs(hashCode(groupId)) mod N of
// __consumer_offsets, with Java's String.hashCode and Kafka's Utils.abs
// (which maps Integer.MIN_VALUE to 0), so a group lands on the same
// partition number as it would in Kafka. The coordinator is that partition's
// leader.

import { assert } from '../util/assert.js';

/** Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in 32-bit two's complement. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: |n|, except that Integer.MIN_VALUE (whose |n| does not fit) is 0. */
export function kafkaAbs(n: number): number {
  return n === -0x80000000 ? 0 : Math.abs(n);
}

/** The __consumer_offsets partition of `groupId` when the topic has `partitions` partitions. */
export function coordinatorPartition(groupId: string, partitions: number): number {
  assert(Number.isSafeInteger(partitions) && partitions > 0, `bad partition count ${partitions}`);
  return kafkaAbs(javaStringHashCode(groupId)) % partitions;
}
