// The client side of SASL for Sluice's client (and the CLI, and brokers
// logging in to other brokers): SCRAM-SHA-256/512 (RFC 5802/7677), PLAIN and
// OAUTHBEARER (RFC 7628). Only Web APIs are used — crypto.subtle for
// PBKDF2/HMAC/SHA, crypto.getRandomValues, TextEncoder, Uint8Array — so the
// browser build shares this file unchanged.
//
// A mechanism is a small state machine: `start()` gives the first message,
// `next(serverMessage)` the following one, or null when the exchange is done
// (after checking the server's proof, for SCRAM: a server that cannot prove
// it knows the credential is refused).

export type ClientSaslMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'PLAIN' | 'OAUTHBEARER';

export type SaslOptions =
  | { readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'PLAIN'; readonly username: string; readonly password: string }
  | {
    readonly mechanism: 'OAUTHBEARER';
    /** A JWT, or a function that returns a fresh one (called on every (re-)authentication). */
    readonly token: string | (() => string | Promise<string>);
  };

export interface SaslClient {
  readonly mechanism: ClientSaslMechanism;
  start(): Promise<Uint8Array>;
  /** The answer to the server's message; null once the exchange is complete. Throws when the server's message is wrong. */
  next(serverMessage: Uint8Array): Promise<Uint8Array | null>;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

type Subtle = typeof globalThis.crypto.subtle;

function subtle(): Subtle {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('SASL needs crypto.subtle (a secure context in browsers, Node 20+)');
  return s;
}

function hashName(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'): { name: 'SHA-256' | 'SHA-512'; bits: number } {
  return mechanism === 'SCRAM-SHA-256' ? { name: 'SHA-256', bits: 256 } : { name: 'SHA-512', bits: 512 };
}

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

async function hmac(hash: string, key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await subtle().importKey('raw', key, { name: 'HMAC', hash }, false, ['sign']);
  return new Uint8Array(await subtle().sign('HMAC', k, data));
}

/** Hi(password, salt, i) of RFC 5802: PBKDF2 with HMAC-H. */
export async function scramSaltedPassword(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const h = hashName(mechanism);
  const key = await subtle().importKey('raw', utf8.encode(password.normalize('NFKC')), 'PBKDF2', false, ['deriveBits']);
  return new Uint8Array(await subtle().deriveBits({ name: 'PBKDF2', hash: h.name, salt, iterations }, key, h.bits));
}

/** StoredKey and ServerKey of a salted password (what the broker stores). */
export async function scramKeys(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', saltedPassword: Uint8Array): Promise<{ storedKey: Uint8Array; serverKey: Uint8Array }> {
  const h = hashName(mechanism).name;
  const clientKey = await hmac(h, saltedPassword, utf8.encode('Client Key'));
  const storedKey = new Uint8Array(await subtle().digest(h, clientKey));
  return { storedKey, serverKey: await hmac(h, saltedPassword, utf8.encode('Server Key')) };
}

export function randomNonce(bytes = 24): string {
  const raw = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return toBase64(raw).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function saslName(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

export class ScramClient implements SaslClient {
  private state: 'start' | 'first' | 'final' | 'done' = 'start';
  private bare = '';
  private expectedSignature: Uint8Array | null = null;

  constructor(
    readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512',
    private readonly username: string,
    private readonly password: string,
    private readonly nonce: string = randomNonce(),
  ) {}

  async start(): Promise<Uint8Array> {
    if (this.state !== 'start') throw new Error('SCRAM exchange already started');
    this.bare = `n=${saslName(this.username)},r=${this.nonce}`;
    this.state = 'first';
    return utf8.encode(`n,,${this.bare}`);
  }

  async next(serverMessage: Uint8Array): Promise<Uint8Array | null> {
    const text = fromUtf8.decode(serverMessage);
    if (this.state === 'first') return this.final(text);
    if (this.state === 'final') {
      const e = /^e=(.*)$/.exec(text);
      if (e) throw new Error(`SCRAM server error: ${e[1]}`);
      const v = /^v=([A-Za-z0-9+/=]+)$/.exec(text);
      if (!v || !equal(fromBase64(v[1]!), this.expectedSignature!)) throw new Error('the server\'s SCRAM signature is wrong: it does not know the credential');
      this.state = 'done';
      return null;
    }
    throw new Error('SCRAM exchange is over');
  }

  private async final(serverFirst: string): Promise<Uint8Array> {
    const m = /^r=([^,]+),s=([A-Za-z0-9+/=]+),i=(\d+)(,.*)?$/.exec(serverFirst);
    if (!m) throw new Error('malformed SCRAM server-first message');
    const [, nonce, salt, iter] = m as unknown as [string, string, string, string];
    if (!nonce.startsWith(this.nonce) || nonce.length === this.nonce.length) throw new Error('the server\'s SCRAM nonce does not extend ours');
    const iterations = Number(iter);
    if (iterations < 4096) throw new Error(`the server asks for ${iterations} SCRAM iterations, fewer than 4096`);
    const h = hashName(this.mechanism).name;
    const salted = await scramSaltedPassword(this.mechanism, this.password, fromBase64(salt), iterations);
    const clientKey = await hmac(h, salted, utf8.encode('Client Key'));
    const storedKey = new Uint8Array(await subtle().digest(h, clientKey));
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = utf8.encode(`${this.bare},${serverFirst},${withoutProof}`);
    const signature = await hmac(h, storedKey, authMessage);
    const proof = clientKey.map((b, i) => b ^ signature[i]!);
    this.expectedSignature = await hmac(h, await hmac(h, salted, utf8.encode('Server Key')), authMessage);
    this.state = 'final';
    return utf8.encode(`${withoutProof},p=${toBase64(proof)}`);
  }
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

class OneMessageClient implements SaslClient {
  constructor(readonly mechanism: ClientSaslMechanism, private readonly first: () => Promise<Uint8Array>) {}
  start(): Promise<Uint8Array> {
    return this.first();
  }
  async next(): Promise<Uint8Array | null> {
    return null;
  }
}

export function saslClient(opts: SaslOptions): SaslClient {
  switch (opts.mechanism) {
    case 'SCRAM-SHA-256':
    case 'SCRAM-SHA-512':
      return new ScramClient(opts.mechanism, opts.username, opts.password);
    case 'PLAIN':
      return new OneMessageClient('PLAIN', async () => utf8.encode(`\u0000${opts.username}\u0000${opts.password}`));
    case 'OAUTHBEARER':
      return new OneMessageClient('OAUTHBEARER', async () => {
        const token = typeof opts.token === 'string' ? opts.token : await opts.token();
        return utf8.encode(`n,,\u0001auth=Bearer ${token}\u0001\u0001`);
      });
    default:
      throw new Error(`unknown SASL mechanism ${(opts as { mechanism: string }).mechanism}`);
  }
}
