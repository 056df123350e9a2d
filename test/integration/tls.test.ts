// TLS on a real 3-node cluster (issue 16, encryption): every listener on TLS
// (broker wss://, controller wss://, Kafka SSL://) with ssl.client.auth=required,
// so nodes authenticate each other by certificate. One cluster for the file:
//   - the Sluice client produces and consumes over wss:// (replication and
//     the quorum run over TLS links, or the cluster would not be up);
//   - kcat and KafkaJS produce and consume on the SSL listener;
//   - a client certificate's principal reaches conn.security (the broker logs
//     it; a RULE of ssl.principal.mapping.rules maps CN=client-alice to
//     User:client-alice, the DEFAULT rule keeps the nodes' full names);
//   - a certificate replaced on disk is served to new connections while an
//     open one keeps working; a broken new file is refused and logged;
//   - a node whose certificate is not from the cluster's CA cannot join the
//     quorum or register, and a client with it cannot replicate or connect;
//   - garbage and truncated handshakes on every TLS port crash nothing.
// Waits are on conditions with bounds, never fixed sleeps.

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { Client, nodeWebSocketFactoryWith } from '../../src/index.js';
import { ClientLink } from '../../src/net/client-link.js';
import { createCa, issueCert, writeKeystore, type KeyPair } from '../../src/net/tls-certs.js';
import { ProcessCluster, waitFor } from './harness.js';
import { findTool, runTool } from '../interop/kafka-kit.js';

const MAPPING = 'RULE:^CN=(client-[^,]+),.*$/$1/L,DEFAULT';

describe('TLS on every listener and link (3 nodes, mTLS required)', function () {
  this.timeout(180_000);
  let dir: string;
  let ca: KeyPair;
  let alice: KeyPair;
  let rogue: KeyPair;
  let cluster: ProcessCluster;
  let client: Client;
  const nodeCert = (id: number, cn = `node-${id}`): KeyPair => issueCert(ca, { subject: [['O', 'sluice-test'], ['CN', cn]], ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'] });
  const caFile = () => path.join(dir, 'ca.pem');
  const logs = () => cluster.nodes.map((n) => n.output.join('\n')).join('\n');
  const tlsClient = (pair: KeyPair = alice) => new Client({
    bootstrap: cluster.brokerUrls.join(','), clientId: 'tls-test', tls: { ca: ca.certPem, cert: pair.certPem, key: pair.keyPem },
    retry: { retries: 3, initialRetryTimeMs: 100, maxRetryTimeMs: 500 },
  });

  before(async function () {
    this.timeout(120_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-'));
    ca = createCa({ subject: [['O', 'sluice-test'], ['CN', 'test CA']] });
    fs.writeFileSync(caFile(), ca.certPem);
    for (const id of [1, 2, 3, 4]) writeKeystore(path.join(dir, `node-${id}.pem`), nodeCert(id));
    alice = issueCert(ca, { subject: [['O', 'sluice-test'], ['OU', 'dev'], ['CN', 'client-Alice']] });
    const rogueCa = createCa({ subject: [['CN', 'rogue CA']] });
    rogue = issueCert(rogueCa, { subject: [['CN', 'node-4']], ipAddresses: ['127.0.0.1'] });
    writeKeystore(path.join(dir, 'rogue.pem'), rogue);
    cluster = await ProcessCluster.create({
      size: 3, brokers: true, brokerOnly: 1, kafka: true, extraArgs: ['--replica-lag-time-max-ms', '10000'],
      tls: (id) => [
        '--ssl-keystore-location', path.join(dir, id === 4 ? 'rogue.pem' : `node-${id}.pem`), '--ssl-truststore-location', caFile(),
        '--ssl-client-auth', 'required', '--ssl-reload-interval-ms', '200', '--ssl-principal-mapping-rules', MAPPING,
      ],
    });
    for (const id of [1, 2, 3]) cluster.node(id).start();
    client = tlsClient();
    const admin = client.admin();
    await waitFor('three unfenced brokers over TLS', async () => (await admin.describeCluster()).brokers.filter((b) => !b.fenced).length === 3, { timeoutMs: 60_000, intervalMs: 200 });
  });

  after(async () => {
    client?.close();
    await cluster?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('registers wss:// broker URLs and SSL:// Kafka endpoints, and the Sluice client produces and consumes over wss://', async () => {
    const described = await client.admin().describeCluster();
    for (const b of described.brokers) {
      expect(b.url).to.match(/^wss:\/\/127\.0\.0\.1:\d+$/);
      expect(b.endpoints.find((e) => e.name === 'KAFKA')?.url).to.match(/^SSL:\/\/127\.0\.0\.1:\d+$/);
      expect(b.endpoints.find((e) => e.name === 'CONTROLLER')?.url).to.match(/^wss:\/\//);
    }
    await client.admin().createTopics({ topics: [{ topic: 'secure', numPartitions: 2, replicationFactor: 3 }] });
    const producer = client.producer({ lingerMs: 1 });
    const messages = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` }));
    await producer.send({ topic: 'secure', messages });
    await producer.close();
    const got: string[] = [];
    const consumer = client.consumer({ groupId: 'tls-readers', autoOffsetReset: 'earliest' });
    await consumer.subscribe({ topics: ['secure'], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
    await waitFor('20 records read over wss://', () => got.length >= 20, { timeoutMs: 30_000 });
    await consumer.close();
    expect(got.sort()).to.deep.equal(messages.map((m) => m.value).sort());
    // Acknowledged with acks=all: the followers fetched over TLS links.
    const [topic] = await client.admin().describeTopics({ topics: ['secure'] });
    for (const p of topic!.partitions) expect(p.isr).to.have.length(3);
  });

  it('takes the principal from the client certificate (mapping rules) onto the connection', async () => {
    await waitFor('the broker log naming User:client-alice', () => /"principal":"User:client-alice"/.test(logs()), { timeoutMs: 10_000 });
    // The nodes' own links match no RULE: DEFAULT keeps the RFC 2253 name.
    expect(logs()).to.match(/"principal":"User:CN=node-\d,O=sluice-test"/);
  });

  it('serves the SSL:// Kafka listener to kcat and KafkaJS', async function () {
    const kafkaBootstrap = cluster.kafkaBootstrap;
    const clientCertFile = path.join(dir, 'alice-cert.pem');
    const clientKeyFile = path.join(dir, 'alice-key.pem');
    fs.writeFileSync(clientCertFile, alice.certPem);
    fs.writeFileSync(clientKeyFile, alice.keyPem);
    const kafka = new Kafka({
      clientId: 'tls-kafkajs', brokers: kafkaBootstrap.split(','), logLevel: logLevel.NOTHING,
      ssl: { ca: [ca.certPem], cert: alice.certPem, key: alice.keyPem }, retry: { retries: 5 },
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'kafka-tls', messages: [{ key: 'a', value: 'from-kafkajs' }] });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'tls-kafkajs' });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: 'kafka-tls', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    await waitFor('KafkaJS to read its record over SSL', () => seen.includes('from-kafkajs'), { timeoutMs: 30_000 });
    await consumer.disconnect();

    const { tool: kcat } = findTool('kcat');
    if (!kcat) return; // KafkaJS covered the listener; kcat comes from scripts/interop-tools.sh
    const ssl = ['-b', kafkaBootstrap, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${caFile()}`,
      '-X', `ssl.certificate.location=${clientCertFile}`, '-X', `ssl.key.location=${clientKeyFile}`];
    const put = await runTool(kcat, [...ssl, '-P', '-t', 'kafka-tls', '-K', ':'], { input: 'k:from-kcat\n' });
    expect(put.status, put.stderr).to.equal(0);
    const read = await runTool(kcat, [...ssl, '-C', '-t', 'kafka-tls', '-o', 'beginning', '-e', '-q']);
    expect(read.status, read.stderr).to.equal(0);
    expect(read.stdout.split('\n')).to.include.members(['from-kafkajs', 'from-kcat']);
    // Without a client certificate the handshake is refused (ssl.client.auth=required).
    const anonymous = await runTool(kcat, ['-b', kafkaBootstrap, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${caFile()}`, '-L', '-m', '5']);
    expect(anonymous.status).to.not.equal(0);
  });

  it('reloads a replaced certificate for new connections; open ones keep working; a bad file is refused', async () => {
    const node1 = cluster.node(1);
    const port = node1.brokerPort!;
    const fingerprint = () => new Promise<string>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem, cert: alice.certPem, key: alice.keyPem }, () => {
        resolve(s.getPeerX509Certificate()!.fingerprint256);
        s.end();
      });
      s.on('error', reject);
    });
    const before = await fingerprint();
    const open = await ClientLink.connect(node1.brokerUrl, { factory: nodeWebSocketFactoryWith({ ca: ca.certPem, cert: alice.certPem, key: alice.keyPem }), connectTimeoutMs: 5_000 });
    const fresh = nodeCert(1, 'node-1-renewed');
    writeKeystore(path.join(dir, 'node-1.pem'), fresh);
    const expected = new (await import('node:crypto')).X509Certificate(fresh.certPem).fingerprint256;
    await waitFor('node 1 to serve the renewed certificate', async () => (await fingerprint()) === expected, { timeoutMs: 15_000, intervalMs: 100 });
    expect(before).to.not.equal(expected);
    expect(logs()).to.match(/TLS certificate reloaded/);
    // The link opened before the reload still carries requests.
    const md = await open.request<{ brokers: unknown[] }>(3, 0, { topics: [] }, 5_000);
    expect(md.brokers).to.have.length(3);
    open.close();

    fs.writeFileSync(path.join(dir, 'node-1.pem'), '-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n');
    await waitFor('node 1 to refuse the broken file', () => /new TLS files refused/.test(logs()), { timeoutMs: 15_000, intervalMs: 100 });
    expect(await fingerprint()).to.equal(expected);
    expect(node1.running).to.equal(true);
    writeKeystore(path.join(dir, 'node-1.pem'), fresh);
  });

  it('keeps a node with a certificate from another CA out of the quorum and replication; the cluster goes on', async () => {
    const intruder = cluster.node(4);
    intruder.start();
    await waitFor('the voters to refuse the intruder\'s handshake', () => /TLS handshake failed/.test(logs()) && intruder.output.length > 5, { timeoutMs: 20_000, intervalMs: 200 });
    // A fetcher presenting the intruder's certificate cannot reach a broker listener.
    const refused = await ClientLink.connect(cluster.node(2).brokerUrl, {
      factory: nodeWebSocketFactoryWith({ ca: ca.certPem, cert: rogue.certPem, key: rogue.keyPem }), connectTimeoutMs: 5_000,
    }).then((l) => { l.close(); return null; }, (err: Error) => err);
    expect(refused, 'a link with the rogue certificate').to.be.instanceOf(Error);
    const producer = client.producer();
    await producer.send({ topic: 'secure', messages: [{ value: 'still-going' }] });
    await producer.close();
    const brokers = (await client.admin().describeCluster()).brokers.map((b) => b.nodeId).sort();
    expect(brokers, 'registered brokers').to.deep.equal([1, 2, 3]);
    const statuses = await Promise.all([1, 2, 3].map(async (id) => cluster.node(id).running));
    expect(statuses).to.deep.equal([true, true, true]);
    await intruder.kill();
  });

  it('survives garbage, truncated and stalled handshakes on every TLS port', async () => {
    const ports = cluster.nodes.slice(0, 3).flatMap((n) => [n.port, n.brokerPort!, n.kafkaPort!]);
    // A ClientHello cut short, random bytes, an HTTP request in the clear, and a connection that says nothing.
    const hello = Buffer.from('16030100c8010000c40303', 'hex');
    const payloads = [hello, Buffer.concat([hello, Buffer.alloc(50, 0xff)]), Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 131 + 7) & 0xff)), Buffer.from('1603030005ffffffffff', 'hex')];
    const sockets: net.Socket[] = [];
    await Promise.all(ports.flatMap((port) => payloads.map((bytes) => new Promise<void>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.write(bytes);
        setImmediate(() => s.destroy());
      });
      s.on('error', () => undefined);
      s.on('close', () => resolve());
    }))));
    for (const port of ports) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      sockets.push(s);
    }
    const producer = client.producer();
    await producer.send({ topic: 'secure', messages: [{ value: 'after-garbage' }] });
    await producer.close();
    for (const s of sockets) s.destroy();
    expect([1, 2, 3].map((id) => cluster.node(id).running)).to.deep.equal([true, true, true]);
  });
});
