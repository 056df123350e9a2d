// AlterClientQuotas (key 49), v0-1, flexible from v1. Sets or removes quota
// keys of entities (KIP-546), each entry answered on its own.
//
//   request  entries [entity [entityType, entityName (nullable: default)],
//                     ops [key, value float64, remove bool]], validateOnly bool
//   response throttleTimeMs, entries [errorCode, errorMessage (nullable), entity [entityType, entityName (nullable)]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

const entity = (): ReturnType<typeof f.array> => f.array('entity', '0+', [f.string('entityType'), f.string('entityName', '0+', { nullable: '0+' })]);

export const alterClientQuotas: KafkaApiSpec = {
  apiKey: 49,
  name: 'AlterClientQuotas',
  request: message('AlterClientQuotasRequest', 49, '0-1', '1+', [
    f.array('entries', '0+', [
      entity(),
      f.array('ops', '0+', [f.string('key'), f.float64('value'), f.bool('remove')]),
    ]),
    f.bool('validateOnly'),
  ]),
  response: message('AlterClientQuotasResponse', 49, '0-1', '1+', [
    f.int32('throttleTimeMs'),
    f.array('entries', '0+', [
      f.int16('errorCode'),
      f.string('errorMessage', '0+', { nullable: '0+' }),
      entity(),
    ]),
  ]),
};
