// DescribeConfigs (key 32), v0-4, flexible from v4. The configs of topics and
// brokers (resourceType 2 = topic, 4 = broker, 8 = broker logger), each with
// its value, source, synonyms (v1+, when asked) and documentation (v3+).
//
//   request  resources [resourceType int8, resourceName, configurationKeys [string] (nullable: all)],
//            v1+: includeSynonyms bool, v3+: includeDocumentation bool
//   response throttleTimeMs, results [errorCode, errorMessage (nullable), resourceType int8, resourceName,
//            configs [name, value (nullable), readOnly bool, v0: isDefault bool, v1+: configSource int8 (-1),
//                     isSensitive bool, v1+: synonyms [name, value (nullable), source int8],
//                     v3+: configType int8, documentation (nullable)]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeConfigs: KafkaApiSpec = {
  apiKey: 32,
  name: 'DescribeConfigs',
  request: message('DescribeConfigsRequest', 32, '0-4', '4+', [
    f.array('resources', '0+', [
      f.int8('resourceType'),
      f.string('resourceName'),
      f.array('configurationKeys', '0+', 'string', { nullable: '0+' }),
    ]),
    f.bool('includeSynonyms', '1+'),
    f.bool('includeDocumentation', '3+'),
  ]),
  response: message('DescribeConfigsResponse', 32, '0-4', '4+', [
    f.int32('throttleTimeMs'),
    f.array('results', '0+', [
      f.int16('errorCode'),
      f.string('errorMessage', '0+', { nullable: '0+' }),
      f.int8('resourceType'),
      f.string('resourceName'),
      f.array('configs', '0+', [
        f.string('name'),
        f.string('value', '0+', { nullable: '0+' }),
        f.bool('readOnly'),
        f.bool('isDefault', '0'),
        f.int8('configSource', '1+', { default: -1 }),
        f.bool('isSensitive'),
        f.array('synonyms', '1+', [f.string('name', '1+'), f.string('value', '1+', { nullable: '0+' }), f.int8('source', '1+')]),
        f.int8('configType', '3+'),
        f.string('documentation', '3+', { nullable: '0+' }),
      ]),
    ]),
  ]),
};
