// Kafka clients log in to Sluice's SASL_PLAINTEXT listener (issue 16):
// kcat (librdkafka) with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN; KafkaJS
// with those and OAUTHBEARER (a pre-made JWT); the Java client through
// Kafka's own tools — kafka-configs (ConfigCommand) creating and describing a
// SCRAM user over AlterUserScramCredentials/DescribeUserScramCredentials,
// and the producer/consumer perf tools with SCRAM-SHA-512 and PLAIN; kcat
// (librdkafka's sasl.oauthbearer.method=oidc) and the Java client (KIP-768's
// OAuthBearerLoginCallbackHandler) with OAUTHBEARER tokens they fetch from a
// client-credentials token endpoint (token-endpoint.ts), over SASL_PLAINTEXT
// and, from an HTTPS endpoint, SASL_SSL. Each produces and consumes. One node
// per describe block (test/integration/sasl-kit.ts starts it).

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Kafka, logLevel, Partitioners, type SASLOptions } from 'kafkajs';
import { waitFor } from '../integration/harness.js';
import { startSaslNode, type SaslNode } from '../integration/sasl-kit.js';
import { Client } from '../../src/index.js';
import { issueCert } from '../../src/net/tls-certs.js';
import { signer } from '../security/sasl/jwt-kit.js';
import { KAFKA_TOOL_CLASSES, findKcatWithOidc, runTool, toolOrSkip, uniqueName, type Tool, type ToolRun } from './kafka-kit.js';
import { startTokenEndpoint, type TokenEndpoint } from './token-endpoint.js';

const CONFIG_COMMAND = 'org.apache.kafka.tools.ConfigCommand';

const OAUTH_LOGIN_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler';

function ok(run: ToolRun, what: string): string {
  expect(run.status, `${what}: status ${run.status}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`).to.equal(0);
  return run.stdout;
}

describe('interop: Kafka clients log in with SASL', function () {
  this.timeout(180_000);
  let node: SaslNode;
  let topic: string;
  // The identity provider (client-credentials grant), and one that signs with a key the broker does not know.
  let idp: TokenEndpoint;
  let foreignIdp: TokenEndpoint;

  before(async function () {
    this.timeout(120_000);
    node = await startSaslNode();
    const clients = { 'kcat-app': 'kcat-secret', 'java-app': 'java-secret' };
    idp = await startTokenEndpoint({ clients, signer: node.signer, audience: node.audience, issuer: node.issuer });
    // Same kid as the trusted key, so only the signature check can refuse its tokens.
    foreignIdp = await startTokenEndpoint({ clients, signer: signer('RS256', node.signer.kid), audience: node.audience, issuer: node.issuer });
    const admin = new Client({ bootstrap: node.url, sasl: { mechanism: 'OAUTHBEARER', token: node.token('admin') } });
    try {
      await admin.admin().alterUserScramCredentials({
        upsertions: [
          { user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'alice-pw' },
          { user: 'alice', mechanism: 'SCRAM-SHA-512', password: 'alice-pw' },
          { user: 'bob', mechanism: 'SCRAM-SHA-512', password: 'bob-pw', iterations: 4096 },
        ],
      });
      topic = uniqueName('sasl-interop');
      await admin.admin().createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
    } finally {
      admin.close();
    }
  });

  after(async () => {
    await idp?.close();
    await foreignIdp?.close();
    await node?.cluster.cleanup();
    if (node) fs.rmSync(node.dir, { recursive: true, force: true });
  });

  it('kcat produces and consumes with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN; a wrong password is refused', async function () {
    const kcat = toolOrSkip(this, 'kcat');
    const t = uniqueName('kcat-sasl');
    const base = (mechanism: string, user: string, password: string): string[] => [
      '-b', node.kafka, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', `sasl.mechanisms=${mechanism}`, '-X', `sasl.username=${user}`, '-X', `sasl.password=${password}`,
    ];
    ok(await runTool(kcat, [...base('SCRAM-SHA-256', 'alice', 'alice-pw'), '-P', '-t', t], { input: 'one\ntwo\n' }), 'kcat produce SCRAM-SHA-256');
    ok(await runTool(kcat, [...base('PLAIN', 'alice', 'alice-pw'), '-P', '-t', t], { input: 'three\n' }), 'kcat produce PLAIN');
    for (const [m, u, p] of [['SCRAM-SHA-512', 'bob', 'bob-pw'], ['PLAIN', 'bob', 'bob-pw']] as const) {
      const out = ok(await runTool(kcat, [...base(m, u, p), '-C', '-t', t, '-o', 'beginning', '-e', '-q']), `kcat consume ${m}`);
      expect(out.trim().split('\n')).to.deep.equal(['one', 'two', 'three']);
    }
    const bad = await runTool(kcat, [...base('SCRAM-SHA-512', 'bob', 'wrong'), '-L', '-m', '5']);
    expect(bad.status).to.not.equal(0);
    expect(bad.stderr).to.match(/invalid credentials/);
  });

  it('kcat (librdkafka OIDC) and the Java client (KIP-768) get a token from the token endpoint and produce and consume with OAUTHBEARER; a wrong secret or a foreign key is refused', async function () {
    const located = findKcatWithOidc(node.dir);
    if (located.tool === null) {
      console.log(`      skipping: ${located.reason}`);
      this.skip();
    }
    const kcat = located.tool;
    const t = uniqueName('oidc');
    const oidc = (url: string, secret: string): string[] => [
      '-b', node.kafka, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=OAUTHBEARER', '-X', 'sasl.oauthbearer.method=oidc',
      '-X', `sasl.oauthbearer.token.endpoint.url=${url}`, '-X', 'sasl.oauthbearer.client.id=kcat-app', '-X', `sasl.oauthbearer.client.secret=${secret}`,
      '-X', 'sasl.oauthbearer.scope=kafka',
    ];
    ok(await runTool(kcat, [...oidc(idp.url, 'kcat-secret'), '-P', '-t', t], { input: 'o1\no2\n' }), 'kcat OIDC produce');
    expect(ok(await runTool(kcat, [...oidc(idp.url, 'kcat-secret'), '-C', '-t', t, '-o', 'beginning', '-e', '-q']), 'kcat OIDC consume').trim().split('\n')).to.deep.equal(['o1', 'o2']);
    expect(idp.issued.get('kcat-app')).to.be.at.least(2);
    // The refused logins run side by side (each waits out its metadata timeout).
    const [wrongSecret, foreign] = await Promise.all([
      runTool(kcat, [...oidc(idp.url, 'not-the-secret'), '-L', '-m', '3']),
      runTool(kcat, [...oidc(foreignIdp.url, 'kcat-secret'), '-L', '-m', '3']),
    ]);
    expect(wrongSecret.status, wrongSecret.stderr).to.not.equal(0);
    expect(wrongSecret.stderr).to.match(/401|invalid_client/);
    expect(foreign.status, foreign.stderr).to.not.equal(0);
    expect(foreign.stderr).to.match(/signature does not verify/);

    const tools = toolOrSkip(this, 'kafka-tools');
    // Kafka 4 reaches only the token endpoints this system property allows (CVE-2025-27817).
    const java = (url: string): Tool => ({ name: tools.name, argv: [tools.argv[0]!, `-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=${url}`, ...tools.argv.slice(1)] });
    const props = (file: string, url: string, secret: string): string => {
      const p = path.join(node.dir, file);
      fs.writeFileSync(p, [
        `bootstrap.servers=${node.kafka}`, 'security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=OAUTHBEARER',
        `sasl.login.callback.handler.class=${OAUTH_LOGIN_HANDLER}`, `sasl.oauthbearer.token.endpoint.url=${url}`,
        `sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="java-app" clientSecret="${secret}" scope="kafka";`, '',
      ].join('\n'));
      return p;
    };
    const cfg = props('oidc.properties', idp.url, 'java-secret');
    const produced = ok(await runTool(java(idp.url), [KAFKA_TOOL_CLASSES.producerPerf, '--topic', t, '--num-records', '10', '--record-size', '20', '--throughput', '-1', '--command-config', cfg]), 'Java producer perf OIDC');
    expect(produced).to.match(/^10 records sent/m);
    const consumed = ok(await runTool(java(idp.url), [KAFKA_TOOL_CLASSES.consumerPerf, '--bootstrap-server', node.kafka, '--command-config', cfg, '--topic', t, '--num-records', '12', '--timeout', '30000']), 'Java consumer perf OIDC');
    const lines = consumed.split('\n').map((l) => l.trim()).filter((l) => l.includes(','));
    const header = lines.findIndex((l) => l.startsWith('start.time'));
    const columns = lines[header]!.split(',').map((c) => c.trim());
    expect(Number(lines[header + 1]!.split(',')[columns.indexOf('data.consumed.in.nMsg')]), consumed).to.equal(12);
    expect(idp.issued.get('java-app')).to.be.at.least(2);
    const refusals = [['a wrong secret', idp.url, 'nope', /401|invalid_client/], ['a foreign key', foreignIdp.url, 'java-secret', /signature does not verify/]] as const;
    const refused = await Promise.all(refusals.map(([, url, secret], i) => runTool(java(url), [KAFKA_TOOL_CLASSES.topics, '--bootstrap-server', node.kafka,
      '--command-config', props(`bad-${i}.properties`, url, secret), '--list'], { timeoutMs: 60_000 })));
    for (const [i, [what, , , why]] of refusals.entries()) {
      expect(refused[i]!.status, `Java with ${what}: ${refused[i]!.stdout}\n${refused[i]!.stderr}`).to.not.equal(0);
      expect(`${refused[i]!.stdout}\n${refused[i]!.stderr}`, `Java with ${what}`).to.match(why);
    }
  });

  it('KafkaJS produces and consumes with SCRAM-SHA-256, SCRAM-SHA-512, PLAIN and OAUTHBEARER', async () => {
    const logins: SASLOptions[] = [
      { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-pw' },
      { mechanism: 'scram-sha-512', username: 'bob', password: 'bob-pw' },
      { mechanism: 'plain', username: 'alice', password: 'alice-pw' },
      { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: node.token('kafkajs') }) },
    ];
    const t = uniqueName('kafkajs-sasl');
    for (const [i, sasl] of logins.entries()) {
      const kafka = new Kafka({ clientId: 'sluice-sasl', brokers: node.kafka.split(','), sasl, ssl: false, logLevel: logLevel.NOTHING });
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });
      await producer.connect();
      await producer.send({ topic: t, messages: [{ value: `v${i}` }] });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: uniqueName(`kafkajs-${sasl.mechanism}`) });
      const got: string[] = [];
      await consumer.connect();
      await consumer.subscribe({ topic: t, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
      await waitFor(`KafkaJS ${sasl.mechanism} reads ${i + 1} records`, () => got.length >= i + 1, { timeoutMs: 40_000 });
      await consumer.disconnect();
      expect(got.slice(0, i + 1)).to.deep.equal(logins.slice(0, i + 1).map((_, j) => `v${j}`));
    }
    const bad = new Kafka({ clientId: 'bad', brokers: node.kafka.split(','), sasl: { mechanism: 'scram-sha-256', username: 'alice', password: 'x' }, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const err = await bad.admin().connect().then(() => null, (e: Error) => e);
    expect(String(err)).to.match(/SASL|authentication/i);
  });

  it('the Java client: kafka-configs (SCRAM-SHA-256) creates a SCRAM user; the perf tools produce with SCRAM-SHA-512 and consume with PLAIN', async function () {
    const tools = toolOrSkip(this, 'kafka-tools');
    const props = (file: string, mechanism: string, user: string, password: string): string => {
      const module = mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule';
      const p = path.join(node.dir, file);
      fs.writeFileSync(p, [
        `bootstrap.servers=${node.kafka}`, 'security.protocol=SASL_PLAINTEXT', `sasl.mechanism=${mechanism}`,
        `sasl.jaas.config=${module} required username="${user}" password="${password}";`, '',
      ].join('\n'));
      return p;
    };
    const admin = props('admin.properties', 'SCRAM-SHA-256', 'alice', 'alice-pw');
    ok(await runTool(tools, [CONFIG_COMMAND, '--bootstrap-server', node.kafka, '--command-config', admin, '--alter', '--add-config', 'SCRAM-SHA-512=[iterations=8192,password=jan-pw]',
      '--entity-type', 'users', '--entity-name', 'jan']), 'kafka-configs --alter');
    const viewer = new Client({ bootstrap: node.url, sasl: { mechanism: 'PLAIN', username: 'alice', password: 'alice-pw' } });
    try {
      expect(await viewer.admin().describeUserScramCredentials({ users: ['jan'] })).to.deep.equal([{ user: 'jan', credentials: [{ mechanism: 'SCRAM-SHA-512', iterations: 8192 }] }]);
    } finally {
      viewer.close();
    }
    const t = uniqueName('java-sasl');
    const records = 20;
    // One JVM per tool run is the slow part: produce as jan (SCRAM-SHA-512), consume as alice (PLAIN).
    const produced = ok(await runTool(tools, [KAFKA_TOOL_CLASSES.producerPerf, '--topic', t, '--num-records', String(records), '--record-size', '50', '--throughput', '-1',
      '--command-config', props('producer.properties', 'SCRAM-SHA-512', 'jan', 'jan-pw')]), 'producer perf SCRAM-SHA-512');
    expect(produced).to.match(new RegExp(`^${records} records sent`, 'm'));
    const consumed = ok(await runTool(tools, [KAFKA_TOOL_CLASSES.consumerPerf, '--bootstrap-server', node.kafka, '--command-config', props('consumer.properties', 'PLAIN', 'alice', 'alice-pw'),
      '--topic', t, '--num-records', String(records), '--timeout', '30000']), 'consumer perf PLAIN');
    const lines = consumed.split('\n').map((l) => l.trim()).filter((l) => l.includes(','));
    const header = lines.findIndex((l) => l.startsWith('start.time'));
    const columns = lines[header]!.split(',').map((c) => c.trim());
    expect(Number(lines[header + 1]!.split(',')[columns.indexOf('data.consumed.in.nMsg')]), consumed).to.equal(records);
  });
});

describe('interop: Kafka clients log in with SCRAM-SHA-512 over TLS (SASL_SSL)', function () {
  this.timeout(180_000);
  let node: SaslNode;
  let caPem: string;

  before(async function () {
    this.timeout(120_000);
    node = await startSaslNode([], { tls: true });
    caPem = fs.readFileSync(node.caFile!, 'utf8');
    const admin = new Client({ bootstrap: node.url, tls: { ca: caPem }, sasl: { mechanism: 'OAUTHBEARER', token: node.token('admin') } });
    try {
      await admin.admin().alterUserScramCredentials({ upsertions: [{ user: 'tess', mechanism: 'SCRAM-SHA-512', password: 'tess-pw' }] });
    } finally {
      admin.close();
    }
  });

  after(async () => {
    await node?.cluster.cleanup();
    if (node) fs.rmSync(node.dir, { recursive: true, force: true });
  });

  it('kcat, KafkaJS and the Java client produce and consume', async function () {
    const t = uniqueName('sasl-ssl');
    const kcat = toolOrSkip(this, 'kcat');
    const k = ['-b', node.kafka, '-X', 'security.protocol=SASL_SSL', '-X', `ssl.ca.location=${node.caFile!}`, '-X', 'sasl.mechanisms=SCRAM-SHA-512', '-X', 'sasl.username=tess', '-X', 'sasl.password=tess-pw'];
    ok(await runTool(kcat, [...k, '-P', '-t', t], { input: 'k1\nk2\n' }), 'kcat produce over SASL_SSL');
    expect(ok(await runTool(kcat, [...k, '-C', '-t', t, '-o', 'beginning', '-e', '-q']), 'kcat consume over SASL_SSL').trim().split('\n')).to.deep.equal(['k1', 'k2']);

    const kafka = new Kafka({
      clientId: 'sluice-sasl-ssl', brokers: node.kafka.split(','), ssl: { ca: [caPem] }, sasl: { mechanism: 'scram-sha-512', username: 'tess', password: 'tess-pw' }, logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({ topic: t, messages: [{ value: 'j1' }] });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: uniqueName('kafkajs-ssl') });
    const got: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: t, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
    await waitFor('KafkaJS reads 3 records over SASL_SSL', () => got.length >= 3, { timeoutMs: 40_000 });
    await consumer.disconnect();
    expect(got).to.deep.equal(['k1', 'k2', 'j1']);

    const tools = toolOrSkip(this, 'kafka-tools');
    const cfg = path.join(node.dir, 'ssl-client.properties');
    fs.writeFileSync(cfg, [
      `bootstrap.servers=${node.kafka}`, 'security.protocol=SASL_SSL', 'sasl.mechanism=SCRAM-SHA-512', 'ssl.truststore.type=PEM', `ssl.truststore.location=${node.caFile!}`,
      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="tess" password="tess-pw";', '',
    ].join('\n'));
    ok(await runTool(tools, [KAFKA_TOOL_CLASSES.producerPerf, '--topic', t, '--num-records', '10', '--record-size', '20', '--throughput', '-1', '--command-config', cfg]), 'producer perf over SASL_SSL');
    const consumed = ok(await runTool(tools, [KAFKA_TOOL_CLASSES.consumerPerf, '--bootstrap-server', node.kafka, '--command-config', cfg, '--topic', t, '--num-records', '13', '--timeout', '30000']), 'consumer perf over SASL_SSL');
    const lines = consumed.split('\n').map((l) => l.trim()).filter((l) => l.includes(','));
    const header = lines.findIndex((l) => l.startsWith('start.time'));
    const columns = lines[header]!.split(',').map((c) => c.trim());
    expect(Number(lines[header + 1]!.split(',')[columns.indexOf('data.consumed.in.nMsg')]), consumed).to.equal(13);
  });


  it('kcat and the Java client log in with OAUTHBEARER from an HTTPS token endpoint (OIDC client credentials)', async function () {
    const located = findKcatWithOidc(node.dir);
    if (located.tool === null) {
      console.log(`      skipping: ${located.reason}`);
      this.skip();
    }
    const idp = await startTokenEndpoint({
      clients: { 'tls-app': 'tls-secret' }, signer: node.signer, audience: node.audience, issuer: node.issuer,
      tls: issueCert(node.ca!, { subject: [['CN', 'idp']], ipAddresses: ['127.0.0.1'] }),
    });
    try {
      const t = uniqueName('oidc-ssl');
      const tools = toolOrSkip(this, 'kafka-tools');
      const cfg = path.join(node.dir, 'oidc-ssl.properties');
      // The login module reaches the token endpoint with the ssl.* options of its JAAS entry.
      fs.writeFileSync(cfg, [
        `bootstrap.servers=${node.kafka}`, 'security.protocol=SASL_SSL', 'sasl.mechanism=OAUTHBEARER', 'ssl.truststore.type=PEM', `ssl.truststore.location=${node.caFile!}`,
        `sasl.login.callback.handler.class=${OAUTH_LOGIN_HANDLER}`, `sasl.oauthbearer.token.endpoint.url=${idp.url}`,
        `sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="tls-app" clientSecret="tls-secret" ssl.truststore.type="PEM" ssl.truststore.location="${node.caFile!}";`, '',
      ].join('\n'));
      const java: Tool = { name: tools.name, argv: [tools.argv[0]!, `-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=${idp.url}`, ...tools.argv.slice(1)] };
      ok(await runTool(java, [KAFKA_TOOL_CLASSES.producerPerf, '--topic', t, '--num-records', '5', '--record-size', '20', '--throughput', '-1', '--command-config', cfg]), 'Java producer perf, OIDC over HTTPS, SASL_SSL');
      const k = ['-b', node.kafka, '-X', 'security.protocol=SASL_SSL', '-X', `ssl.ca.location=${node.caFile!}`, '-X', 'sasl.mechanisms=OAUTHBEARER', '-X', 'sasl.oauthbearer.method=oidc',
        '-X', `sasl.oauthbearer.token.endpoint.url=${idp.url}`, '-X', `https.ca.location=${node.caFile!}`, '-X', 'sasl.oauthbearer.client.id=tls-app', '-X', 'sasl.oauthbearer.client.secret=tls-secret'];
      const out = ok(await runTool(located.tool, [...k, '-C', '-t', t, '-o', 'beginning', '-e', '-q']), 'kcat consume, OIDC over HTTPS, SASL_SSL');
      expect(out.split('\n').filter((l) => l.length > 0)).to.have.length(5);
      expect(idp.issued.get('tls-app')).to.be.at.least(2);
    } finally {
      await idp.close();
    }
  });
});
