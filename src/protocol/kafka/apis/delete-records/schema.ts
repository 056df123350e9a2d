// DeleteRecords (key 21), v0-2, flexible from v2. Moves partitions' log start
// offsets up (offset -1: to the high watermark); records below become unreadable.
//
//   request  topics [name, partitions [partitionIndex, offset int64]], timeoutMs int32
//   response throttleTimeMs, topics [name, partitions [partitionIndex, lowWatermark int64, errorCode]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const deleteRecords: KafkaApiSpec = {
  apiKey: 21,
  name: 'DeleteRecords',
  request: message('DeleteRecordsRequest', 21, '0-2', '2+', [
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.int64('offset')]),
    ]),
    f.int32('timeoutMs'),
  ]),
  response: message('DeleteRecordsResponse', 21, '0-2', '2+', [
    f.int32('throttleTimeMs'),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.int64('lowWatermark'), f.int16('errorCode')]),
    ]),
  ]),
};
