// The server side of OAUTHBEARER (RFC 7628) as Kafka clients speak it: one
// client message
//   gs2-header \x01 auth=Bearer <token> \x01 [key=value \x01]* \x01
// whose token is a JWT checked by JwtValidator. Success answers an empty
// message; the session lasts until the token's exp (KIP-368 re-authentication).
// A bad token fails at once with the validator's reason (Kafka's server first
// sends an RFC 7628 error challenge and fails on the client's \x01; clients
// see the same SASL_AUTHENTICATION_FAILED either way).

import type { Clock } from '../../util/clock.js';
import { OAUTHBEARER, failure, type SaslServer, type SaslStep } from './mechanism.js';
import type { JwtValidator } from './jwt.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The token of an OAUTHBEARER client-first message; a string starting "invalid" otherwise. */
export function parseOauthBearerMessage(message: string): { token: string; extensions: Record<string, string> } | { error: string } {
  const m = /^([ny]|p=[^,\x01]*),(a=[^,\x01]*)?,\x01(.*)\x01\x01$/s.exec(message);
  if (!m) return { error: 'invalid OAUTHBEARER message: expected gs2 header, \\x01-separated key=value pairs and \\x01\\x01' };
  if (m[1]!.startsWith('p=')) return { error: 'channel binding is not supported' };
  const extensions: Record<string, string> = {};
  let token: string | null = null;
  for (const kv of m[3]!.split('\x01')) {
    const eq = kv.indexOf('=');
    if (eq <= 0) return { error: 'invalid OAUTHBEARER message: a pair is not key=value' };
    const key = kv.slice(0, eq);
    const value = kv.slice(eq + 1);
    if (key === 'auth') {
      const b = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(value);
      if (!b) return { error: 'invalid OAUTHBEARER message: auth must be "Bearer <token>"' };
      token = b[1]!;
    } else extensions[key] = value;
  }
  if (token === null) return { error: 'invalid OAUTHBEARER message: no auth=Bearer pair' };
  return { token, extensions };
}

export class OauthBearerServer implements SaslServer {
  readonly mechanism = OAUTHBEARER;
  private done = false;

  constructor(private readonly validator: JwtValidator, private readonly clock: Clock) {}

  step(clientMessage: Uint8Array): SaslStep {
    if (this.done) return failure('the OAUTHBEARER exchange is already over');
    this.done = true;
    let message: string;
    try {
      message = decoder.decode(clientMessage);
    } catch {
      return failure('OAUTHBEARER message is not UTF-8');
    }
    const parsed = parseOauthBearerMessage(message);
    if ('error' in parsed) return failure(parsed.error);
    const result = this.validator.validate(parsed.token, this.clock.nowMs());
    if (!result.ok) return failure(`invalid token: ${result.reason}`);
    return { kind: 'success', bytes: new Uint8Array(0), principal: { type: 'User', name: result.principal }, expiresAtMs: result.expiresAtMs };
  }
}
