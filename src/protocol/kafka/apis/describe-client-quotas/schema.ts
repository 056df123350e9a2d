// DescribeClientQuotas (key 48), v0-1, flexible from v1. The client quotas of
// the entities a filter matches (KIP-546).
//
//   request  components [entityType, matchType int8 (0 exact, 1 default, 2 any specified), match (nullable)],
//            strict bool
//   response throttleTimeMs, errorCode, errorMessage (nullable),
//            entries (nullable) [entity [entityType, entityName (nullable: default)], values [key, value float64]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeClientQuotas: KafkaApiSpec = {
  apiKey: 48,
  name: 'DescribeClientQuotas',
  request: message('DescribeClientQuotasRequest', 48, '0-1', '1+', [
    f.array('components', '0+', [
      f.string('entityType'),
      f.int8('matchType'),
      f.string('match', '0+', { nullable: '0+' }),
    ]),
    f.bool('strict'),
  ]),
  response: message('DescribeClientQuotasResponse', 48, '0-1', '1+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+' }),
    f.array('entries', '0+', [
      f.array('entity', '0+', [f.string('entityType'), f.string('entityName', '0+', { nullable: '0+' })]),
      f.array('values', '0+', [f.string('key'), f.float64('value')]),
    ], { nullable: '0+' }),
  ]),
};
