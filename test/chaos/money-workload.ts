// The tx_money workload (issue 18), after Redpanda's tx_money: the REAL
// client (transactional Producer, read_committed Consumer) doing money
// transfers as transactions, recording every operation in the tx_money
// history (money-history.ts). One implementation for both harnesses: the
// chaos run (real processes, test/chaos/money-run.ts) and the whole-cluster
// simulation (test/sim/cluster/money.ts) differ only in their MoneyEnv
// (how a client is made, what time it is, how to wait).
//
// Workers:
//   transferers   slot k has transactional id `<prefix>-m<k>`; an instance
//                 (a producer with that id) initialises, then runs transfers —
//                 one transaction each: a debit record to the source account's
//                 partition, a credit to the destination's; some abort on
//                 purpose — for its lifetime. Then a new instance of the same
//                 id initialises (fencing the old one), and the OLD one tries
//                 once more: either it opens a transaction and sends its legs
//                 before the new init and commits after it ('open'), or it
//                 starts a whole transfer after it ('late'). Both must be
//                 refused (the checker's zombie rules). An instance that hits
//                 an error it cannot abort out of is replaced too.
//   processors    read-process-write: members of the audit group reading the
//                 money topic read_committed; each delivered batch becomes one
//                 transaction copying every record into the audit topic (same
//                 partition) with the next offsets sent into it (sendOffsets
//                 with the consumer: KIP-447 generation fencing). A failed
//                 transaction ends the session: the next one starts from the
//                 committed offsets, as an exactly-once application must.
//   readers       a read_committed consumer assigned every money partition from
//                 offset 0, recording each poll: the balances it builds must be
//                 whole at every transaction boundary.
//
// Every wait is bounded (the client's own timeouts, CLOSE_TIMEOUT_MS), so
// stop() is bounded too.

import type { Client, Consumer, EachBatchPayload, Producer, Transaction } from '../../src/index.js';
import type { Rng } from '../../src/util/rng.js';
import { encodeAudit, encodeLeg, type MoneyEntry, type SentRecord, type TxnOp, type TxnOutcome } from './money-history.js';

/** What the workers need from their world. */
export interface MoneyEnv {
  /** History time (ms since the run started, one time line for every host). */
  now(): number;
  record(e: MoneyEntry): void;
  /** A new client living on `host`. */
  client(host: string, clientId: string): Client;
  /** Waits `ms` on the host's clock. */
  sleep(host: string, ms: number): Promise<void>;
  monotonicMs(host: string): number;
  /** Diagnostics (the simulation's trace). */
  note(line: string): void;
}

export interface MoneyOptions {
  readonly prefix?: string;
  readonly partitions?: number;
  readonly accounts?: number;
  readonly initialBalance?: number;
  readonly transferers?: number;
  readonly processors?: number;
  readonly readers?: number;
  /** Chance a transfer is aborted on purpose. */
  readonly abortProbability?: number;
  readonly amountMax?: number;
  /** Pause between two transfers of one instance. */
  readonly transferPauseMs?: { readonly min: number; readonly max: number };
  /** How long a transferer instance or a processor session lives. */
  readonly lifetimeMs?: { readonly min: number; readonly max: number };
  readonly transactionTimeoutMs?: number;
  /** The producers' maxBlockMs / deliveryTimeoutMs (bounds every transactional call). */
  readonly maxBlockMs?: number;
  readonly deliveryTimeoutMs?: number;
  /** The processors' and readers' consumer group session timeout. */
  readonly sessionTimeoutMs?: number;
}

type Resolved = Required<MoneyOptions>;

export const MONEY_DEFAULTS: Resolved = {
  prefix: 'money',
  partitions: 3,
  accounts: 6,
  initialBalance: 1_000,
  transferers: 2,
  processors: 2,
  readers: 1,
  abortProbability: 0.2,
  amountMax: 50,
  transferPauseMs: { min: 5, max: 60 },
  lifetimeMs: { min: 4_000, max: 12_000 },
  transactionTimeoutMs: 15_000,
  maxBlockMs: 10_000,
  deliveryTimeoutMs: 10_000,
  sessionTimeoutMs: 6_000,
};

/** Bound on closing a consumer or producer (a dead coordinator may never answer a leave or an abort). */
const CLOSE_TIMEOUT_MS = 10_000;
const RETRY_PAUSE_MS = { min: 50, max: 300 };

export interface MoneyCounts {
  transfers: number;
  committed: number;
  aborted: number;
  unknown: number;
  instances: number;
  initsFailed: number;
  zombieAttempts: number;
  zombieRefused: number;
  processed: number;
  processSessions: number;
  reads: number;
  records: number;
}

/** A transferer instance: one producer of the slot's transactional id. */
interface Instance {
  readonly name: string;
  readonly number: number;
  readonly client: Client;
  readonly producer: Producer;
  /** Set once it hit an error it could not abort out of: it is replaced, never given another transfer. */
  broken: boolean;
  transfers: number;
}

/** A transfer's legs, drawn before its transaction starts. */
interface Plan {
  readonly txn: string;
  readonly intent: 'commit' | 'abort';
  readonly records: SentRecord[];
}

export class MoneyWorkload {
  readonly o: Resolved;
  readonly counts: MoneyCounts = {
    transfers: 0, committed: 0, aborted: 0, unknown: 0, instances: 0, initsFailed: 0, zombieAttempts: 0, zombieRefused: 0,
    processed: 0, processSessions: 0, reads: 0, records: 0,
  };
  private readonly running: Array<Promise<void>> = [];
  private transfersStopped = false;
  private stopped = false;
  /** Per money partition: the highest next-offset a committed process transaction sent (the group's committed offset, as far as we know). */
  private readonly processedTo = new Map<number, number>();
  /** Per money partition: one past the last record a reader delivered. */
  private readonly readTo = new Map<number, number>();

  constructor(private readonly env: MoneyEnv, private readonly rng: Rng, opts: MoneyOptions = {}) {
    this.o = { ...MONEY_DEFAULTS, ...definedOnly(opts) };
  }

  get topic(): string {
    return `${this.o.prefix}-money`;
  }

  get auditTopic(): string {
    return `${this.o.prefix}-audit`;
  }

  get auditGroup(): string {
    return `${this.o.prefix}-audit-g`;
  }

  /** The topics the runner creates (same partition count: a copy goes to its input's partition). */
  topics(): Array<{ topic: string; partitions: number }> {
    return [{ topic: this.topic, partitions: this.o.partitions }, { topic: this.auditTopic, partitions: this.o.partitions }];
  }

  partitions(): Array<{ topic: string; partition: number }> {
    return this.topics().flatMap((t) => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.topic, partition })));
  }

  /** Transactional ids the workload uses (the runner finds their coordinators). */
  transactionalIds(): string[] {
    return [
      ...Array.from({ length: this.o.transferers }, (_, k) => `${this.o.prefix}-m${k}`),
      ...Array.from({ length: this.o.processors }, (_, j) => `${this.o.prefix}-x${j}`),
    ];
  }

  /** Client host names (the simulation may cut them off). */
  clientHosts(): string[] {
    return [
      ...Array.from({ length: this.o.transferers }, (_, k) => `${this.o.prefix}-m${k}`),
      ...Array.from({ length: this.o.processors }, (_, j) => `${this.o.prefix}-x${j}`),
      ...Array.from({ length: this.o.readers }, (_, i) => `${this.o.prefix}-r${i}`),
    ];
  }

  /** Records the setup entry and starts every worker. */
  start(): void {
    const now = this.env.now();
    this.env.record({
      kind: 'money-setup', invokeMs: now, completeMs: now, topic: this.topic, partitions: this.o.partitions, accounts: this.o.accounts,
      initialBalance: this.o.initialBalance, auditTopic: this.auditTopic, auditGroup: this.auditGroup,
    });
    for (let k = 0; k < this.o.transferers; k++) this.running.push(this.transferLoop(k, this.rng.fork()));
    for (let j = 0; j < this.o.processors; j++) this.running.push(this.processLoop(j, this.rng.fork()));
    for (let i = 0; i < this.o.readers; i++) this.running.push(this.readLoop(i));
  }

  /** Stops new transfers; resolves once every transferer has finished. */
  private readonly transferLoops: Array<Promise<void>> = [];
  async stopTransfers(): Promise<void> {
    this.transfersStopped = true;
    await Promise.all(this.transferLoops);
  }

  /**
   * True once the processors have committed past everything the readers
   * delivered on every partition (after stopTransfers: the audit stage has
   * caught up, so the exactly-once check covers the whole input).
   */
  caughtUp(): boolean {
    for (let p = 0; p < this.o.partitions; p++) {
      if ((this.processedTo.get(p) ?? 0) < (this.readTo.get(p) ?? 0)) return false;
    }
    return true;
  }

  /** Stops every worker; resolves once each has ended (bounded by the clients' timeouts). */
  async stop(): Promise<void> {
    this.transfersStopped = true;
    this.stopped = true;
    await Promise.all(this.running);
  }

  // ---- transfers ---------------------------------------------------------------------

  private transferLoop(k: number, rng: Rng): Promise<void> {
    const p = this.runTransfers(k, rng).catch((err: unknown) => this.env.note(`transferer ${k} ended: ${(err as Error).stack ?? String(err)}`));
    this.transferLoops.push(p);
    return p;
  }

  private async runTransfers(k: number, rng: Rng): Promise<void> {
    const host = `${this.o.prefix}-m${k}`;
    const id = `${this.o.prefix}-m${k}`;
    let number = 0;
    let current: Instance | null = null;
    let endMs = 0;
    let txns = 0;
    try {
      while (!this.transfersStopped) {
        if (current === null || current.broken || this.env.monotonicMs(host) >= endMs) {
          // A healthy instance at the end of its life tries once more after (or across) its successor's init.
          const old = current !== null && !current.broken ? current : null;
          const variant = rng.chance(0.5) ? 'open' : 'late';
          const open = old && variant === 'open' ? await this.openZombie(old, id, `${old.name}#z`, rng) : null;
          const next = await this.newInstance(host, id, ++number, rng);
          if (old) {
            if (next) {
              if (open) await this.endZombie(old, id, open);
              else await this.transfer(old, id, this.plan(`${old.name}#z`, rng, 'commit'), true);
            } else if (open) {
              await this.abortQuietly(open.tx);
            }
          }
          if (current && (next || current.broken)) {
            await this.closeInstance(current);
            current = null;
          }
          if (!next) {
            await this.env.sleep(host, rng.range(RETRY_PAUSE_MS.min, RETRY_PAUSE_MS.max));
            continue;
          }
          current = next;
          endMs = this.env.monotonicMs(host) + rng.range(this.o.lifetimeMs.min, this.o.lifetimeMs.max);
        }
        await this.transfer(current, id, this.plan(`${current.name}#${++txns}`, rng), false);
        await this.env.sleep(host, rng.range(this.o.transferPauseMs.min, this.o.transferPauseMs.max));
      }
    } finally {
      if (current) await this.closeInstance(current);
    }
  }

  /** A new producer of `id`, initialised (which fences every older one); null when its init failed. */
  private async newInstance(host: string, id: string, number: number, rng: Rng): Promise<Instance | null> {
    const name = `${id}.${number}`;
    const client = this.env.client(host, name);
    const producer = client.producer({
      transactionalId: id, transactionTimeoutMs: this.o.transactionTimeoutMs, acks: -1, lingerMs: 2, ackTimeoutMs: 3_000,
      deliveryTimeoutMs: this.o.deliveryTimeoutMs, maxBlockMs: this.o.maxBlockMs, retryBackoffMs: 50, retryBackoffMaxMs: 500, rng: rng.fork(),
    });
    this.counts.instances++;
    const invokeMs = this.env.now();
    try {
      await producer.initTransactions();
      this.env.record({ kind: 'txn-init', invokeMs, completeMs: this.env.now(), transactionalId: id, instance: number, producer: name, outcome: 'ok' });
      return { name, number, client, producer, broken: false, transfers: 0 };
    } catch (err) {
      this.counts.initsFailed++;
      this.env.record({ kind: 'txn-init', invokeMs, completeMs: this.env.now(), transactionalId: id, instance: number, producer: name, outcome: 'fail', error: errorText(err) });
      await this.closeInstance({ name, number, client, producer, broken: true, transfers: 0 });
      return null;
    }
  }

  private async closeInstance(i: Instance): Promise<void> {
    await this.bounded(i.producer.close().catch(() => undefined), i.name);
    i.client.close();
  }

  private plan(txn: string, rng: Rng, intent?: 'commit' | 'abort'): Plan {
    const from = rng.int(this.o.accounts);
    const to = (from + 1 + rng.int(this.o.accounts - 1)) % this.o.accounts;
    const amount = 1 + rng.int(this.o.amountMax);
    const legs = [{ account: from, amount: -amount }, { account: to, amount }];
    return {
      txn, intent: intent ?? (rng.chance(this.o.abortProbability) ? 'abort' : 'commit'),
      records: legs.map((l, index) => ({
        topic: this.topic, partition: l.account % this.o.partitions,
        value: encodeLeg({ txn, account: l.account, amount: l.amount, index, legs: legs.length }),
      })),
    };
  }

  /** One transfer transaction on instance `i`, recorded whatever happens. */
  private async transfer(i: Instance, id: string, plan: Plan, zombie: boolean): Promise<void> {
    const invokeMs = this.env.now();
    let endInvokeMs: number | undefined;
    let outcome: TxnOutcome;
    let error: string | undefined;
    let tx: Transaction | null = null;
    if (zombie) this.counts.zombieAttempts++;
    try {
      tx = await i.producer.transaction();
      await this.sendLegs(tx, plan);
      endInvokeMs = this.env.now();
      if (plan.intent === 'commit') await tx.commit();
      else await tx.abort();
      outcome = plan.intent === 'commit' ? 'committed' : 'aborted';
    } catch (err) {
      error = errorText(err);
      // abort() after a failure says the transaction is not committed; a failed abort leaves it open: unknown, and the instance is replaced.
      outcome = tx !== null && (await this.abortQuietly(tx)) ? 'aborted' : 'unknown';
      if (outcome === 'unknown' || zombie) i.broken = true;
    }
    i.transfers++;
    this.tally(outcome, zombie);
    this.recordTxn({ invokeMs, id, i, plan, outcome, ...(endInvokeMs === undefined ? {} : { endInvokeMs }), ...(error ? { error } : {}), zombie });
  }

  /** The 'open' zombie: a transaction with its legs sent, to be committed after the successor's init. */
  private async openZombie(i: Instance, id: string, txn: string, rng: Rng): Promise<{ tx: Transaction; plan: Plan; invokeMs: number } | null> {
    const plan = this.plan(txn, rng, 'commit');
    const invokeMs = this.env.now();
    let tx: Transaction | null = null;
    try {
      tx = await i.producer.transaction();
      await this.sendLegs(tx, plan);
      return { tx, plan, invokeMs };
    } catch (err) {
      // Not a zombie yet (no successor): an ordinary failed transfer.
      const outcome = tx !== null && (await this.abortQuietly(tx)) ? 'aborted' : 'unknown';
      if (outcome === 'unknown') i.broken = true;
      this.tally(outcome, false);
      this.recordTxn({ invokeMs, id, i, plan, outcome, error: errorText(err), zombie: false });
      return null;
    }
  }

  private async endZombie(i: Instance, id: string, open: { tx: Transaction; plan: Plan; invokeMs: number }): Promise<void> {
    this.counts.zombieAttempts++;
    const endInvokeMs = this.env.now();
    let outcome: TxnOutcome;
    let error: string | undefined;
    try {
      await open.tx.commit();
      outcome = 'committed';
    } catch (err) {
      error = errorText(err);
      outcome = (await this.abortQuietly(open.tx)) ? 'aborted' : 'unknown';
    }
    i.broken = true;
    this.tally(outcome, true);
    this.recordTxn({ invokeMs: open.invokeMs, id, i, plan: open.plan, outcome, endInvokeMs, ...(error ? { error } : {}), zombie: true });
  }

  private async sendLegs(tx: Transaction, plan: Plan): Promise<void> {
    await tx.send({ topic: this.topic, messages: plan.records.map((r) => ({ value: r.value, partition: r.partition })) });
  }

  /** abort(), bounded; true when it resolved. */
  private async abortQuietly(tx: Transaction): Promise<boolean> {
    try {
      return await this.bounded(tx.abort().then(() => true), 'abort') ?? false;
    } catch {
      return false;
    }
  }

  private tally(outcome: TxnOutcome, zombie: boolean): void {
    this.counts.transfers++;
    this.counts[outcome]++;
    if (zombie && outcome !== 'committed') this.counts.zombieRefused++;
  }

  private recordTxn(o: {
    invokeMs: number; id: string; i: Instance; plan: Plan; outcome: TxnOutcome; endInvokeMs?: number; error?: string; zombie: boolean;
  }): void {
    const op: TxnOp = {
      kind: 'txn', invokeMs: o.invokeMs, completeMs: this.env.now(), stage: 'transfer', transactionalId: o.id, instance: o.i.number,
      producer: o.i.name, txn: o.plan.txn, intent: o.plan.intent, records: o.plan.records, outcome: o.outcome,
      ...(o.endInvokeMs === undefined ? {} : { endInvokeMs: o.endInvokeMs }), ...(o.error === undefined ? {} : { error: o.error }),
      ...(o.zombie ? { zombie: true } : {}),
    };
    this.env.record(op);
  }

  // ---- read-process-write ------------------------------------------------------------

  private processLoop(j: number, rng: Rng): Promise<void> {
    return this.runProcessor(j, rng).catch((err: unknown) => this.env.note(`processor ${j} ended: ${(err as Error).stack ?? String(err)}`));
  }

  private async runProcessor(j: number, rng: Rng): Promise<void> {
    const host = `${this.o.prefix}-x${j}`;
    const id = `${this.o.prefix}-x${j}`;
    for (let session = 1; !this.stopped; session++) {
      this.counts.processSessions++;
      await this.processSession(host, id, session, rng);
      if (!this.stopped) await this.env.sleep(host, rng.range(RETRY_PAUSE_MS.min, RETRY_PAUSE_MS.max));
    }
  }

  private async processSession(host: string, id: string, number: number, rng: Rng): Promise<void> {
    const name = `${id}.${number}`;
    const client = this.env.client(host, name);
    const consumer = client.consumer({
      groupId: this.auditGroup, isolationLevel: 'read_committed', autoCommit: false, autoOffsetReset: 'earliest',
      sessionTimeoutMs: this.o.sessionTimeoutMs, heartbeatIntervalMs: 500, rebalanceTimeoutMs: 10_000, metadataMaxAgeMs: 2_000,
      maxWaitMs: 100, maxBytesPerPartition: 16 * 1024,
    });
    const producer = client.producer({
      transactionalId: id, transactionTimeoutMs: this.o.transactionTimeoutMs, acks: -1, lingerMs: 2, ackTimeoutMs: 3_000,
      deliveryTimeoutMs: this.o.deliveryTimeoutMs, maxBlockMs: this.o.maxBlockMs, retryBackoffMs: 50, retryBackoffMaxMs: 500, rng: rng.fork(),
    });
    const state = { failed: false, txns: 0 };
    consumer.on('crash', () => { state.failed = true; });
    const endMs = this.env.monotonicMs(host) + rng.range(this.o.lifetimeMs.min, this.o.lifetimeMs.max) * 2;
    try {
      const invokeMs = this.env.now();
      try {
        await producer.initTransactions();
        this.env.record({ kind: 'txn-init', invokeMs, completeMs: this.env.now(), transactionalId: id, instance: number, producer: name, outcome: 'ok' });
      } catch (err) {
        this.env.record({ kind: 'txn-init', invokeMs, completeMs: this.env.now(), transactionalId: id, instance: number, producer: name, outcome: 'fail', error: errorText(err) });
        return;
      }
      await consumer.subscribe({ topics: [this.topic], fromBeginning: true });
      await consumer.run({ eachBatch: (p) => this.processBatch(consumer, producer, id, number, name, state, p) });
      while (!this.stopped && !state.failed && this.env.monotonicMs(host) < endMs) await this.env.sleep(host, 100);
    } finally {
      await this.bounded(consumer.close().catch(() => undefined), name);
      await this.bounded(producer.close().catch(() => undefined), name);
      client.close();
    }
  }

  private async processBatch(
    consumer: Consumer, producer: Producer, id: string, instance: number, name: string, state: { failed: boolean; txns: number }, p: EachBatchPayload,
  ): Promise<void> {
    const { batch } = p;
    if (state.failed || this.stopped || batch.messages.length === 0 || p.isStale()) return;
    const txn = `${name}#${++state.txns}`;
    const records: SentRecord[] = batch.messages.map((m) => ({
      topic: this.auditTopic, partition: batch.partition,
      value: encodeAudit({ topic: batch.topic, partition: batch.partition, offset: m.offset, value: m.value?.toString('utf8') ?? '', txn }),
    }));
    const next = batch.messages[batch.messages.length - 1]!.offset + 1;
    const offsets = [{ topic: batch.topic, partition: batch.partition, offset: next }];
    const invokeMs = this.env.now();
    let endInvokeMs: number | undefined;
    let outcome: TxnOutcome;
    let error: string | undefined;
    let tx: Transaction | null = null;
    try {
      tx = await producer.transaction();
      await tx.send({ topic: this.auditTopic, messages: records.map((r) => ({ value: r.value, partition: r.partition })) });
      await tx.sendOffsets({ consumer, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
      endInvokeMs = this.env.now();
      await tx.commit();
      outcome = 'committed';
      this.counts.processed += records.length;
      this.processedTo.set(batch.partition, Math.max(next, this.processedTo.get(batch.partition) ?? 0));
    } catch (err) {
      error = errorText(err);
      outcome = tx !== null && (await this.abortQuietly(tx)) ? 'aborted' : 'unknown';
      // The consumer's position is past this batch while its offsets are not committed: start over from the committed ones.
      state.failed = true;
    }
    this.env.record({
      kind: 'txn', invokeMs, completeMs: this.env.now(), stage: 'process', transactionalId: id, instance, producer: name, txn, intent: 'commit',
      records, outcome, offsets, ...(endInvokeMs === undefined ? {} : { endInvokeMs }), ...(error === undefined ? {} : { error }),
    });
  }

  // ---- readers -----------------------------------------------------------------------

  private readLoop(i: number): Promise<void> {
    return this.runReader(i).catch((err: unknown) => this.env.note(`reader ${i} ended: ${(err as Error).stack ?? String(err)}`));
  }

  private async runReader(i: number): Promise<void> {
    const host = `${this.o.prefix}-r${i}`;
    for (let session = 1; !this.stopped; session++) {
      await this.readSession(host, `${host}.${session}`);
      if (!this.stopped) await this.env.sleep(host, RETRY_PAUSE_MS.max);
    }
  }

  /** Reads every money partition from 0 (the balances need the whole history), until stopped or crashed. */
  private async readSession(host: string, session: string): Promise<void> {
    const client = this.env.client(host, session);
    const consumer = client.consumer({ isolationLevel: 'read_committed', autoOffsetReset: 'earliest', maxWaitMs: 100, maxBytesPerPartition: 32 * 1024, metadataMaxAgeMs: 2_000 });
    let crashed = false;
    consumer.on('crash', () => { crashed = true; });
    try {
      consumer.assign(Array.from({ length: this.o.partitions }, (_, partition) => ({ topic: this.topic, partition, offset: 0 })));
      await consumer.run({
        eachBatch: async ({ batch }) => {
          if (batch.messages.length === 0) return;
          const now = this.env.now();
          const records = batch.messages.map((m) => ({ offset: m.offset, value: m.value?.toString('utf8') ?? '' }));
          this.env.record({ kind: 'money-read', invokeMs: now, completeMs: now, session, topic: batch.topic, partition: batch.partition, records });
          this.counts.reads++;
          this.counts.records += records.length;
          this.readTo.set(batch.partition, Math.max(records[records.length - 1]!.offset + 1, this.readTo.get(batch.partition) ?? 0));
        },
      });
      while (!this.stopped && !crashed) await this.env.sleep(host, 100);
    } finally {
      await this.bounded(consumer.close().catch(() => undefined), session);
      client.close();
    }
  }

  // ---- helpers -----------------------------------------------------------------------

  /** `p`, or undefined after CLOSE_TIMEOUT_MS (the caller goes on; `what` goes to the trace). */
  private async bounded<T>(p: Promise<T>, what: string): Promise<T | undefined> {
    let timedOut = false;
    const timeout = this.env.sleep('harness', CLOSE_TIMEOUT_MS).then(() => { timedOut = true; return undefined; });
    const r = await Promise.race([p, timeout]);
    if (timedOut) this.env.note(`${what}: no answer within ${CLOSE_TIMEOUT_MS} ms`);
    return r;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
