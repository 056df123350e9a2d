// Fuzzing the Kafka listener of a live 3-node cluster: at least 100,000
// seeded random and mutated Kafka frames (test/protocol/kafka/fuzz-gen.ts,
// drawn from the served APIs' own tables) over several connections to every
// broker, one frame at a time per connection. Then:
//   - every broker process is alive, its memory bounded;
//   - every well-formed frame was answered in order (or, for acks=0 Produce,
//     not at all) and no answer carries UNKNOWN_SERVER_ERROR: a handler that
//     crashed on odd values would show up as one, or as a closed connection;
//   - a mutated frame was answered or closed its connection, nothing else;
//   - a topic written before (which fuzz frames may append to, never change)
//     still begins with exactly its records, and a well-behaved client still
//     produces, consumes and talks Kafka to every broker.
// Destructive admin APIs (deletes, config and replica changes) are left out
// of the mix: their effects are tested on purpose elsewhere.
// Replay: SLUICE_KAFKA_FUZZ_SEED=<seed>; SLUICE_KAFKA_FUZZ_FRAMES=<n>.

import net from 'node:net';
import fs from 'node:fs';
import { expect } from 'chai';
import { type ProcessCluster } from './harness.js';
import { Connections, brokerUrls, connect, createTopic, produceOk, readPartition, startBrokerCluster } from './broker-kit.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { KafkaFrameGenerator, type FuzzFrame } from '../protocol/kafka/fuzz-gen.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import { KAFKA_HANDLERS } from '../../src/server/kafka/handlers.js';
import { Reader } from '../../src/protocol/kafka/codec/reader.js';
import { decodeMessage, type Struct } from '../../src/protocol/kafka/message.js';
import { inVersions, type KafkaApiSpec } from '../../src/protocol/kafka/schema.js';
import { apiVersions } from '../../src/protocol/kafka/apis/api-versions/schema.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';
import { SeededRng } from '../../src/util/rng.js';

const SEED = Number(process.env.SLUICE_KAFKA_FUZZ_SEED ?? 0xf00d);
const FRAMES = Number(process.env.SLUICE_KAFKA_FUZZ_FRAMES ?? 100_000);
const LANES = 9;
const FUZZ_TIME_MS = 240_000;
const ANSWER_PATIENCE_MS = 10_000;
const STALL_PATIENCE_MS = 50;
/** A mutated frame may decode as a long poll or an acks=0 Produce: waited for briefly, silence allowed. */
const MUTATED_PATIENCE_MS = 500;
const RSS_BYTES_MAX = 1024 * 1024 * 1024;

/** Kafka API keys never fuzzed: their effects are destructive by design. */
const DESTRUCTIVE = new Set([19, 20, 21, 33, 37, 42, 43, 44, 45, 47, 49]);
const KNOWN = 'kfuzz-known';
const NAMES = [KNOWN, 'kfuzz-target', 'kfuzz-group', '__consumer_offsets', ''];

interface Outcome { answered: number; closed: number; silent: number; stalled: number; quiet: number; anomalies: string[] }

function errorCodesIn(v: unknown, out: number[]): void {
  if (Array.isArray(v)) for (const x of v) errorCodesIn(x, out);
  else if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'errorCode' && typeof x === 'number') out.push(x);
      else errorCodesIn(x, out);
    }
  }
}

/** One connection that sends a frame and waits for its answer or its close. */
class Lane {
  private socket: net.Socket | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private waiter: ((r: { frame: Buffer } | { closed: true }) => void) | null = null;

  constructor(private readonly host: string, private readonly port: number) {}

  private async open(): Promise<net.Socket> {
    if (this.socket && !this.socket.destroyed) return this.socket;
    const s = await new Promise<net.Socket>((resolve, reject) => {
      const sock = net.connect({ host: this.host, port: this.port }, () => resolve(sock));
      sock.once('error', reject);
    });
    s.on('error', () => undefined);
    this.buf = Buffer.alloc(0);
    s.on('data', (c: Buffer) => {
      if (this.socket !== s) return;
      this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
      if (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
        const frame = this.buf.subarray(4, 4 + this.buf.readInt32BE(0));
        this.buf = this.buf.subarray(4 + frame.length);
        const w = this.waiter;
        this.waiter = null;
        w?.({ frame });
      }
    });
    s.on('close', () => {
      if (this.socket !== s) return;
      const w = this.waiter;
      this.waiter = null;
      w?.({ closed: true });
    });
    this.socket = s;
    return s;
  }

  async send(f: FuzzFrame, patienceMs: number): Promise<{ frame: Buffer } | { closed: true } | { timeout: true }> {
    const s = await this.open();
    const answer = new Promise<{ frame: Buffer } | { closed: true } | { timeout: true }>((resolve) => {
      const timer = setTimeout(() => { this.waiter = null; resolve({ timeout: true }); }, patienceMs);
      this.waiter = (r) => { clearTimeout(timer); resolve(r); };
    });
    s.write(f.bytes);
    return answer;
  }

  drop(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}

function checkAnswer(f: FuzzFrame, frame: Buffer, spec: KafkaApiSpec, out: Outcome): void {
  const id = frame.readInt32BE(0);
  if (id !== f.correlationId) {
    out.anomalies.push(`${f.api} v${f.version}: answer with correlation id ${id}, sent ${f.correlationId}`);
    return;
  }
  if (f.kind !== 'valid') return;
  const r = new Reader(frame, 4);
  try {
    if (inVersions(spec.response.flexible, f.version) && spec.apiKey !== 18) {
      for (let i = 0, n = r.uvarint(); i < n; i++) { r.uvarint(); r.skip(r.uvarint(), 'tag'); }
    }
    const body = decodeMessage(spec.response, f.version, r);
    const codes: number[] = [];
    errorCodesIn(body, codes);
    if (codes.includes(-1)) out.anomalies.push(`${f.api} v${f.version}: UNKNOWN_SERVER_ERROR for a well-formed request`);
  } catch (err) {
    out.anomalies.push(`${f.api} v${f.version}: undecodable answer: ${(err as Error).message}`);
  }
}

async function runLane(lane: Lane, gen: KafkaFrameGenerator, frames: number, deadline: number, out: Outcome): Promise<number> {
  let sent = 0;
  for (; sent < frames && Date.now() < deadline; sent++) {
    const f = gen.next();
    const spec = KAFKA_HANDLERS.get(f.bytes.length >= 6 ? f.bytes.readInt16BE(4) : -1)?.spec;
    if (f.silent && f.kind === 'valid') {
      // No answer comes: the next frame's answer is the next one on the connection.
      await lane.send(f, 0);
      out.silent++;
      continue;
    }
    const patience = f.kind === 'stall' ? STALL_PATIENCE_MS : f.kind === 'mutated' ? MUTATED_PATIENCE_MS : ANSWER_PATIENCE_MS;
    const res = await lane.send(f, patience);
    if ('frame' in res) {
      out.answered++;
      if (spec) checkAnswer(f, res.frame, spec, out);
    } else if ('closed' in res) {
      out.closed++;
      if (f.kind === 'valid') out.anomalies.push(`${f.api} v${f.version}: connection closed on a well-formed request`);
      lane.drop();
    } else {
      if (f.kind === 'valid') out.anomalies.push(`${f.api} v${f.version}: no answer in ${ANSWER_PATIENCE_MS} ms`);
      if (f.kind === 'stall') out.stalled++;
      else out.quiet++;
      lane.drop();
    }
  }
  return sent;
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function readKnown(conns: Connections, bootstrap: BrokerConnection): Promise<Awaited<ReturnType<typeof readPartition>>> {
  const leader = (await bootstrap.metadata([KNOWN])).topics[0]!.partitions[0]!.leader;
  return readPartition(await conns.get((await brokerUrls(bootstrap)).get(leader)!), KNOWN, 0);
}

describe(`Kafka listener fuzz (seed ${SEED}, ${FRAMES} frames)`, function () {
  this.timeout(FUZZ_TIME_MS + 120_000);
  let cluster: ProcessCluster;
  const conns = new Connections();

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
  });
  after(async () => {
    conns.closeAll();
    await cluster?.cleanup();
  });

  it('survives random and mutated frames; well-formed ones are answered; known data stays intact', async () => {
    const bootstrap = await connect(cluster.brokerUrls[0]!);
    try {
      await createTopic(bootstrap, KNOWN, 1, 3);
      const known = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `known-${i}` }));
      await produceOk(conns, bootstrap, KNOWN, 0, known);
      const before = await readKnown(conns, bootstrap);

      const apis = [...KAFKA_HANDLERS.values()].filter((h) => !DESTRUCTIVE.has(h.spec.apiKey));
      const rng = new SeededRng(SEED);
      const out: Outcome = { answered: 0, closed: 0, silent: 0, stalled: 0, quiet: 0, anomalies: [] };
      const deadline = Date.now() + FUZZ_TIME_MS;
      const perLane = Math.ceil(FRAMES / LANES);
      const sent = await Promise.all(Array.from({ length: LANES }, (_, i) => {
        const [host, port] = cluster.nodes[i % 3]!.kafkaAddress.split(':');
        return runLane(new Lane(host!, Number(port)), new KafkaFrameGenerator(rng.fork(), apis, NAMES), perLane, deadline, out);
      }));
      const total = sent.reduce((a, b) => a + b, 0);
      console.log(`      kafka fuzz: ${total} frames (${out.answered} answered, ${out.closed} closed, ${out.silent} silent, ${out.stalled} stalled, ${out.quiet} mutated and unanswered)`);
      expect(out.anomalies.slice(0, 20), 'anomalies').to.deep.equal([]);
      expect(total, 'frames sent before the time bound').to.be.at.least(FRAMES);

      for (const n of cluster.nodes) {
        expect(n.child?.exitCode ?? null, `node ${n.id} alive`).to.equal(null);
        expect(rssBytes(n.pid!), `node ${n.id} RSS`).to.be.below(RSS_BYTES_MAX);
        const c = await RawKafkaClient.connect('127.0.0.1', n.kafkaPort!);
        try {
          expect((await c.request(apiVersions, 3, {})).errorCode).to.equal(0);
          const md = await c.request(metadata, 12, { topics: [{ name: KNOWN }], allowAutoTopicCreation: false });
          expect(((md.topics as Struct[])[0]!).errorCode).to.equal(0);
        } finally {
          c.close();
        }
      }
      const after = await readKnown(conns, bootstrap);
      expect(after.batches.slice(0, before.batches.length).map((b) => b.toString('hex'))).to.deep.equal(before.batches.map((b) => b.toString('hex')));
      await produceOk(conns, bootstrap, KNOWN, 0, [{ key: 'after', value: 'fuzz' }]);
      const last = (await readKnown(conns, bootstrap)).records.at(-1)!;
      expect(last.value?.toString()).to.equal('fuzz');
    } finally {
      bootstrap.close();
    }
  });
});
