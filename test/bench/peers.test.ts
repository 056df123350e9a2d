// The benchmark peers (NATS JetStream, Redis Streams) on tiny workloads: each
// deployment starts its real servers on loopback, produce acknowledges every
// record, consume (one reader, then a group) reads back exactly that many,
// e2e returns a histogram with records, and stop() leaves no process behind.
// A peer whose server binary is missing is skipped with the reason (install
// the peers with `make bench-peers`). Also unit tests of the RESP codec the
// Redis driver uses, on bytes.

import { expect } from 'chai';
import { natsAvailability, natsR1, natsR3 } from '../../bench/peers/nats.js';
import { redisAof, redisAvailability, redisNoAof } from '../../bench/peers/redis.js';
import { ReplySink, RespParser, encodeCommand, encodeValueCommands } from '../../bench/peers/resp.js';
import { splitRecords } from '../../bench/peers/load.js';
import type { Availability, Deployment } from '../../bench/suite/types.js';

const RECORDS = 2_000;
const SECONDS = 5;
const VALUE_BYTES = 100;
const E2E_RATE_PER_S = 1_000;
const E2E_SECONDS = 1;
const DEPLOYMENT_TIMEOUT_MS = 120_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs the tiny workloads on one deployment and checks its processes are gone after stop(). */
async function exercise(d: Deployment): Promise<void> {
  let pids: readonly number[] = [];
  const reported: number[] = [];
  try {
    await d.start();
    pids = d.serverPids();
    expect(pids.length).to.be.greaterThan(0);
    for (const pid of pids) expect(isAlive(pid), `server ${pid} runs`).to.equal(true);

    const produced = await d.produce({ records: RECORDS, seconds: SECONDS, valueBytes: VALUE_BYTES, producers: 1 }, (n) => reported.push(n));
    expect(produced.records, 'every record acknowledged').to.equal(RECORDS);
    expect(produced.bytes).to.equal(RECORDS * VALUE_BYTES);
    expect(produced.recordsPerS).to.be.greaterThan(0);
    expect(reported.at(-1), 'progress reaches the end').to.equal(RECORDS);
    expect(reported.length, 'progress is reported in chunks, not per record').to.be.lessThan(RECORDS);

    const read = await d.consume({ records: produced.records, seconds: SECONDS, consumers: 1 }, () => undefined);
    expect(read.records, 'one consumer reads everything back').to.equal(RECORDS);
    expect(read.bytes).to.equal(RECORDS * VALUE_BYTES);

    const produced2 = await d.produce({ records: RECORDS, seconds: SECONDS, valueBytes: VALUE_BYTES, producers: 2 }, () => undefined);
    expect(produced2.records, 'two producers share the records').to.equal(RECORDS);
    const grouped = await d.consume({ records: produced2.records, seconds: SECONDS, consumers: 2 }, () => undefined);
    expect(grouped.records, 'a two-member group reads everything back').to.equal(RECORDS);

    // A short warm-up: a peer slow to start (cold JIT here, cold binary there) must still leave measured records.
    const latency = await d.e2e({ ratePerS: E2E_RATE_PER_S, seconds: E2E_SECONDS, warmupSeconds: 0.25, valueBytes: VALUE_BYTES }, () => undefined);
    expect(latency.records).to.be.greaterThan(0);
    expect(latency.p50Ms).to.be.greaterThan(0);
    expect(latency.p99Ms).to.be.at.least(latency.p50Ms);
    // Not max >= p99: HdrHistogram reports a percentile as its bucket's highest value, which can pass the max recorded.
    expect(latency.maxMs).to.be.greaterThan(0);
    expect(latency.curve.length).to.be.greaterThan(0);
  } finally {
    await d.stop();
  }
  for (const pid of pids) expect(isAlive(pid), `server ${pid} is gone after stop()`).to.equal(false);
  expect(d.serverPids()).to.deep.equal([]);
}

function peerSuite(name: string, availability: () => Availability, deployments: Record<string, () => Deployment>): void {
  describe(name, function () {
    this.timeout(DEPLOYMENT_TIMEOUT_MS);

    before(function () {
      const a = availability();
      if (!a.available) {
        console.log(`      skipping ${name}: ${a.reason ?? 'not available'}`);
        this.skip();
      }
    });

    for (const [variant, make] of Object.entries(deployments)) {
      it(`${variant}: produce, consume (1 and a group of 2) and e2e on tiny workloads; no process left`, async () => {
        await exercise(make());
      });
    }
  });
}

describe('bench peers', () => {
  peerSuite('NATS JetStream', natsAvailability, {
    R1: () => natsR1(),
    R3: () => natsR3(),
    'R1 through js.publish': () => natsR1({ publish: 'js-publish' }),
  });
  peerSuite('Redis Streams', redisAvailability, { 'AOF everysec': redisAof, 'no AOF': redisNoAof });

  it('availability names the version or why not', () => {
    for (const a of [natsAvailability(), redisAvailability()]) {
      if (a.available) expect(a.version).to.match(/^\d+\.\d+\.\d+/);
      else expect(a.reason).to.be.a('string').and.not.equal('');
    }
  });

  it('splitRecords shares records as evenly as possible', () => {
    expect(splitRecords(10, 3)).to.deep.equal([4, 3, 3]);
    expect(splitRecords(2, 3)).to.deep.equal([1, 1, 0]);
    expect(splitRecords(7, 1)).to.deep.equal([7]);
  });
});

describe('bench peers: RESP codec', () => {
  class Recorder extends ReplySink {
    readonly events: string[] = [];
    override array(n: number, depth: number): void { this.events.push(`${depth}*${n}`); }
    override bulk(buf: Buffer, start: number, end: number, depth: number): void {
      this.events.push(`${depth}$${start < 0 ? 'nil' : buf.toString('latin1', start, end)}`);
    }
    override integer(n: number, depth: number): void { this.events.push(`${depth}:${n}`); }
    override error(message: string, depth: number): void {
      super.error(message, depth);
      this.events.push(`${depth}-${message}`);
    }
  }

  function parse(bytes: Buffer, chunkBytes: number): { events: string[]; replies: number; failure?: string } {
    const sink = new Recorder();
    let replies = 0;
    const parser = new RespParser({ sink: () => sink, replyDone: () => { replies++; } });
    for (let off = 0; off < bytes.length; off += chunkBytes) parser.feed(bytes.subarray(off, off + chunkBytes));
    return { events: sink.events, replies, failure: sink.failure?.message };
  }

  const reply = Buffer.from('*1\r\n*2\r\n$5\r\nbench\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nv\r\n$4\r\na\r\nb\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nv\r\n$0\r\n\r\n:7\r\n$-1\r\n*-1\r\n-ERR no\r\n');
  const expected = [
    '0*1', '1*2', '2$bench', '2*2', '3*2', '4$1-0', '4*2', '5$v', '5$a\r\nb', '3*2', '4$1-1', '4*2', '5$v', '5$',
    '0:7', '0$nil', '0*-1', '0-ERR no',
  ];

  it('parses nested stream replies, nils, integers and errors with their depths', () => {
    const out = parse(reply, reply.length);
    expect(out.events).to.deep.equal(expected);
    expect(out.replies).to.equal(5);
    expect(out.failure).to.equal('ERR no');
  });

  it('gives the same result however the bytes are split into chunks', () => {
    for (const chunk of [1, 2, 3, 7, 16]) expect(parse(reply, chunk).events, `chunks of ${chunk}`).to.deep.equal(expected);
  });

  it('encodes commands and value pipelines as RESP arrays of bulk strings', () => {
    expect(encodeCommand(['XACK', 'bench', 3]).toString('latin1')).to.equal('*3\r\n$4\r\nXACK\r\n$5\r\nbench\r\n$1\r\n3\r\n');
    const values = [Buffer.from('ab'), Buffer.from('')];
    expect(encodeValueCommands(['XADD', 'k', '*', 'v'], values).toString('latin1')).to.equal(
      '*5\r\n$4\r\nXADD\r\n$1\r\nk\r\n$1\r\n*\r\n$1\r\nv\r\n$2\r\nab\r\n*5\r\n$4\r\nXADD\r\n$1\r\nk\r\n$1\r\n*\r\n$1\r\nv\r\n$0\r\n\r\n',
    );
  });
});
