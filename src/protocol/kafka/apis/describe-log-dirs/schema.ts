// DescribeLogDirs (key 35), v0-4, flexible from v2. Per log directory of the
// broker asked: its partitions' sizes and how far each is behind its leader.
//
//   request  topics (nullable: all) [topic, partitions [int32]]
//   response throttleTimeMs, v3+: errorCode, results [errorCode, logDir,
//            topics [name, partitions [partitionIndex, partitionSize int64, offsetLag int64, isFutureKey bool]],
//            v4+: totalBytes int64 (-1), usableBytes int64 (-1)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeLogDirs: KafkaApiSpec = {
  apiKey: 35,
  name: 'DescribeLogDirs',
  request: message('DescribeLogDirsRequest', 35, '0-4', '2+', [
    f.array('topics', '0+', [f.string('topic'), f.array('partitions', '0+', 'int32')], { nullable: '0+' }),
  ]),
  response: message('DescribeLogDirsResponse', 35, '0-4', '2+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode', '3+'),
    f.array('results', '0+', [
      f.int16('errorCode'),
      f.string('logDir'),
      f.array('topics', '0+', [
        f.string('name'),
        f.array('partitions', '0+', [
          f.int32('partitionIndex'), f.int64('partitionSize'), f.int64('offsetLag'), f.bool('isFutureKey'),
        ]),
      ]),
      f.int64('totalBytes', '4+', { default: -1 }),
      f.int64('usableBytes', '4+', { default: -1 }),
    ]),
  ]),
};
