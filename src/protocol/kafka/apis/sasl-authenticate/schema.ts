// SaslAuthenticate (key 36), v0-2, flexible from v2. One SASL message each
// way; v1+ answers session_lifetime_ms (KIP-368: re-authenticate before it
// passes; 0 means no limit).
//
//   request  authBytes bytes
//   response errorCode int16, errorMessage string (nullable), authBytes bytes, v1+: sessionLifetimeMs int64 (0)
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const saslAuthenticate: KafkaApiSpec = {
  apiKey: 36,
  name: 'SaslAuthenticate',
  request: message('SaslAuthenticateRequest', 36, '0-2', '2+', [f.bytes('authBytes')]),
  response: message('SaslAuthenticateResponse', 36, '0-2', '2+', [
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+', default: null }),
    f.bytes('authBytes'),
    f.int64('sessionLifetimeMs', '1+', { default: 0 }),
  ]),
};
