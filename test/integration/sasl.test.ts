// SASL end to end on one real node (issue 16, authentication): the Kafka
// listener is SASL_PLAINTEXT with SCRAM-SHA-256, SCRAM-SHA-512, PLAIN and
// OAUTHBEARER (a JWKS file written here); the WebSocket listener requires
// authentication (ws.sasl.required). An admin logs in with a bearer token and
// creates SCRAM users with `sluice users`; the Sluice client logs in with
// every mechanism over WebSocket (and with a bearer subprotocol); bad
// credentials, a connection that never authenticates, a request before
// authentication, an expired token's session and fuzzed exchanges all end
// the connection and never the node. Kafka clients' logins (kcat, KafkaJS,
// the Java client and tools) are in test/interop/sasl.test.ts.

import fs from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { Client } from '../../src/index.js';
import { BrokerConnection } from '../../src/client/broker-connection.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { ClientLink } from '../../src/net/client-link.js';
import type { SaslOptions } from '../../src/client/sasl.js';
import { waitFor } from './harness.js';
import { runSluice } from './cli-kit.js';
import { AUTH_TIMEOUT_MS, connectAs, startSaslNode, type SaslNode } from './sasl-kit.js';
import { makeJwt, signer } from '../security/sasl/jwt-kit.js';

/** Resolves when the socket closes; rejects past the bound. */
function closedWithin(socket: net.Socket | WebSocket, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A Kafka request frame: size, api key, version, correlation id, client id "t", body. */
function kafkaFrame(apiKey: number, version: number, body: Buffer): Buffer {
  const head = Buffer.alloc(10);
  head.writeInt16BE(apiKey, 0);
  head.writeInt16BE(version, 2);
  head.writeInt32BE(7, 4);
  head.writeInt16BE(1, 8);
  const frame = Buffer.concat([head, Buffer.from('t'), body]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(frame.length, 0);
  return Buffer.concat([size, frame]);
}

function kafkaString(s: string): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(Buffer.byteLength(s), 0);
  return Buffer.concat([b, Buffer.from(s)]);
}

function kafkaBytes(data: Buffer): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(data.length, 0);
  return Buffer.concat([b, data]);
}

function dialKafka(addr: string): Promise<net.Socket> {
  const [host, port] = addr.split(',')[0]!.split(':');
  return new Promise((resolve, reject) => {
    // Flowing, so the broker's answers are read and its FIN is seen.
    const s = net.connect(Number(port), host!, () => resolve(s));
    s.once('error', reject);
    s.resume();
  });
}

describe('SASL on both listeners (one node)', function () {
  this.timeout(120_000);
  let node: SaslNode;
  const sluice = (...args: string[]) => runSluice([...args, '--bootstrap', node.url, '--sasl-mechanism', 'OAUTHBEARER', '--sasl-token-file', node.tokenFile('admin')]);

  before(async function () {
    this.timeout(90_000);
    node = await startSaslNode();
  });

  after(async () => {
    await node?.cluster.cleanup();
    if (node) fs.rmSync(node.dir, { recursive: true, force: true });
  });

  it('sluice users creates, lists and deletes SCRAM users (password from stdin or a flag), logged in with a bearer token', async () => {
    const alice = await runSluice(['users', 'create', 'alice', '--bootstrap', node.url, '--sasl-mechanism', 'OAUTHBEARER', '--sasl-token-file', node.tokenFile('admin')], 'alice-pw\n');
    expect(alice.status, alice.stderr).to.equal(0);
    expect((await sluice('users', 'create', 'bob', '--mechanism', 'SCRAM-SHA-512', '--password', 'bob-pw')).status).to.equal(0);
    expect((await sluice('users', 'create', 'carl', '--password', 'x')).status).to.equal(0);
    expect((await sluice('users', 'delete', 'carl')).status).to.equal(0);
    const listed = JSON.parse((await sluice('users', 'list', '--json')).stdout) as Array<{ user: string; credentials: Array<{ mechanism: string }> }>;
    expect(listed.map((u) => [u.user, u.credentials.map((c) => c.mechanism)])).to.deep.equal([
      ['alice', ['SCRAM-SHA-256', 'SCRAM-SHA-512']], ['bob', ['SCRAM-SHA-512']],
    ]);
    const few = await sluice('users', 'create', 'dan', '--password', 'x', '--iterations', '100');
    expect(few.stderr).to.match(/UNACCEPTABLE_CREDENTIAL.*iterations/);
    // The CLI without credentials is refused by the WebSocket listener.
    const anon = await runSluice(['users', 'list', '--bootstrap', node.url, '--request-timeout-ms', '3000']);
    expect(anon.status).to.equal(1);
  });

  it('the Sluice client logs in with each mechanism over WebSocket and produces and consumes', async () => {
    const logins: SaslOptions[] = [
      { mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'alice-pw' },
      { mechanism: 'SCRAM-SHA-512', username: 'bob', password: 'bob-pw' },
      { mechanism: 'PLAIN', username: 'alice', password: 'alice-pw' },
      { mechanism: 'OAUTHBEARER', token: () => node.token('erin') },
    ];
    const admin = new Client({ bootstrap: node.url, sasl: logins[3]! });
    await admin.admin().createTopics({ topics: [{ topic: 'sasl-ws', numPartitions: 1, replicationFactor: 1 }] });
    admin.close();
    for (const [i, sasl] of logins.entries()) {
      const client = new Client({ bootstrap: node.url, sasl, retry: { retries: 2 } });
      try {
        const producer = client.producer({ lingerMs: 1 });
        await producer.send({ topic: 'sasl-ws', messages: [{ value: `m${i}` }] });
        await producer.close();
        const consumer = client.consumer({ groupId: `g-${sasl.mechanism}`, autoOffsetReset: 'earliest' });
        const got: unknown[] = [];
        await consumer.subscribe({ topics: ['sasl-ws'], fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void got.push(message) });
        await waitFor(`${sasl.mechanism}: ${i + 1} records`, () => got.length >= i + 1, { timeoutMs: 30_000 });
        await consumer.close();
      } finally {
        client.close();
      }
    }
    const who = await connectAs(node.url, { mechanism: 'SCRAM-SHA-512', username: 'bob', password: 'bob-pw' });
    expect(who.principal).to.equal('bob');
    who.close();
  });

  it('a browser-style bearer subprotocol logs in on connect; a bad one closes the socket with the reason', async () => {
    const link = await ClientLink.connect(node.url, { factory: nodeWebSocketFactory, protocols: ['sluice', `bearer.${node.token('frank')}`] });
    const conn = new BrokerConnection(link);
    expect((await conn.metadata([])).brokers).to.have.length(1);
    conn.close();
    const bad = new WebSocket(node.url, ['sluice', `bearer.${node.token('frank').slice(0, -4)}AAAA`]);
    const code = await new Promise<[number, string]>((resolve) => bad.on('close', (c, r) => resolve([c, r.toString()])));
    expect(code[0]).to.equal(1008);
    expect(code[1]).to.match(/signature/);
  });

  it('refuses a wrong password, an unknown user, PLAIN with a wrong password, and expired or foreign tokens', async () => {
    const refusals: Array<[SaslOptions, RegExp]> = [
      [{ mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'nope' }, /invalid credentials/],
      [{ mechanism: 'SCRAM-SHA-256', username: 'bob', password: 'bob-pw' }, /invalid credentials/], // bob has SHA-512 only
      [{ mechanism: 'SCRAM-SHA-512', username: 'nobody', password: 'x' }, /invalid credentials/],
      [{ mechanism: 'PLAIN', username: 'alice', password: 'nope' }, /Invalid username or password/],
      [{ mechanism: 'OAUTHBEARER', token: node.token('x', -5) }, /expired/],
      [{ mechanism: 'OAUTHBEARER', token: makeJwt(signer('RS256', 'k1'), { sub: 'x', aud: 'sluice', iss: 'https://idp.test', exp: 4e9 }) }, /signature/],
    ];
    for (const [sasl, why] of refusals) {
      const err = await connectAs(node.url, sasl).then(() => null, (e: Error) => e);
      expect(err?.message, JSON.stringify(sasl)).to.match(/SASL_AUTHENTICATION_FAILED/).and.match(why);
    }
  });

  it('closes connections that never authenticate (slow loris) or send a request first, on both listeners', async () => {
    const idle = await dialKafka(node.kafka);
    const ws = new WebSocket(node.url);
    await new Promise((resolve) => ws.once('open', resolve));
    await Promise.all([closedWithin(idle, AUTH_TIMEOUT_MS + 5000), closedWithin(ws, AUTH_TIMEOUT_MS + 5000)]);
    // Metadata (api 3) before authenticating: closed without an answer.
    const eager = await dialKafka(node.kafka);
    let answered = false;
    eager.on('data', () => { answered = true; });
    eager.write(kafkaFrame(3, 1, Buffer.from([0xff, 0xff, 0xff, 0xff])));
    await closedWithin(eager, 5000);
    expect(answered).to.equal(false);
  });

  it('fuzzed, truncated and out-of-order SASL exchanges end the connection, never the node', async () => {
    const bodies = [
      Buffer.from('n,,n=alice,r='), Buffer.from('n,,n=alice'), Buffer.from([0xc3, 0x28, 0, 1, 2]), Buffer.alloc(0),
      Buffer.from(`n,,n=${'a'.repeat(5000)},r=x`), Buffer.from('p=tls-unique,,n=alice,r=abc'),
    ];
    for (let i = 0; i < 40; i++) bodies.push(Buffer.from(Array.from({ length: (i * 37) % 300 }, (_, j) => (j * 131 + i * 17) % 256)));
    for (const body of bodies) {
      const s = await dialKafka(node.kafka);
      s.on('error', () => undefined);
      s.write(kafkaFrame(17, 1, kafkaString('SCRAM-SHA-256')));
      s.write(kafkaFrame(36, 0, kafkaBytes(body)));
      s.write(kafkaFrame(36, 0, kafkaBytes(body.subarray(0, body.length >> 1))));
      await closedWithin(s, 5000);
    }
    for (const junk of [kafkaFrame(36, 1, kafkaBytes(Buffer.from('x'))), kafkaFrame(17, 1, Buffer.from([0, 9, 1])), kafkaFrame(17, 0, kafkaString('PLAIN'))]) {
      const s = await dialKafka(node.kafka);
      s.on('error', () => undefined);
      s.write(junk);
      await closedWithin(s, 5000);
    }
    const still = await connectAs(node.url, { mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'alice-pw' });
    expect((await still.metadata([])).brokers).to.have.length(1);
    still.close();
    expect(node.cluster.nodes[0]!.running).to.equal(true);
  });

  it('closes a session whose token expired without re-authentication (KIP-368)', async () => {
    const conn = await connectAs(node.url, { mechanism: 'OAUTHBEARER', token: node.token('gina', 3) });
    expect((await conn.metadata([])).brokers).to.have.length(1);
    const closed = new Promise<string>((resolve) => conn.onClose((e) => resolve(e.message)));
    // The client re-authenticates with the same (now expiring) token; the broker ends the session at exp.
    const reason = await Promise.race([closed, new Promise<string>((_, reject) => setTimeout(() => reject(new Error('session not closed')), 10_000))]);
    expect(reason).to.match(/closed/);
  });
});

describe('SASL between brokers (3 nodes, the broker listeners require a login)', function () {
  this.timeout(150_000);
  let node: SaslNode;

  before(async function () {
    this.timeout(120_000);
    const login = (password: string) => ['--sasl-mechanism-inter-broker-protocol', 'SCRAM-SHA-512', '--inter-broker-sasl-username', 'broker', '--inter-broker-sasl-password', password];
    node = await startSaslNode(['--replica-lag-time-max-ms', '3000'], { size: 3, start: [1, 2, 3], nodeArgs: (id) => login(id === 3 ? 'wrong' : 'broker-pw') });
  });

  after(async () => {
    await node?.cluster.cleanup();
    if (node) fs.rmSync(node.dir, { recursive: true, force: true });
  });

  it('brokers replicate as their SCRAM principal; one with a wrong password is not admitted to the ISR, and the cluster goes on', async () => {
    const client = new Client({ bootstrap: node.url, sasl: { mechanism: 'OAUTHBEARER', token: () => node.token('admin') } });
    try {
      const admin = client.admin();
      await admin.alterUserScramCredentials({ upsertions: [{ user: 'broker', mechanism: 'SCRAM-SHA-512', password: 'broker-pw' }] });
      await admin.createTopics({ topics: [{ topic: 'replicated', replicaAssignment: [[1, 2, 3]] }] });
      const isr = async () => (await admin.describeTopics({ topics: ['replicated'] }))[0]?.partitions[0]?.isr ?? [];
      await waitFor('node 3 out of the ISR, nodes 1 and 2 in it', async () => {
        const now = await isr();
        return now.includes(1) && now.includes(2) && !now.includes(3);
      }, { timeoutMs: 60_000, intervalMs: 300 });
      const producer = client.producer({ lingerMs: 1, acks: -1 });
      await producer.send({ topic: 'replicated', messages: [{ value: 'a' }, { value: 'b' }] });
      await producer.close();
      expect(await isr()).to.include.members([1, 2]).and.not.include(3);
      // Node 2 in the ISR: its fetches were served, which a listener requiring a login does only after one.
      // Node 3 out of it: its login (wrong password) is refused on every attempt.
    } finally {
      client.close();
    }
  });
});
