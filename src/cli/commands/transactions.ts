// `sluice transactions list|describe`: what kafka-transactions.sh list and
// describe show. list asks every broker (each answers for the
// __transaction_state partitions it leads); describe asks each id's
// coordinator. Text tables (../transactions-render.ts) or --json.
//
// Exit codes: 0; 1 with one line when a transactional id is unknown
// (TRANSACTIONAL_ID_NOT_FOUND) or the cluster cannot answer; 2 for usage.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import { errorFromCode } from '../../client/responses.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { renderTransactionDescriptions, renderTransactionList } from '../transactions-render.js';

interface ListFlags extends ClientFlags {
  readonly state?: string[];
  readonly producerId?: number[];
  readonly durationMs?: number;
}

interface DescribeFlags extends ClientFlags {
  readonly transactionalId: string[];
}

const listCommand: CommandModule<object, ListFlags> = {
  command: 'list',
  describe: 'List the transactional ids the cluster knows, with their producer id and state',
  builder: (y) => withClientFlags(y)
    .option('state', { type: 'string', array: true, describe: 'only these states (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, ...)' })
    .option('producer-id', { type: 'number', array: true, describe: 'only these producer ids' })
    .option('duration-ms', { type: 'number', describe: 'only transactions open for longer than this' })
    .example('$0 transactions list', 'every transactional id')
    .example('$0 transactions list --state Ongoing --duration-ms 60000', 'transactions open for more than a minute (hanging?)')
    .check((a) => {
      for (const id of (a.producerId ?? []) as unknown[]) if (!(Number.isSafeInteger(id) && Number(id) >= 0)) throw new Error(`--producer-id must be an integer >= 0, got ${String(id)}`);
      if (a.durationMs !== undefined && !(Number.isSafeInteger(a.durationMs) && Number(a.durationMs) >= 0)) throw new Error('--duration-ms must be an integer >= 0');
      return true;
    }) as unknown as Argv<ListFlags>,
  handler: (args: ArgumentsCamelCase<ListFlags>) => runClientCommand(args, async (client) => {
    const rows = await client.admin().listTransactions({
      ...(args.state ? { states: args.state.map(String) } : {}),
      ...(args.producerId ? { producerIds: args.producerId } : {}),
      ...(args.durationMs === undefined ? {} : { durationMs: args.durationMs }),
    });
    print(args, rows, () => renderTransactionList(rows));
  }),
};

const describeCommand: CommandModule<object, DescribeFlags> = {
  command: 'describe',
  describe: 'Show a transactional id\'s state, producer id and epoch, timeout, open partitions',
  builder: (y) => withClientFlags(y)
    .option('transactional-id', { type: 'string', array: true, demandOption: true, describe: 'the transactional id(s) to describe' })
    .example('$0 transactions describe --transactional-id payments-1', 'state and partitions of one id') as unknown as Argv<DescribeFlags>,
  handler: (args: ArgumentsCamelCase<DescribeFlags>) => runClientCommand(args, async (client) => {
    const rows = await client.admin().describeTransactions(args.transactionalId.map(String));
    print(args, rows, () => renderTransactionDescriptions(rows, client.clock.nowMs()));
    const failed = rows.find((r) => r.errorCode !== 0);
    if (failed) {
      const err = errorFromCode(failed.errorCode, failed.errorMessage, { transactionalId: failed.transactionalId });
      throw err;
    }
  }),
};

export const transactionsCommand: CommandModule = {
  command: 'transactions',
  describe: 'Transactions: list transactional ids, describe one',
  builder: (y) => y
    .usage('$0 transactions <list|describe> [options]')
    .command(listCommand)
    .command(describeCommand)
    .demandCommand(1, 'Name a transactions command: list or describe.'),
  handler: () => undefined,
};
