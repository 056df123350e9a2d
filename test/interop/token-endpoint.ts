// A small OAuth 2.0 token endpoint (RFC 6749 §4.4, client-credentials grant)
// for the OAUTHBEARER interop tests: the stand-in for an identity provider,
// the way the TLS tests make their own CA. It is a real HTTP server on
// 127.0.0.1 (a free port) that clients reach the way they reach Keycloak or
// Okta — librdkafka's `sasl.oauthbearer.method=oidc` and Java's
// OAuthBearerLoginCallbackHandler (KIP-768) POST a form-encoded
// `grant_type=client_credentials` (plus `scope`), the client authenticated with
// HTTP Basic (§2.3.1: id and secret form-urlencoded, then base64) or, as some
// clients do, `client_id`/`client_secret` in the body. The answer is RFC 6749
// §5.1's JSON {access_token, token_type: "Bearer", expires_in}; errors are
// §5.2's {error} with 400, or 401 for a client that does not authenticate.
//
// The access token is a JWT signed RS256 with `signer`'s key (whose public half
// the broker's JWKS holds, or not, for a test of a foreign key), with the
// claims both clients check before they send it: sub (the client id; Java and
// librdkafka require it), iat and exp (numbers; Java requires exp, librdkafka
// reads the lifetime from it), scope when one was asked for (a space-separated
// string, RFC 8693 §4.2; Java refuses an empty one) and the audience/issuer the
// broker expects.

import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KeyPair } from '../../src/net/tls-certs.js';
import { makeJwt, type Signer } from '../security/sasl/jwt-kit.js';

export interface TokenEndpointOptions {
  /** client id → client secret. */
  readonly clients: Readonly<Record<string, string>>;
  readonly signer: Signer;
  readonly audience: string;
  readonly issuer: string;
  readonly lifetimeSeconds?: number;
  /** Serve HTTPS with this certificate (issued for 127.0.0.1) instead of HTTP. */
  readonly tls?: KeyPair;
}

export interface TokenEndpoint {
  /** http(s)://127.0.0.1:<port>/oauth2/token */
  readonly url: string;
  /** Tokens issued so far, by client id (a login that never reached the endpoint shows as none). */
  readonly issued: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024;

function formDecode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

/** The client's id and secret from HTTP Basic or the form body; null when it presented none. */
function clientCredentials(req: http.IncomingMessage, form: URLSearchParams): { id: string; secret: string } | null {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^Basic +([A-Za-z0-9+/]+=*)$/i.exec(auth);
    if (!m) return null;
    const pair = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = pair.indexOf(':');
    if (colon < 0) return null;
    try {
      return { id: formDecode(pair.slice(0, colon)), secret: formDecode(pair.slice(colon + 1)) };
    } catch {
      return null;
    }
  }
  const id = form.get('client_id');
  const secret = form.get('client_secret');
  return id !== null && secret !== null ? { id, secret } : null;
}

export async function startTokenEndpoint(opts: TokenEndpointOptions): Promise<TokenEndpoint> {
  const issued = new Map<string, number>();
  const lifetime = opts.lifetimeSeconds ?? 600;
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const answer = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.url !== '/oauth2/token') return answer(404, { error: 'not_found' });
    if (req.method !== 'POST') return answer(405, { error: 'invalid_request', error_description: 'POST only' }, { allow: 'POST' });
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      return answer(400, { error: 'invalid_request', error_description: 'the body must be application/x-www-form-urlencoded' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const client = clientCredentials(req, form);
      if (client === null || !Object.hasOwn(opts.clients, client.id) || opts.clients[client.id] !== client.secret) {
        return answer(401, { error: 'invalid_client', error_description: 'client authentication failed' }, { 'www-authenticate': 'Basic realm="sluice-test"' });
      }
      if (form.get('grant_type') !== 'client_credentials') return answer(400, { error: 'unsupported_grant_type' });
      const now = Math.floor(Date.now() / 1000);
      const scope = form.get('scope') ?? '';
      // No scope requested, no scope claim (RFC 6749 §3.3 lets the server pick a default; Java refuses an empty one).
      const token = makeJwt(opts.signer, {
        sub: client.id, aud: opts.audience, iss: opts.issuer, iat: now, exp: now + lifetime, ...(scope ? { scope } : {}), client_id: client.id,
      });
      issued.set(client.id, (issued.get(client.id) ?? 0) + 1);
      return answer(200, { access_token: token, token_type: 'Bearer', expires_in: lifetime, ...(scope ? { scope } : {}) });
    });
  };
  const server = opts.tls ? https.createServer({ key: opts.tls.keyPem, cert: opts.tls.certPem }, handler) : http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}/oauth2/token`,
    issued,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
