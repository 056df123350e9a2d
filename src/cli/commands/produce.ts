// `sluice produce`: one record per stdin line, sent with the idempotent
// Producer (acks=all) unless --acks 1|0 turns idempotence off; everything is
// flushed at EOF. The summary (records per partition) goes to stderr, so
// stdout carries only --json's per-record partition and offset. The stream
// loop (bounded memory, progress) is ../produce-run.ts; the line → record
// rules are ../produce-input.ts.
//
// --transactional-id ID: the records are written in transactions — by
// default one for the whole input, committed at EOF; with
// --transaction-records N one per N records. A failure aborts the open
// transaction (read_committed readers never see any of it; earlier committed
// ones stay) and exits 1. A second `sluice produce` with the same id fences
// the first (its next step fails PRODUCER_FENCED).
//
// Exit codes: 0 once every line is acknowledged (and committed); 1 with one
// line on the first failure (records before it may have been written); 2 for usage.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { Acks } from '../../client/producer.js';
import type { CompressionName } from '../../client/producer-options.js';
import { runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { parseHeaders } from '../produce-input.js';
import { produceLines } from '../produce-run.js';

interface ProduceFlags extends ClientFlags {
  readonly topic: string;
  readonly acks: 'all' | '1' | '0';
  readonly keySeparator?: string;
  readonly headers?: string;
  readonly partition?: number;
  readonly compression: CompressionName;
  readonly transactionalId?: string;
  readonly transactionRecords?: number;
  readonly transactionTimeoutMs?: number;
}

const ACKS: Record<ProduceFlags['acks'], Acks> = { all: -1, 1: 1, 0: 0 };

function builder(y: Argv): Argv<ProduceFlags> {
  return withClientFlags(y)
    .usage('$0 produce --topic T [--acks all|1|0] [--key-separator SEP] [--headers k=v,...] [--partition P]\n\n'
      + 'Sends one record per line of stdin (Ctrl-D ends the input). The summary goes to stderr; '
      + 'with --json, each record\'s partition and offset go to stdout as one JSON object per line.')
    .option('topic', { type: 'string', demandOption: true, describe: 'topic to write to' })
    .option('acks', { type: 'string', choices: ['all', '1', '0'], default: 'all', describe: 'all: idempotent, every in-sync replica; 1: the leader; 0: no answer' })
    .option('key-separator', { type: 'string', describe: 'the part of a line before the first SEP is the key (a line without SEP has no key)' })
    .option('headers', { type: 'string', describe: 'headers for every record: k=v,k2=v2' })
    .option('partition', { type: 'number', describe: 'write every record to this partition (default: by key, sticky without one)' })
    .option('compression', { type: 'string', choices: ['none', 'gzip', 'snappy', 'lz4', 'zstd'], default: 'none', describe: 'batch compression' })
    .option('transactional-id', { type: 'string', describe: 'write in transactions with this id: all of stdin in one (or one per --transaction-records); a failure aborts the open one' })
    .option('transaction-records', { type: 'number', describe: 'with --transactional-id: commit every N records (default: once, at the end of the input)' })
    .option('transaction-timeout-ms', { type: 'number', describe: 'with --transactional-id: the coordinator aborts a transaction open longer than this (default 60000)' })
    .example('$0 produce --topic orders < orders.txt', 'one record per line')
    .example('printf "k1:v1\\nk2:v2\\n" | $0 produce --topic orders --key-separator :', 'keys before the first ":"')
    .example('$0 produce --topic orders --acks 1 --headers source=cli --json', 'leader-only acks; print partition/offset per record')
    .example('$0 produce --topic orders --transactional-id loader-1 < batch.txt', 'all lines or none, for read_committed readers')
    .check((args) => {
      if (args.headers !== undefined) parseHeaders(String(args.headers));
      if (args.keySeparator !== undefined && String(args.keySeparator).length === 0) throw new Error('--key-separator must not be empty');
      if (args.partition !== undefined && !(Number.isSafeInteger(args.partition) && Number(args.partition) >= 0)) {
        throw new Error(`--partition must be an integer >= 0, got ${String(args.partition)}`);
      }
      const txnOnly = [['transaction-records', args.transactionRecords], ['transaction-timeout-ms', args.transactionTimeoutMs]] as const;
      for (const [name, v] of txnOnly) {
        if (v === undefined) continue;
        if (args.transactionalId === undefined) throw new Error(`--${name} needs --transactional-id`);
        if (!(Number.isSafeInteger(v) && Number(v) >= 1)) throw new Error(`--${name} must be an integer >= 1, got ${String(v)}`);
      }
      if (args.transactionalId !== undefined) {
        if (String(args.transactionalId).length === 0) throw new Error('--transactional-id must not be empty');
        if (args.acks !== 'all') throw new Error('--transactional-id needs --acks all (a transactional producer is idempotent)');
      }
      return true;
    }) as unknown as Argv<ProduceFlags>;
}

async function handler(args: ArgumentsCamelCase<ProduceFlags>): Promise<void> {
  await runClientCommand(args, async (client) => {
    // Fail fast (within the Client's retries) on an unknown topic, instead of
    // the producer's wait for metadata (maxBlockMs).
    await client.retry('Metadata', () => client.topic(args.topic));
    const acks = ACKS[args.acks];
    const transactional = args.transactionalId === undefined ? {} : {
      transactionalId: args.transactionalId, ...(args.transactionTimeoutMs === undefined ? {} : { transactionTimeoutMs: args.transactionTimeoutMs }),
    };
    const producer = client.producer({ acks, idempotent: acks === -1, compression: args.compression, ...transactional });
    const tally = await produceLines({
      producer,
      topic: args.topic,
      shape: { keySeparator: args.keySeparator, headers: args.headers === undefined ? undefined : parseHeaders(args.headers), partition: args.partition },
      input: process.stdin,
      jsonOut: args.json ? process.stdout : null,
      progress: (line) => process.stderr.write(`sluice produce: ${line}\n`),
      ...(args.transactionalId === undefined ? {} : { transactions: { recordsMax: args.transactionRecords ?? null } }),
    });
    process.stderr.write(`sluice produce: ${tally.summary(args.topic)}\n`);
  });
}

export const produceCommand: CommandModule<object, ProduceFlags> = {
  command: 'produce',
  describe: 'Send stdin lines as records to a topic',
  builder,
  handler,
};
