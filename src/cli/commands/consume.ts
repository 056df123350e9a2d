// `sluice consume`: prints a topic's records, one line each, on stdout.
//
// Modes:
// - group mode (--group without --partition): subscribes as a member of the
//   group; partitions without a committed offset start at the latest offset,
//   or the earliest with --from-beginning. Offsets of printed records are
//   committed as it goes and on exit.
// - assign mode (--partition, or no --group): reads --partition (at --offset
//   if given) or every partition of the topic, without group membership;
//   the start is --offset, else the group's committed offset (with --group),
//   else the earliest (--from-beginning) or the latest.
//
// --isolation-level read_committed prints only records of committed
// transactions (and non-transactional ones), stopping at the last stable
// offset while a transaction is open; the default read_uncommitted prints
// every record, as kafka-console-consumer does. Markers are never printed.
//
// It stops after --max-messages records, when no record arrived for
// --timeout-ms, or on Ctrl-C (a second one exits at once), and exits 0 with
// the count on stderr. Operating failures: one line, exit 1; usage: exit 2.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { Client } from '../../client/index.js';
import type { Consumer, IsolationLevelName } from '../../client/consumer.js';
import { Errors, SluiceError } from '../../util/errors.js';
import { runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { FORMATS, formatRecord, KEY_VALUE_SEPARATOR_DEFAULT, type OutputFormat } from '../consume-format.js';
import { consumeUntilDone } from '../consume-run.js';
import { writeLine } from '../produce-run.js';

interface ConsumeFlags extends ClientFlags {
  readonly topic: string;
  readonly group?: string;
  readonly fromBeginning: boolean;
  readonly partition?: number;
  readonly offset?: number;
  readonly maxMessages?: number;
  readonly timeoutMs?: number;
  readonly format?: OutputFormat;
  readonly keySeparator: string;
  readonly isolationLevel: IsolationLevelName;
}

function nonNegativeInt(name: string, v: unknown, min = 0): void {
  if (v !== undefined && !(Number.isSafeInteger(v) && Number(v) >= min)) throw new Error(`--${name} must be an integer >= ${min}, got ${String(v)}`);
}

function builder(y: Argv): Argv<ConsumeFlags> {
  return withClientFlags(y)
    .usage('$0 consume --topic T [--group G] [--from-beginning] [--partition P [--offset O]] [--max-messages N] [--timeout-ms MS] [--format value|key-value|json]\n\n'
      + 'Prints records, one per line, until --max-messages, --timeout-ms without a record, or Ctrl-C. '
      + 'With --group (and no --partition) it reads as a member of the group and commits what it printed.')
    .option('topic', { type: 'string', demandOption: true, describe: 'topic to read' })
    .option('group', { type: 'string', describe: 'consumer group: join it (or, with --partition, use its committed offsets)' })
    .option('from-beginning', { type: 'boolean', default: false, describe: 'start partitions without a committed offset at the earliest offset (default: latest)' })
    .option('partition', { type: 'number', describe: 'read only this partition, without group membership' })
    .option('offset', { type: 'number', describe: 'start --partition at this offset' })
    .option('max-messages', { type: 'number', describe: 'stop after this many records' })
    .option('timeout-ms', { type: 'number', describe: 'stop when no record arrived for this long (default: run until Ctrl-C)' })
    .option('format', { type: 'string', choices: FORMATS as unknown as string[], describe: 'value, key-value (KEY<TAB>VALUE) or json (default: value; json with --json)' })
    .option('key-separator', { type: 'string', default: KEY_VALUE_SEPARATOR_DEFAULT, defaultDescription: 'TAB', describe: 'between key and value in the key-value format' })
    .option('isolation-level', {
      type: 'string', choices: ['read_uncommitted', 'read_committed'], default: 'read_uncommitted',
      describe: 'read_committed: only committed transactions\' records (up to the last stable offset); read_uncommitted: every record',
    })
    .example('$0 consume --topic orders --from-beginning --max-messages 10', 'the first 10 records, then exit')
    .example('$0 consume --topic orders --group billing --format key-value', 'as a member of group billing')
    .example('$0 consume --topic orders --partition 0 --offset 42 --format json --timeout-ms 5000', 'partition 0 from offset 42, with metadata')
    .example('$0 consume --topic payments --from-beginning --isolation-level read_committed', 'skip aborted transactions, wait for open ones')
    .check((args) => {
      nonNegativeInt('partition', args.partition);
      nonNegativeInt('offset', args.offset);
      nonNegativeInt('max-messages', args.maxMessages, 1);
      nonNegativeInt('timeout-ms', args.timeoutMs, 1);
      if (args.offset !== undefined && args.partition === undefined) throw new Error('--offset needs --partition');
      if (args.offset !== undefined && args.fromBeginning) throw new Error('--offset and --from-beginning both say where to start: give one');
      if (args.format !== undefined && args.json && args.format !== 'json') throw new Error(`--json prints JSON; it conflicts with --format ${String(args.format)}`);
      return true;
    }) as unknown as Argv<ConsumeFlags>;
}

/** Builds the consumer for the mode the flags choose and tells it what to read. */
async function prepareConsumer(client: Client, args: ConsumeFlags): Promise<Consumer> {
  const topic = await client.retry('Metadata', () => client.topic(args.topic));
  const consumer = client.consumer({
    ...(args.group === undefined ? {} : { groupId: args.group }),
    autoOffsetReset: args.fromBeginning ? 'earliest' : 'latest',
    isolationLevel: args.isolationLevel,
  });
  if (args.group !== undefined && args.partition === undefined) {
    await consumer.subscribe({ topics: [args.topic], fromBeginning: args.fromBeginning });
    return consumer;
  }
  if (args.partition !== undefined) {
    if (!topic.partitions[args.partition]) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${args.topic} has no partition ${args.partition}`);
    consumer.assign([{ topic: args.topic, partition: args.partition, ...(args.offset === undefined ? {} : { offset: args.offset }) }]);
  } else {
    consumer.assign(topic.partitions.map((p) => ({ topic: args.topic, partition: p.partition })));
  }
  return consumer;
}

/** Resolves on the first SIGINT/SIGTERM; a second one exits at once. */
function stopOnSignal(): { requested: Promise<void>; dispose: () => void } {
  let signalled = false;
  let resolve!: () => void;
  const requested = new Promise<void>((r) => {
    resolve = r;
  });
  const onSignal = () => {
    if (signalled) process.exit(130);
    signalled = true;
    resolve();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { requested, dispose: () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  } };
}

async function handler(args: ArgumentsCamelCase<ConsumeFlags>): Promise<void> {
  const format: OutputFormat = args.format ?? (args.json ? 'json' : 'value');
  const signals = stopOnSignal();
  await runClientCommand(args, async (client) => {
    const consumer = await prepareConsumer(client, args);
    try {
      const { count } = await consumeUntilDone({
        consumer,
        maxMessages: args.maxMessages,
        idleTimeoutMs: args.timeoutMs,
        stopRequested: signals.requested,
        onMessage: (m) => writeLine(process.stdout, formatRecord(m, format, args.keySeparator)),
      });
      process.stderr.write(`sluice consume: processed ${count} record(s)\n`);
    } finally {
      await consumer.close();
      signals.dispose();
    }
  });
}

export const consumeCommand: CommandModule<object, ConsumeFlags> = {
  command: 'consume',
  describe: 'Print a topic\'s records, as a group member or from fixed partitions',
  builder,
  handler,
};
