// The `sluice` command. Thin by design: each subcommand parses its flags and
// calls the server or the client library. Commands are added by later issues
// (server, local, topics, produce, consume, groups, cluster, reassign, bench);
// the contract for their names lives in docs/ and shared/DESIGN.md.

import yargs from 'yargs';
import { VERSION } from '../version.js';
import { localCommand } from './commands/local.js';
import { serverCommand } from './commands/server.js';
import { topicsCommand } from './commands/topics.js';
import { configsCommand } from './commands/configs.js';
import { aclsCommand } from './commands/acls.js';
import { quotasCommand } from './commands/quotas.js';
import { clusterCommand } from './commands/cluster.js';
import { produceCommand } from './commands/produce.js';
import { consumeCommand } from './commands/consume.js';
import { groupsCommand } from './commands/groups.js';
import { reassignCommand } from './commands/reassign.js';
import { benchCommand } from './commands/bench.js';
import { usersCommand } from './commands/users.js';
import { transactionsCommand } from './commands/transactions.js';

/** Names of the registered subcommands; later issues append to this list. */
const COMMANDS: string[] = ['server', 'local', 'topics', 'configs', 'quotas', 'cluster', 'produce', 'consume', 'groups', 'reassign', 'bench', 'users', 'acls', 'transactions'];

export function buildCli(argv: string[]) {
  return yargs(argv)
    .scriptName('sluice')
    .usage('$0 <command> [options]\n\nSluice: a Kafka-style distributed commit log with a built-in Raft quorum.')
    .version(VERSION)
    .alias('v', 'version')
    .help()
    .alias('h', 'help')
    .strict()
    .strictCommands()
    .demandCommand(1, 'Name a command; see --help.')
    .recommendCommands()
    .command(serverCommand)
    .command(localCommand)
    .command(topicsCommand)
    .command(configsCommand)
    .command(aclsCommand)
    .command(quotasCommand)
    .command(clusterCommand)
    .command(produceCommand)
    .command(consumeCommand)
    .command(groupsCommand)
    .command(reassignCommand)
    .command(benchCommand)
    .command(usersCommand)
    .command(transactionsCommand)
    // yargs' strictCommands only applies once a command exists; this keeps the
    // "unknown command → usage, exit 2" promise with any number of commands.
    .check((args) => {
      const first = args._[0];
      if (first !== undefined && !COMMANDS.includes(String(first))) throw new Error(`Unknown command: ${first}`);
      return true;
    })
    // Usage errors: print usage and a one-line reason, exit 2. Command handlers
    // report their own operating errors (one line, exit 1) and never get here.
    .fail((msg, err, y) => {
      y.showHelp((usage) => process.stderr.write(`${usage}\n\n`));
      process.stderr.write(`sluice: ${msg ?? err?.message ?? 'invalid usage'}\n`);
      process.exit(2);
    })
    .wrap(Math.min(100, process.stdout.columns ?? 100));
}

