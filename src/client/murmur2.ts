// MurmurHash2 (32-bit) exactly as Kafka's Java client computes it
// (`Utils.murmur2`, seed 0x9747b28c), so a key lands on the partition Kafka
// would choose: `toPositive(murmur2(keyBytes)) % numPartitions`.
//
// Bit-compatibility notes: the hash works on signed 32-bit ints with
// wrap-around multiplication (Math.imul), reads the body 4 bytes at a time
// little-endian, and uses logical (unsigned) right shifts, as Java's `>>>`.
// `toPositive` masks the sign bit (it is not Math.abs: Java's abs of
// MIN_VALUE stays negative, the mask never does).

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** Kafka's murmur2 of `data`, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const bodyEnd = length & ~3;
  for (let i = 0; i < bodyEnd; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & 3;
  if (tail === 3) h ^= data[bodyEnd + 2]! << 16;
  if (tail >= 2) h ^= data[bodyEnd + 1]! << 8;
  if (tail >= 1) {
    h ^= data[bodyEnd]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's `Utils.toPositive`: clears the sign bit. */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition Kafka's default partitioner picks for a non-null key. */
export function murmur2Partition(key: Uint8Array, partitionCount: number): number {
  return toPositive(murmur2(key)) % partitionCount;
}
