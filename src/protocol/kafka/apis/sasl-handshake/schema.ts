// SaslHandshake (key 17), v0-1, never flexible. The client names a
// mechanism; the broker answers the mechanisms it enables. v1 means the
// exchange continues in SaslAuthenticate requests (v0's raw tokens without
// Kafka framing are not served: see docs/kafka-compatibility.md).
//
//   request  mechanism string
//   response errorCode int16, mechanisms [string]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const saslHandshake: KafkaApiSpec = {
  apiKey: 17,
  name: 'SaslHandshake',
  request: message('SaslHandshakeRequest', 17, '0-1', 'none', [f.string('mechanism')]),
  response: message('SaslHandshakeResponse', 17, '0-1', 'none', [f.int16('errorCode'), f.array('mechanisms', '0+', 'string')]),
};
