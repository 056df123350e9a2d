// One real node with SASL on both listeners, for the SASL tests
// (test/integration/sasl.test.ts, test/interop/sasl.test.ts): the Kafka
// listener is SASL_PLAINTEXT with SCRAM-SHA-256, SCRAM-SHA-512, PLAIN and
// OAUTHBEARER (a JWKS file written here, RS256 and ES256 keys); the
// WebSocket listener requires authentication (ws.sasl.required).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BrokerConnection } from '../../src/client/broker-connection.js';
import { nodeWebSocketFactory, nodeWebSocketFactoryWith } from '../../src/client/node-websocket.js';
import { createCa, issueCert, writeKeystore, type KeyPair } from '../../src/net/tls-certs.js';
import type { SaslOptions } from '../../src/client/sasl.js';
import { ProcessCluster, waitFor } from './harness.js';
import { makeJwt, signer, type Signer } from '../security/sasl/jwt-kit.js';

export const AUTH_TIMEOUT_MS = 1500;

export interface SaslNode {
  readonly cluster: ProcessCluster;
  readonly dir: string;
  readonly url: string;
  readonly kafka: string;
  /** A JWT for `sub`, valid for `seconds`. */
  token(sub: string, seconds?: number): string;
  /** The token, in a file (for --sasl-token-file). */
  tokenFile(sub: string): string;
  /** With `tls`: the CA's PEM file clients trust (the listeners are wss:// and SASL_SSL://). */
  readonly caFile: string | null;
  /** With `tls`: that CA, to issue more certificates (an HTTPS token endpoint's). */
  readonly ca: KeyPair | null;
  /** The RS256 key (kid k1) whose public half is in the broker's JWKS: an identity provider's signing key. */
  readonly signer: Signer;
  /** The audience and issuer the broker expects in a token. */
  readonly audience: string;
  readonly issuer: string;
}

/** One combined node: SASL_PLAINTEXT Kafka listener and a WebSocket listener that requires a login. */
export async function startSaslNode(
  extraArgs: readonly string[] = [],
  opts: { readonly tls?: boolean; readonly size?: number; readonly nodeArgs?: (id: number) => readonly string[]; readonly start?: readonly number[] } = {},
): Promise<SaslNode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sasl-'));
  let caFile: string | null = null;
  let caPem: string | null = null;
  let ca: KeyPair | null = null;
  if (opts.tls) {
    ca = createCa({ subject: [['O', 'sluice-test'], ['CN', 'sasl test CA']] });
    caPem = ca.certPem;
    caFile = path.join(dir, 'ca.pem');
    fs.writeFileSync(caFile, ca.certPem);
    writeKeystore(path.join(dir, 'node.pem'), issueCert(ca, { subject: [['CN', 'node-1']], ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'] }));
  }
  const rs = signer('RS256', 'k1');
  const jwks = path.join(dir, 'jwks.json');
  fs.writeFileSync(jwks, JSON.stringify({ keys: [rs.jwk, signer('ES256', 'k2').jwk] }));
  const cluster = await ProcessCluster.create({
    size: opts.size ?? 1, brokers: true, kafka: true, ...(opts.nodeArgs ? { nodeArgs: opts.nodeArgs } : {}), kafkaProtocol: opts.tls ? 'SASL_SSL' : 'SASL_PLAINTEXT', logLevel: 'warn',
    ...(opts.tls ? { tls: () => ['--ssl-keystore-location', path.join(dir, 'node.pem'), '--ssl-truststore-location', caFile!] } : {}),
    extraArgs: [
      '--sasl-enabled-mechanisms', 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN,OAUTHBEARER', '--sasl-plain-allow-plaintext', '--ws-sasl-required',
      '--sasl-oauthbearer-jwks-file', jwks, '--sasl-oauthbearer-expected-audience', 'sluice', '--sasl-oauthbearer-expected-issuer', 'https://idp.test',
      '--sasl-oauthbearer-clock-skew-seconds', '0', '--sasl-authentication-timeout-ms', String(AUTH_TIMEOUT_MS), ...extraArgs,
    ],
  });
  if (opts.start) for (const id of opts.start) cluster.node(id).start();
  else cluster.startAll();
  const token = (sub: string, seconds = 600): string => {
    const now = Math.floor(Date.now() / 1000);
    return makeJwt(rs, { sub, aud: 'sluice', iss: 'https://idp.test', iat: now, exp: now + seconds });
  };
  const url = cluster.brokerUrls[0]!;
  await waitFor('the broker to serve a bearer login', async () => {
    const c = await connectAs(url, { mechanism: 'OAUTHBEARER', token: token('admin') }, caPem).catch(() => null);
    if (!c) return false;
    try {
      return (await c.metadata([])).brokers.length === (opts.start ?? [1]).length;
    } finally {
      c.close();
    }
  }, { timeoutMs: 60_000, intervalMs: 300 });
  const tokenFile = (sub: string): string => {
    const f = path.join(dir, `${sub}.jwt`);
    fs.writeFileSync(f, token(sub));
    return f;
  };
  return { cluster, dir, url, kafka: cluster.kafkaBootstrap, token, tokenFile, caFile, ca, signer: rs, audience: 'sluice', issuer: 'https://idp.test' };
}

export function connectAs(url: string, sasl: SaslOptions, caPem: string | null = null): Promise<BrokerConnection> {
  const factory = caPem ? nodeWebSocketFactoryWith({ ca: caPem }) : nodeWebSocketFactory;
  return BrokerConnection.connect(url, { factory, connectTimeoutMs: 3000, requestTimeoutMs: 10_000, sasl });
}

