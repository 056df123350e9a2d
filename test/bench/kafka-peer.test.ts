// Apache Kafka as a benchmark peer (issue 19). On bytes and strings, no
// process: the driver's output lines, its results, the latency file, Kafka's
// perf tools' summaries, the server.properties of R1/R3 and the cluster id.
// With the jars of `make bench-peers`: Kafka R1 on loopback runs tiny
// workloads through the Java driver (every record acknowledged is read back,
// by one consumer and by a group; e2e yields latencies) and stop() leaves no
// process; and Kafka's Java client does the same against Sluice's Kafka
// listener (the 'Kafka Java client' deployment). Without the jars (or Java)
// those two skip with the reason.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  driverArgs, latencyOfFile, parseConsumerPerf, parseDriverLine, parseProducerPerf, throughputOf,
} from '../../bench/peers/kafka-driver.js';
import { kafkaAvailability, kafkaR1, newClusterId, serverProperties, type KafkaDeployment } from '../../bench/peers/kafka.js';
import { waitFor } from '../integration/harness.js';
import { sluiceRf3KafkaClient } from '../../bench/suite/sluice.js';
import type { Deployment } from '../../bench/suite/types.js';
import { isAlive } from '../../bench/suite/runner.js';

const RECORDS = 2_000;
const VALUE_BYTES = 100;

describe('bench peers: Apache Kafka, without a broker', () => {
  it('reads the driver\'s JSON lines and ignores everything else', () => {
    expect(parseDriverLine('{"event":"progress","done":512}')).to.deep.equal({ event: 'progress', done: 512 });
    expect(parseDriverLine('  {"event":"error","message":"boom"}  ')).to.deep.equal({ event: 'error', message: 'boom' });
    expect(parseDriverLine('[2026-12-02 08:00:00,000] WARN something (org.apache.kafka...)')).to.equal(null);
    expect(parseDriverLine('{"event":"progress","done":')).to.equal(null);
    expect(parseDriverLine('{"other":1}')).to.equal(null);
  });

  it('passes key=value arguments and the producer configs as p.<name>', () => {
    expect(driverArgs({ topic: 't', records: 10 }, { acks: 'all', 'linger.ms': '5' })).to.deep.equal(['topic=t', 'records=10', 'p.acks=all', 'p.linger.ms=5']);
  });

  it('turns a driver result into the suite\'s throughput, and refuses a malformed one', () => {
    const t = throughputOf({ event: 'result', records: 1000, bytes: 100_000, seconds: 0.5, timeline: [[0, 0], [0.25, 400], [0.5, 1000]] });
    expect(t).to.deep.equal({
      records: 1000, bytes: 100_000, seconds: 0.5, recordsPerS: 2000, mbPerS: 0.2,
      timeline: [{ tS: 0, records: 0 }, { tS: 0.25, records: 400 }, { tS: 0.5, records: 1000 }],
    });
    expect(() => throughputOf({ event: 'result', records: 'x', bytes: 1, seconds: 1 })).to.throw(/malformed/);
    expect(() => throughputOf({ event: 'result', records: 1, bytes: 1, seconds: 0 })).to.throw(/malformed/);
  });

  it('reads the e2e latencies the driver wrote (int32 µs, little endian) into percentiles', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kafka-test-'));
    try {
      const file = path.join(dir, 'lat.bin');
      const buf = Buffer.alloc(4 * 100);
      for (let i = 0; i < 100; i++) buf.writeInt32LE((i + 1) * 1000, i * 4); // 1 ms .. 100 ms
      fs.writeFileSync(file, buf);
      const l = latencyOfFile(file, 50, 2);
      expect(l.records).to.equal(100);
      expect(l.achievedPerS).to.equal(50);
      expect(l.p50Ms).to.be.closeTo(50, 0.1);
      expect(l.p99Ms).to.be.closeTo(99, 0.1);
      expect(l.maxMs).to.be.closeTo(100, 0.1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parses kafka-producer-perf-test\'s summary line (the last one, not the interim ones)', () => {
    const out = [
      '[2026-12-02 08:00:00,000] WARN a log line',
      '40001 records sent, 8000.2 records/sec (0.76 MB/sec), 120.3 ms avg latency, 400.0 ms max latency.',
      '50000 records sent, 9843.5 records/sec (0.94 MB/sec), 101.87 ms avg latency, 412.00 ms max latency, 88 ms 50th, 301 ms 95th, 390 ms 99th, 411 ms 99.9th.',
    ].join('\n');
    expect(parseProducerPerf(out)).to.deep.equal({ records: 50000, recordsPerS: 9843.5, mbPerS: 0.94, avgLatencyMs: 101.87, maxLatencyMs: 412, p50Ms: 88, p99Ms: 390 });
    expect(() => parseProducerPerf('Exception in thread "main"')).to.throw(/no kafka-producer-perf-test summary/);
  });

  it('parses kafka-consumer-perf-test\'s CSV result line', () => {
    const out = [
      'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
      '2026-12-02 08:10:01:123, 2026-12-02 08:10:02:456, 4.7684, 3.5771, 50000, 37509.3773, 1003, 330, 14.4497, 151515.1515',
    ].join('\n');
    expect(parseConsumerPerf(out)).to.deep.equal({ mbPerS: 3.5771, records: 50000, recordsPerS: 37509.3773, rebalanceMs: 1003, fetchMs: 330, fetchRecordsPerS: 151515.1515 });
    expect(() => parseConsumerPerf('start.time, end.time\nWARN: nothing consumed')).to.throw(/no kafka-consumer-perf-test result/);
  });

  it('writes KRaft combined-node properties: static voters, RF and min ISR by cluster size, extra broker configs', () => {
    const nodes = [1, 2, 3].map((id) => ({ id, port: 40000 + id, controllerPort: 41000 + id }));
    const props = new Map(serverProperties(nodes[1]!, nodes, '/d/node-2', { 'log.flush.interval.messages': '1' }).trim().split('\n').map((l) => l.split('=', 2) as [string, string]));
    expect(props.get('process.roles')).to.equal('broker,controller');
    expect(props.get('node.id')).to.equal('2');
    expect(props.get('controller.quorum.voters')).to.equal('1@127.0.0.1:41001,2@127.0.0.1:41002,3@127.0.0.1:41003');
    expect(props.get('listeners')).to.equal('PLAINTEXT://127.0.0.1:40002,CONTROLLER://127.0.0.1:41002');
    expect(props.get('min.insync.replicas')).to.equal('2');
    expect(props.get('offsets.topic.replication.factor')).to.equal('3');
    expect(props.get('log.dirs')).to.equal('/d/node-2');
    expect(props.get('log.flush.interval.messages')).to.equal('1');
    const one = new Map(serverProperties(nodes[0]!, [nodes[0]!], '/d/node-1').trim().split('\n').map((l) => l.split('=', 2) as [string, string]));
    expect([one.get('min.insync.replicas'), one.get('default.replication.factor'), one.get('transaction.state.log.min.isr')]).to.deep.equal(['1', '1', '1']);
    expect(one.has('log.flush.interval.messages')).to.equal(false);
  });

  it('makes cluster ids in Kafka\'s form (16 bytes, URL-safe base64, 22 characters), fresh each time', () => {
    const a = newClusterId();
    expect(a).to.match(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(a, 'base64url')).to.have.length(16);
    expect(newClusterId()).to.not.equal(a);
  });
});

/** Tiny workloads on `d`; checks exact counts and that no server process outlives stop(). */
async function exercise(d: Deployment, group: boolean): Promise<void> {
  let pids: readonly number[] = [];
  try {
    await d.start();
    pids = d.serverPids();
    expect(pids.length).to.be.greaterThan(0);
    const seen: number[] = [];
    const produced = await d.produce({ records: RECORDS, seconds: 20, valueBytes: VALUE_BYTES, producers: 1 }, (n) => seen.push(n));
    expect(produced.records, 'every record acknowledged').to.equal(RECORDS);
    expect(produced.bytes).to.equal(RECORDS * VALUE_BYTES);
    expect(d.externalClientCpuSeconds?.(), 'the driver JVM reports its CPU').to.be.greaterThan(0);
    const read = await d.consume({ records: produced.records, seconds: 20, consumers: 1 }, () => undefined);
    expect(read.records, 'one consumer reads everything back').to.equal(RECORDS);
    if (group) {
      const two = await d.produce({ records: RECORDS, seconds: 20, valueBytes: VALUE_BYTES, producers: 2 }, () => undefined);
      expect(two.records).to.equal(RECORDS);
      const grouped = await d.consume({ records: two.records, seconds: 20, consumers: 2 }, () => undefined);
      expect(grouped.records, 'a two-member group reads everything back, once').to.equal(RECORDS);
      const l = await d.e2e({ ratePerS: 500, seconds: 1, warmupSeconds: 0.5, valueBytes: VALUE_BYTES }, () => undefined);
      expect(l.records).to.be.greaterThan(0);
      expect(l.p99Ms).to.be.at.least(l.p50Ms);
    }
  } finally {
    await d.stop();
  }
  expect(pids.filter(isAlive), 'no server process left').to.deep.equal([]);
  expect(d.serverPids()).to.deep.equal([]);
}

describe('bench peers: Apache Kafka R1 and the Java driver', function () {
  this.timeout(240_000);
  before(function () {
    const a = kafkaAvailability();
    if (!a.available) {
      console.log(`      skipping: ${a.reason}`);
      this.skip();
    }
  });

  it('runs the suite\'s workloads on Kafka R1 (produce, consume, a group, e2e) and stops every node', async () => {
    await exercise(kafkaR1(), true);
  });

  it('kills and restarts a node by PID under a paced acks=all producer, which reports the gap in acknowledgements', async () => {
    const d = kafkaR1() as KafkaDeployment;
    let pids: readonly number[] = [];
    try {
      await d.start();
      const topic = await d.createTopic('failover', 1);
      expect((await d.leaderOf(topic)).leader).to.equal(1);
      const p = d.pacedProducer(topic, { ratePerS: 200, gapMs: 200, secondsMax: 180 });
      try {
        await p.whenSending();
        const pid = d.pidOf(1)!;
        await d.killNode(1);
        expect(isAlive(pid), 'the node is gone after killNode').to.equal(false);
        const killedAtMs = performance.timeOrigin + performance.now();
        d.restartNode(1);
        expect(d.pidOf(1)).to.not.equal(pid);
        await waitFor('acknowledgements to resume after the restart', () => p.gaps.some((g) => g.atMs > killedAtMs), { timeoutMs: 120_000, intervalMs: 100 });
        const gap = p.gaps.find((g) => g.atMs > killedAtMs)!;
        expect(gap.gapFromMs).to.be.at.most(killedAtMs + 1); // the last acknowledgement before the gap came before the kill
      } finally {
        await p.stop();
      }
      pids = d.serverPids();
    } finally {
      await d.stop();
    }
    expect(pids.filter(isAlive)).to.deep.equal([]);
  });

  it('drives Sluice\'s Kafka listener with the same Java client', async () => {
    await exercise(sluiceRf3KafkaClient(), false);
  });
});
