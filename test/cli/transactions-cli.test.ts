// `sluice produce --transactional-id` (the stream loop's transaction cycle:
// how records are split into transactions, that everything is acknowledged
// before a commit, that a failure aborts the open transaction and reports the
// error) and `sluice transactions` output. The real producer and cluster
// are exercised in test/client/transactions-cluster.test.ts.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import type { Producer, ProducerRecord, RecordMetadata, Transaction } from '../../src/client/producer.js';
import { produceLines } from '../../src/cli/produce-run.js';
import { renderTransactionDescriptions, renderTransactionList } from '../../src/cli/transactions-render.js';
import { Errors, SluiceError } from '../../src/util/errors.js';

/** Records what the loop asks of a transactional producer: which values went into which transaction, and how each ended. */
class TxnLog {
  readonly txns: Array<{ values: string[]; ended: 'open' | 'committed' | 'aborted'; unackedAtCommit: number }> = [];
  unacked = 0;
  failOnValue: string | null = null;

  producer(): Producer {
    const transaction = async (): Promise<Transaction> => {
      const t = { values: [] as string[], ended: 'open' as 'open' | 'committed' | 'aborted', unackedAtCommit: -1 };
      if (this.txns.some((x) => x.ended === 'open')) throw new Error('two transactions open at once');
      this.txns.push(t);
      return {
        send: async (req: ProducerRecord): Promise<RecordMetadata[]> => {
          this.unacked++;
          await new Promise((r) => setImmediate(r));
          this.unacked--;
          const vs = req.messages.map((m) => String(m.value));
          t.values.push(...vs);
          if (this.failOnValue !== null && vs.includes(this.failOnValue)) throw new SluiceError(Errors.TOPIC_AUTHORIZATION_FAILED, 'refused');
          return vs.map((_, i) => ({ topic: req.topic, partition: 0, offset: i }));
        },
        sendBatch: async () => [],
        sendOffsets: async () => undefined,
        commit: async () => {
          t.unackedAtCommit = this.unacked;
          t.ended = 'committed';
        },
        abort: async () => {
          t.ended = 'aborted';
        },
        isActive: () => t.ended === 'open',
      };
    };
    return { transaction, close: async () => undefined, send: () => { throw new Error('a transactional run sends in transactions only'); } } as unknown as Producer;
  }
}

const input = (n: number, perChunk: number): Readable => {
  const chunks: string[] = [];
  for (let i = 0; i < n; i += perChunk) chunks.push(Array.from({ length: Math.min(perChunk, n - i) }, (_, j) => `v${i + j}\n`).join(''));
  return Readable.from(chunks);
};

describe('sluice produce --transactional-id: the transaction cycle', () => {
  it('puts the whole input in one transaction by default, committed after every record is acknowledged', async () => {
    const log = new TxnLog();
    const tally = await produceLines({ producer: log.producer(), topic: 't', shape: {}, input: input(25, 4), jsonOut: null, progress: () => undefined, transactions: { recordsMax: null } });
    expect(log.txns.map((t) => [t.values.length, t.ended, t.unackedAtCommit])).to.deep.equal([[25, 'committed', 0]]);
    expect(tally.total).to.equal(25);
    expect(tally.transactions).to.equal(1);
    expect(tally.summary('t')).to.contain('in 1 committed transaction(s)');
  });

  it('commits every N records exactly, splitting stdin chunks across transactions', async () => {
    const log = new TxnLog();
    const tally = await produceLines({ producer: log.producer(), topic: 't', shape: {}, input: input(23, 7), jsonOut: null, progress: () => undefined, transactions: { recordsMax: 5 } });
    expect(log.txns.map((t) => t.values.length)).to.deep.equal([5, 5, 5, 5, 3]);
    expect(log.txns.every((t) => t.ended === 'committed' && t.unackedAtCommit === 0)).to.equal(true);
    expect(log.txns.flatMap((t) => t.values)).to.deep.equal(Array.from({ length: 23 }, (_, i) => `v${i}`));
    expect(tally.transactions).to.equal(5);
  });

  it('aborts the open transaction on a failure and reports it; earlier transactions stay committed', async () => {
    const log = new TxnLog();
    log.failOnValue = 'v12';
    let caught: unknown;
    try {
      await produceLines({ producer: log.producer(), topic: 't', shape: {}, input: input(20, 1), jsonOut: null, progress: () => undefined, transactions: { recordsMax: 5 } });
    } catch (err) {
      caught = err;
    }
    expect((caught as SluiceError).errorName).to.equal('TOPIC_AUTHORIZATION_FAILED');
    expect(log.txns.map((t) => t.ended)).to.deep.equal(['committed', 'committed', 'aborted']);
  });

  it('writes nothing and commits nothing for empty input', async () => {
    const log = new TxnLog();
    const tally = await produceLines({ producer: log.producer(), topic: 't', shape: {}, input: Readable.from([]), jsonOut: null, progress: () => undefined, transactions: { recordsMax: null } });
    expect(log.txns).to.deep.equal([]);
    expect(tally.transactions).to.equal(0);
  });
});

describe('sluice transactions: output', () => {
  it('lists transactional ids, or says there are none', () => {
    expect(renderTransactionList([])).to.equal('no transactional ids');
    const text = renderTransactionList([{ transactionalId: 'pay-1', producerId: 4000, state: 'Ongoing', coordinatorId: 2 }]);
    expect(text.split('\n')[0]).to.match(/^TRANSACTIONAL-ID\s+COORDINATOR\s+PRODUCER-ID\s+STATE$/);
    expect(text.split('\n')[1]).to.match(/^pay-1\s+2\s+4000\s+Ongoing$/);
  });

  it('describes an open transaction with its age and partitions, and a closed one without', () => {
    const text = renderTransactionDescriptions([
      { errorCode: 0, errorMessage: null, transactionalId: 'pay-1', transactionState: 'Ongoing', transactionTimeoutMs: 60000, transactionStartTimeMs: 1000,
        producerId: 7, producerEpoch: 3, topics: [{ name: 'acct', partitions: [0, 2] }], coordinatorId: 1 },
      { errorCode: 0, errorMessage: null, transactionalId: 'pay-2', transactionState: 'CompleteCommit', transactionTimeoutMs: 60000, transactionStartTimeMs: -1,
        producerId: 8, producerEpoch: 1, topics: [], coordinatorId: 1 },
    ], 3500);
    const [, open, closed] = text.split('\n');
    expect(open).to.match(/^pay-1\s+1\s+Ongoing\s+7\s+3\s+60000\s+1000\s+2500\s+acct-0,acct-2\s+-$/);
    expect(closed).to.match(/^pay-2\s+1\s+CompleteCommit\s+8\s+1\s+60000\s+-\s+-\s+-\s+-$/);
  });
});
