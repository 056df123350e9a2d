import { expect } from 'chai';
import { PassThrough, Readable } from 'node:stream';
import type { Producer, ProducerRecord, RecordMetadata } from '../../src/client/producer.js';
import { produceLines, SEND_WINDOW_MAX } from '../../src/cli/produce-run.js';
import { Errors, SluiceError } from '../../src/util/errors.js';

/** A producer whose sends resolve only when the test releases them, in order. */
class HeldProducer {
  readonly pending: Array<{ req: ProducerRecord; release: () => void; fail: (e: Error) => void }> = [];
  sent = 0;
  closed = false;
  private nextOffset = 0;

  send(req: ProducerRecord): Promise<RecordMetadata[]> {
    return new Promise((resolve, reject) => {
      const release = () => resolve(req.messages.map((m) => ({ topic: req.topic, partition: m.partition ?? 0, offset: this.nextOffset++ })));
      this.pending.push({ req, release, fail: reject });
      this.sent++;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).to.equal(true);
}

describe('sluice produce: the stream loop', () => {
  it('keeps at most SEND_WINDOW_MAX sends unresolved and stops reading meanwhile', async () => {
    const producer = new HeldProducer();
    const chunks = Array.from({ length: 50 }, (_, i) => `line-${i}\n`);
    let read = 0;
    const input = new Readable({
      highWaterMark: 1,
      read() {
        this.push(read < chunks.length ? chunks[read++] : null);
      },
    });
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
    const done = produceLines({ producer: producer as unknown as Producer, topic: 't', shape: { partition: 3 }, input, jsonOut: out, progress: () => undefined });
    await until(() => producer.sent === SEND_WINDOW_MAX);
    const readWhenBlocked = read;
    await new Promise((r) => setImmediate(r));
    expect(producer.sent).to.equal(SEND_WINDOW_MAX);
    expect(read).to.be.below(chunks.length);
    expect(read).to.equal(readWhenBlocked);
    let released = 0;
    while (!producer.closed) {
      if (released < producer.pending.length) producer.pending[released++]!.release();
      expect(producer.sent - released).to.be.at.most(SEND_WINDOW_MAX);
      await new Promise((r) => setImmediate(r));
    }
    const tally = await done;
    expect(tally.total).to.equal(50);
    expect(tally.byPartition()).to.deep.equal([{ partition: 3, records: 50 }]);
    const sentValues = producer.pending.flatMap((p) => p.req.messages.map((m) => m.value));
    expect(sentValues).to.deep.equal(chunks.map((c) => c.trim()));
    expect(lines.map((l) => JSON.parse(l) as { offset: number }).map((o) => o.offset)).to.deep.equal([...Array(50).keys()]);
  });

  it('fails with the first failed send, without an unhandled rejection from later ones', async () => {
    const producer = new HeldProducer();
    const input = Readable.from(['a\n', 'b\n', 'c\n']);
    const done = produceLines({ producer: producer as unknown as Producer, topic: 't', shape: {}, input, jsonOut: null, progress: () => undefined });
    await until(() => producer.sent === 3);
    producer.pending[2]!.fail(new SluiceError(Errors.MESSAGE_TOO_LARGE, 'late'));
    producer.pending[0]!.fail(new SluiceError(Errors.INVALID_TOPIC, 'first'));
    try {
      await done;
      expect.fail('no error');
    } catch (err) {
      expect((err as Error).message).to.equal('INVALID_TOPIC: first');
    }
    expect(producer.closed).to.equal(false);
  });
});
