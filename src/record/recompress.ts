// A topic's compression.type applied to produced batches (Kafka's
// LogValidator): 'producer' keeps each batch as the client compressed it;
// a codec name makes the leader rewrite every batch that uses another codec
// into one that uses it, before offsets are assigned. A batch already in the
// target codec is kept as it is (no copy), as in Kafka.
//
// A rewritten batch keeps what identifies it and its records: producer id,
// epoch and base sequence (idempotence), the transactional and control
// flags, the timestamp type, and each record's timestamp, key, value and
// headers; offsets are renumbered 0..n-1 from the batch's base (producer
// batches are numbered that way already), and the leader stamps base offset
// and leader epoch on append as for any batch.

import { ATTRIBUTES_OFFSET, CompressionType, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK, batchSizeAt } from './batch-header.js';
import { defaultCompressionRegistry, type CompressionRegistry } from './compression.js';
import { decodeRecordBatch, encodeRecordBatch } from './record-batch.js';
import { concatBytes, int16At } from '../util/bytes.js';

/** The codec a topic's compression.type asks for, or null for 'producer' (keep the client's). */
export function topicCompression(value: string): CompressionType | null {
  switch (value) {
    case 'producer': return null;
    case 'uncompressed': case 'none': return CompressionType.None;
    case 'gzip': return CompressionType.Gzip;
    case 'snappy': return CompressionType.Snappy;
    case 'lz4': return CompressionType.Lz4;
    case 'zstd': return CompressionType.Zstd;
    default: throw new RangeError(`unknown compression.type ${JSON.stringify(value)}`);
  }
}

/** `buf`'s batches (already validated) with every one not in `target` rewritten into it; `buf` itself if none needs it. */
export function recompressBatches(buf: Uint8Array, target: CompressionType, codecs: CompressionRegistry = defaultCompressionRegistry): Uint8Array {
  const batches: Uint8Array[] = [];
  let changed = false;
  for (let pos = 0; pos < buf.length;) {
    const size = batchSizeAt(buf, pos);
    const view = buf.subarray(pos, pos + size);
    pos += size;
    const attributes = int16At(view, ATTRIBUTES_OFFSET);
    if ((attributes & COMPRESSION_CODEC_MASK) === target || (attributes & CONTROL_FLAG_MASK) !== 0) {
      batches.push(view);
      continue;
    }
    const { header, records } = decodeRecordBatch(view, 0, codecs);
    if (records.length === 0) {
      batches.push(view);
      continue;
    }
    changed = true;
    batches.push(encodeRecordBatch({
      records: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })),
      baseOffset: header.baseOffset,
      partitionLeaderEpoch: header.partitionLeaderEpoch,
      baseTimestamp: header.baseTimestamp,
      producerId: header.producerId,
      producerEpoch: header.producerEpoch,
      baseSequence: header.baseSequence,
      compression: target,
      isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
      timestampType: (attributes & TIMESTAMP_TYPE_MASK) !== 0 ? 'logAppend' : 'create',
    }, codecs));
  }
  return changed ? concatBytes(batches) : buf;
}
