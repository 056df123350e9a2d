// The TLS listeners in-process (src/net/ws-server.ts, kafka-server.ts with a
// TlsContext): ssl.client.auth=requested puts the client certificate's
// principal on conn.security (mechanism SSL, tls true), leaves a client
// without one anonymous over TLS, and closes a connection whose certificate
// does not verify — on the WebSocket and the Kafka listener alike; the HTTP
// listener serves HTTPS with the same identity.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import tls from 'node:tls';
import { expect } from 'chai';
import { WsServer } from '../../src/net/ws-server.js';
import { KafkaServer } from '../../src/net/kafka-server.js';
import { ClientLink } from '../../src/net/client-link.js';
import { nodeWebSocketFactoryWith } from '../../src/client/node-websocket.js';
import { TlsContext, tlsSettingsFrom } from '../../src/net/tls.js';
import { createCa, issueCert, writeKeystore, type KeyPair } from '../../src/net/tls-certs.js';
import { principalString, type SecuritySession } from '../../src/security/principal.js';
import { SystemScheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { startMetricsServer } from '../../src/server/metrics-http.js';
import { NodeMetrics } from '../../src/server/metrics.js';

describe('TLS listeners: client certificates and conn.security', function () {
  this.timeout(30_000);
  let dir: string;
  let ca: KeyPair;
  let alice: KeyPair;
  let rogue: KeyPair;
  let ctx: TlsContext;
  const seen: SecuritySession[] = [];

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-listeners-'));
    ca = createCa({ subject: [['CN', 'listener CA']] });
    fs.writeFileSync(path.join(dir, 'ca.pem'), ca.certPem);
    writeKeystore(path.join(dir, 'server.pem'), issueCert(ca, { subject: [['CN', 'server']], ipAddresses: ['127.0.0.1'] }));
    alice = issueCert(ca, { subject: [['O', 'acme'], ['CN', 'alice']] });
    rogue = issueCert(createCa({ subject: [['CN', 'rogue']] }), { subject: [['CN', 'mallory']] });
    ctx = new TlsContext(tlsSettingsFrom({
      sslKeystoreLocation: path.join(dir, 'server.pem'), sslTruststoreLocation: path.join(dir, 'ca.pem'), sslClientAuth: 'requested',
      sslPrincipalMappingRules: 'RULE:^CN=([^,]+),O=acme$/$1/,DEFAULT',
    })!, silentLogger, SystemScheduler);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('wss://: principal from the certificate, anonymous without one, closed with one from another CA', async () => {
    const server = new WsServer((_req, conn) => {
      seen.push({ ...conn.security });
      return { ok: true };
    }, silentLogger, undefined, undefined, ctx);
    const { port } = await server.listen({ host: '127.0.0.1', port: 0 });
    const url = `wss://127.0.0.1:${port}`;
    try {
      const ask = async (pair?: KeyPair): Promise<SecuritySession> => {
        const link = await ClientLink.connect(url, { factory: nodeWebSocketFactoryWith({ ca: ca.certPem, ...(pair ? { cert: pair.certPem, key: pair.keyPem } : {}) }), connectTimeoutMs: 5_000 });
        try {
          seen.length = 0;
          await link.request(3, 0, {}, 5_000);
          return seen[0]!;
        } finally {
          link.close();
        }
      };
      const a = await ask(alice);
      expect([principalString(a.principal), a.mechanism, a.tls]).to.deep.equal(['User:alice', 'SSL', true]);
      const anon = await ask();
      expect([principalString(anon.principal), anon.mechanism, anon.tls]).to.deep.equal(['User:ANONYMOUS', null, true]);
      const refused = await ask(rogue).then(() => null, (err: Error) => err);
      expect(refused).to.be.instanceOf(Error);
      // A plain WebSocket client cannot talk to it at all.
      const plain = await ClientLink.connect(`ws://127.0.0.1:${port}`, { factory: nodeWebSocketFactoryWith({}), connectTimeoutMs: 3_000 }).then(() => null, (err: Error) => err);
      expect(plain).to.be.instanceOf(Error);
    } finally {
      await server.close();
    }
  });

  it('SSL:// Kafka listener: the same session on the Kafka connection; a bad certificate is closed before any request', async () => {
    const server = new KafkaServer((_frame, conn) => {
      seen.push({ ...conn.security });
      return [Buffer.from([0, 0, 0, 1])];
    }, silentLogger, undefined, ctx);
    const { port } = await server.listen({ host: '127.0.0.1', port: 0 });
    const request = Buffer.concat([Buffer.from([0, 0, 0, 12]), Buffer.alloc(12)]);
    const exchange = (pair: KeyPair) => new Promise<Buffer>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem, cert: pair.certPem, key: pair.keyPem }, () => s.write(request));
      s.once('data', (d: Buffer) => {
        resolve(d);
        s.end();
      });
      s.once('error', reject);
      s.once('close', () => reject(new Error('closed without an answer')));
    });
    try {
      seen.length = 0;
      expect((await exchange(alice)).length).to.be.greaterThan(0);
      expect(principalString(seen[0]!.principal)).to.equal('User:alice');
      expect(seen[0]!.mechanism).to.equal('SSL');
      seen.length = 0;
      expect(await exchange(rogue).then(() => null, (err: Error) => err)).to.be.instanceOf(Error);
      expect(seen).to.have.length(0);
    } finally {
      await server.close();
    }
  });

  it('https:// HTTP listener: /healthz over TLS with the node\'s certificate; a client that does not trust it is refused', async () => {
    const server = await startMetricsServer({
      host: '127.0.0.1', port: 0, metrics: new NodeMetrics(), readiness: () => ({ ready: true }), logger: silentLogger, tls: ctx,
    });
    const get = (opts: https.RequestOptions) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.get(server.url + '/healthz', opts, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => { body += d.toString('utf8'); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.once('error', reject);
    });
    try {
      expect(server.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(await get({ ca: ca.certPem })).to.deep.equal({ status: 200, body: 'ok\n' });
      const refused = await get({}).then(() => null, (err: Error) => err);
      expect(refused?.message).to.match(/self.signed|unable to verify|certificate/i);
    } finally {
      await server.close();
    }
  });
});

