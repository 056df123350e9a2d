// The server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as
// Kafka's ScramSaslServer runs it:
//
//   client-first  n,,n=<user>,r=<client nonce>[,<extensions>]
//   server-first  r=<client nonce><server nonce>,s=<salt>,i=<iterations>
//   client-final  c=biws,r=<nonce>,p=<proof>
//   server-final  v=<server signature>
//
// States: 'first' → 'final' → 'done' (success or failure is final). Checks:
// the gs2 header is "n" or "y" without channel binding ("p=" is refused: no
// -PLUS mechanism is offered), an authzid must equal the user (as in Kafka),
// no "m=" mandatory extension, no tokenauth (no delegation tokens), the
// client-final echoes the gs2 header and the full nonce, and the proof
// verifies: H(proof XOR HMAC(StoredKey, AuthMessage)) = StoredKey. An unknown
// user and a wrong password fail with the same message, so a client cannot
// tell which users exist. The server nonce comes from an injected source.

import { SCRAM_ITERATIONS_MIN, failure, type SaslServer, type SaslStep, type ScramMechanism } from './mechanism.js';
import { equalBytes, hash, hmac, type CredentialLookup, type ScramCredential } from './scram-credential.js';

const utf8 = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Printable ASCII except ',' (RFC 5802's nonce alphabet). */
const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;

/** RFC 5802 saslname: "=2C" stands for ',' and "=3D" for '='; any other '=' is malformed. */
export function decodeSaslName(text: string): string | null {
  if (/=(?!2C|3D)/.test(text)) return null;
  return text.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export function encodeSaslName(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

function attr(part: string | undefined, key: string): string | null {
  return part !== undefined && part.startsWith(`${key}=`) ? part.slice(key.length + 1) : null;
}

function text(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

interface ClientFirst {
  readonly gs2Header: string;
  readonly user: string;
  readonly nonce: string;
  readonly bare: string;
}

/** Parses a client-first message; a string is the reason it is malformed. */
export function parseClientFirst(message: string): ClientFirst | string {
  const m = /^([ny]|p=[^,]*),(a=[^,]*)?,(.*)$/s.exec(message);
  if (!m) return 'client-first message has no valid gs2 header';
  if (m[1]!.startsWith('p=')) return 'channel binding is not supported';
  const bare = m[3]!;
  const parts = bare.split(',');
  if (parts[0]?.startsWith('m=')) return 'mandatory extensions are not supported';
  const rawUser = attr(parts[0], 'n');
  const nonce = attr(parts[1], 'r');
  if (rawUser === null || nonce === null) return 'client-first message must be n=<user>,r=<nonce>';
  const user = decodeSaslName(rawUser);
  if (user === null || user === '') return 'invalid user name';
  if (!NONCE.test(nonce)) return 'invalid client nonce';
  for (const ext of parts.slice(2)) {
    if (!/^[A-Za-z][^=]*=/.test(ext)) return `malformed extension ${JSON.stringify(ext.slice(0, 20))}`;
    if (ext.startsWith('tokenauth=') && ext !== 'tokenauth=false') return 'delegation tokens are not supported';
  }
  if (m[2] !== undefined) {
    const authzid = decodeSaslName(m[2].slice(2));
    if (authzid !== user) return 'authorization id must be the user name';
  }
  return { gs2Header: `${m[1]},${m[2] ?? ''},`, user, nonce, bare };
}

export interface ScramServerOptions {
  readonly mechanism: ScramMechanism;
  readonly credentials: CredentialLookup;
  /** A fresh, unguessable server nonce (printable, no ','); crypto-random in production. */
  readonly nonce: () => string;
}

export class ScramServer implements SaslServer {
  readonly mechanism: ScramMechanism;
  private state: 'first' | 'final' | 'done' = 'first';
  private first: ClientFirst | null = null;
  private cred: ScramCredential | null = null;
  private serverFirst = '';
  private fullNonce = '';

  constructor(private readonly opts: ScramServerOptions) {
    this.mechanism = opts.mechanism;
  }

  private fail(message: string): SaslStep {
    this.state = 'done';
    return failure(message);
  }

  private badCredentials(): SaslStep {
    return this.fail(`Authentication failed during authentication due to invalid credentials with SASL mechanism ${this.mechanism}`);
  }

  step(clientMessage: Uint8Array): SaslStep {
    const message = text(clientMessage);
    if (this.state === 'done') return this.fail('the SCRAM exchange is already over');
    if (message === null) return this.fail('SCRAM message is not UTF-8');
    return this.state === 'first' ? this.onClientFirst(message) : this.onClientFinal(message);
  }

  private onClientFirst(message: string): SaslStep {
    const first = parseClientFirst(message);
    if (typeof first === 'string') return this.fail(`invalid SCRAM client-first message: ${first}`);
    const cred = this.opts.credentials(first.user, this.mechanism);
    if (!cred) return this.badCredentials();
    if (cred.iterations < SCRAM_ITERATIONS_MIN) return this.fail(`the stored credential has fewer than ${SCRAM_ITERATIONS_MIN} iterations`);
    const serverNonce = this.opts.nonce();
    if (!NONCE.test(serverNonce)) throw new Error('the nonce source made an invalid SCRAM nonce');
    this.first = first;
    this.cred = cred;
    this.fullNonce = first.nonce + serverNonce;
    this.serverFirst = `r=${this.fullNonce},s=${Buffer.from(cred.salt).toString('base64')},i=${cred.iterations}`;
    this.state = 'final';
    return { kind: 'challenge', bytes: utf8.encode(this.serverFirst) };
  }

  private onClientFinal(message: string): SaslStep {
    const first = this.first!;
    const cred = this.cred!;
    const proofAt = message.lastIndexOf(',p=');
    if (proofAt < 0) return this.fail('invalid SCRAM client-final message: no proof');
    const withoutProof = message.slice(0, proofAt);
    const parts = withoutProof.split(',');
    const binding = attr(parts[0], 'c');
    const nonce = attr(parts[1], 'r');
    if (binding === null || nonce === null) return this.fail('invalid SCRAM client-final message: must start c=<binding>,r=<nonce>');
    if (binding !== Buffer.from(first.gs2Header, 'utf8').toString('base64')) return this.fail('SCRAM channel binding does not match the gs2 header');
    // Kafka's ScramSaslServer checks endsWith, not equality: librdkafka sends
    // its client nonce again in front of the full one. The server nonce must
    // still be there (no replay), and the proof covers the message as sent.
    if (!nonce.endsWith(this.fullNonce)) return this.fail('SCRAM nonce does not match the server-first message');
    const proofText = message.slice(proofAt + 3);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(proofText)) return this.fail('invalid SCRAM client proof');
    const proof = Buffer.from(proofText, 'base64');
    const authMessage = `${first.bare},${this.serverFirst},${withoutProof}`;
    const signature = hmac(this.mechanism, cred.storedKey, authMessage);
    if (proof.length !== signature.length) return this.badCredentials();
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i]! ^ signature[i]!;
    if (!equalBytes(hash(this.mechanism, clientKey), cred.storedKey)) return this.badCredentials();
    this.state = 'done';
    const verifier = hmac(this.mechanism, cred.serverKey, authMessage).toString('base64');
    return { kind: 'success', bytes: utf8.encode(`v=${verifier}`), principal: { type: 'User', name: first.user }, expiresAtMs: null };
  }
}
