// Muting a throttled connection (KIP-219) on the Kafka listener, with the
// throttle's timer on a ManualScheduler: after throttle(ms) the answer already
// due is written, the next frame is not dispatched until the timer runs, and
// then it is. No durations are asserted: time moves only when the test says.

import net from 'node:net';
import { expect } from 'chai';
import { KafkaServer, DEFAULT_KAFKA_LIMITS } from '../../src/net/kafka-server.js';
import type { ConnectionInfo } from '../../src/net/server-connection.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { waitFor } from '../integration/harness.js';

function frame(tag: number): Buffer {
  const b = Buffer.alloc(4 + 10);
  b.writeInt32BE(10, 0);
  b.writeInt32BE(tag, 4);
  return b;
}

describe('net: a throttled Kafka connection is muted until its timer runs', () => {
  it('answers at once, reads nothing more while muted, and resumes after', async () => {
    const scheduler = new ManualScheduler();
    const seen: number[] = [];
    const server = new KafkaServer((f: Buffer, conn: ConnectionInfo) => {
      const tag = f.readInt32BE(0);
      seen.push(tag);
      if (tag === 1) (conn as unknown as { throttle(ms: number): void }).throttle(5000);
      const answer = Buffer.alloc(4);
      answer.writeInt32BE(tag, 0);
      return [answer];
    }, silentLogger, DEFAULT_KAFKA_LIMITS, undefined, undefined, scheduler);
    const addr = await server.listen({ host: '127.0.0.1', port: 0 });
    const answers: number[] = [];
    const socket = net.connect(addr.port, addr.host);
    let pending = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 8) {
        answers.push(pending.readInt32BE(4));
        pending = pending.subarray(8);
      }
    });
    try {
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(Buffer.concat([frame(1), frame(2)]));
      await waitFor('the throttled request\'s answer', () => answers.length === 1, { timeoutMs: 10_000, intervalMs: 10 });
      socket.write(frame(3));
      // A round trip on another connection proves the server had the chance to read the muted one.
      const other = net.connect(addr.port, addr.host);
      await new Promise<void>((r) => other.once('connect', () => r()));
      other.write(frame(9));
      await new Promise<void>((r) => other.once('data', () => r()));
      other.destroy();
      expect(seen).to.deep.equal([1, 9]);
      expect(scheduler.size).to.equal(1);
      scheduler.advance(5000);
      await waitFor('the muted requests served', () => answers.length === 3, { timeoutMs: 10_000, intervalMs: 10 });
      expect(answers).to.deep.equal([1, 2, 3]);
      expect(seen).to.deep.equal([1, 9, 2, 3]);
    } finally {
      socket.destroy();
      await server.close();
    }
  });
});
