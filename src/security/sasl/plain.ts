// The server side of PLAIN (RFC 4616): one message "authzid NUL authcid NUL
// password", checked against the user's stored SCRAM credential (the
// metadata log holds no passwords: the password is salted and iterated with
// the credential's own salt and count and must give its StoredKey). An
// authzid must be empty or the user (as in Kafka's PlainSaslServer). PLAIN
// sends the password itself, so the listener offers it only over TLS unless
// sasl.plain.allow.plaintext says otherwise (docs/security.md).

import { SCRAM_MECHANISMS, PLAIN, failure, type SaslServer, type SaslStep } from './mechanism.js';
import { passwordMatches, type CredentialLookup } from './scram-credential.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

export class PlainServer implements SaslServer {
  readonly mechanism = PLAIN;
  private done = false;

  constructor(private readonly credentials: CredentialLookup) {}

  step(clientMessage: Uint8Array): SaslStep {
    if (this.done) return failure('the PLAIN exchange is already over');
    this.done = true;
    let message: string;
    try {
      message = decoder.decode(clientMessage);
    } catch {
      return failure('PLAIN message is not UTF-8');
    }
    const parts = message.split('\u0000');
    if (parts.length !== 3) return failure('invalid PLAIN message: expected authzid NUL user NUL password');
    const [authzid, user, password] = parts as [string, string, string];
    if (user === '' || password === '') return failure('invalid PLAIN message: empty user name or password');
    if (authzid !== '' && authzid !== user) return failure('authorization id must be empty or the user name');
    // The first SCRAM credential the user has; either is derived from the same password.
    const cred = SCRAM_MECHANISMS.map((m) => this.credentials(user, m)).find((c) => c !== undefined);
    if (!cred || !passwordMatches(cred, password)) {
      return failure('Authentication failed: Invalid username or password');
    }
    return { kind: 'success', bytes: new Uint8Array(0), principal: { type: 'User', name: user }, expiresAtMs: null };
  }
}
