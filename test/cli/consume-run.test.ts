import { expect } from 'chai';
import type { Consumer, ConsumerMessage } from '../../src/client/consumer.js';
import { consumeUntilDone } from '../../src/cli/consume-run.js';

/**
 * A consumer with the iterator contract of the real one: next() first
 * completes the record handed out before; return() completes the held record
 * and stops; stop() stops without completing it.
 */
class FakeConsumer {
  completed = -1;
  stopped = false;
  private held: number | null = null;
  private waiting: ((r: IteratorResult<ConsumerMessage>) => void) | null = null;

  constructor(private readonly available: number) {}

  [Symbol.asyncIterator](): AsyncIterator<ConsumerMessage> {
    let offset = 0;
    return {
      next: async () => {
        if (this.held !== null) this.completed = this.held;
        this.held = null;
        if (this.stopped) return { value: undefined, done: true };
        if (offset >= this.available) return new Promise((resolve) => (this.waiting = resolve));
        this.held = offset;
        return { value: msg(offset++), done: false };
      },
      return: async () => {
        if (this.held !== null) this.completed = this.held;
        this.held = null;
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting?.({ value: undefined, done: true });
  }
}

function msg(offset: number): ConsumerMessage {
  return { topic: 't', partition: 0, offset, timestamp: 0, key: null, value: Buffer.from(`v${offset}`), headers: [] };
}

const never = new Promise<void>(() => undefined);

describe('sluice consume: the read loop', () => {
  it('stops after maxMessages and counts exactly the printed records as processed', async () => {
    const c = new FakeConsumer(10);
    const printed: number[] = [];
    const r = await consumeUntilDone({ consumer: c as unknown as Consumer, maxMessages: 4, stopRequested: never, onMessage: async (m) => void printed.push(m.offset) });
    expect(r).to.deep.equal({ count: 4, reason: 'max-messages' });
    expect(printed).to.deep.equal([0, 1, 2, 3]);
    expect(c.completed).to.equal(3);
    expect(c.stopped).to.equal(true);
  });

  it('on a stop request, does not complete a record taken but not printed', async () => {
    const c = new FakeConsumer(10);
    let requestStop!: () => void;
    const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
    const printed: number[] = [];
    const r = await consumeUntilDone({
      consumer: c as unknown as Consumer, stopRequested,
      onMessage: async (m) => {
        printed.push(m.offset);
        if (printed.length === 2) requestStop();
      },
    });
    expect(r).to.deep.equal({ count: 2, reason: 'stop-requested' });
    expect(c.completed).to.equal(1, 'the record fetched after the stop request is not processed');
    expect(c.stopped).to.equal(true);
  });

  it('stops when no record arrives within the idle timeout', async () => {
    const c = new FakeConsumer(3);
    const r = await consumeUntilDone({ consumer: c as unknown as Consumer, idleTimeoutMs: 20, stopRequested: never, onMessage: async () => undefined });
    expect(r).to.deep.equal({ count: 3, reason: 'idle-timeout' });
    expect(c.completed).to.equal(2);
    expect(c.stopped).to.equal(true);
  });

  it('does not complete a record whose printing failed', async () => {
    const c = new FakeConsumer(5);
    let n = 0;
    const failing = consumeUntilDone({
      consumer: c as unknown as Consumer, maxMessages: 5, stopRequested: never,
      onMessage: async () => {
        if (++n === 3) throw new Error('EPIPE');
      },
    });
    try {
      await failing;
      expect.fail('no error');
    } catch (err) {
      expect((err as Error).message).to.equal('EPIPE');
    }
    expect(c.completed).to.equal(1);
    expect(c.stopped).to.equal(true);
  });
});
