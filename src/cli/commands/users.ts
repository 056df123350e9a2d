// `sluice users create|delete|list`: SCRAM users (Kafka's kafka-configs
// --alter --add-config 'SCRAM-SHA-256=[...]' / --describe --entity-type users).
// The password is salted and iterated here, in the CLI (PBKDF2 through
// crypto.subtle); only salt, iterations and the salted password travel to the
// broker (AlterUserScramCredentials), and the metadata log keeps only the
// derived keys.
//
// The new user's password, in order: --password (shows in `ps`), the
// environment variable SLUICE_USER_PASSWORD, or stdin — a prompt without
// echo on a terminal, else the first line of piped input.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { ScramMechanismName, UserScramCredentials } from '../../client/admin.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { renderTable } from '../table.js';
import { listOf } from './configs.js';

const SCRAM: readonly ScramMechanismName[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

interface UserFlags extends ClientFlags {
  readonly name: string;
  readonly mechanism?: string[];
}
interface CreateFlags extends UserFlags {
  readonly password?: string;
  readonly iterations: number;
}
interface ListFlags extends ClientFlags {
  readonly names?: string[];
}

function mechanismsOf(v: unknown): ScramMechanismName[] {
  const named = listOf(v).flatMap((m) => m.split(',')).map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
  if (named.length === 0) return [...SCRAM];
  for (const m of named) if (!(SCRAM as readonly string[]).includes(m)) throw new Error(`--mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got ${m}`);
  return [...new Set(named)] as ScramMechanismName[];
}

/** Reads a password from a terminal without echo, or the first line of piped stdin. */
async function passwordFromStdin(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    process.stderr.write('Password: ');
    stdin.setRawMode(true);
    return new Promise((resolve, reject) => {
      let text = '';
      const onData = (chunk: Buffer): void => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n') { done(); resolve(text); return; }
          if (ch === '\u0003') { done(); reject(new Error('cancelled')); return; }
          if (ch === '\u007f') text = text.slice(0, -1);
          else text += ch;
        }
      };
      const done = (): void => {
        stdin.off('data', onData);
        stdin.setRawMode(false);
        stdin.pause();
        process.stderr.write('\n');
      };
      stdin.on('data', onData);
      stdin.resume();
    });
  }
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

async function newPassword(args: CreateFlags): Promise<string> {
  const p = args.password ?? process.env.SLUICE_USER_PASSWORD ?? await passwordFromStdin();
  if (p === '') throw new Error('the password is empty');
  return p;
}

function renderUsers(users: readonly UserScramCredentials[]): string {
  if (users.length === 0) return '(no users)';
  return renderTable(['USER', 'MECHANISM', 'ITERATIONS'], users.flatMap((u) => u.credentials.map((c) => [u.user, c.mechanism, String(c.iterations)])));
}

const createCommand: CommandModule<object, CreateFlags> = {
  command: 'create <name>',
  describe: 'Create a SCRAM user, or replace its password (both mechanisms unless --mechanism)',
  builder: (y) => (withClientFlags(y) as Argv<CreateFlags>)
    .positional('name', { type: 'string', demandOption: true, describe: 'user name (the principal User:<name>)' })
    .option('mechanism', { type: 'string', array: true, describe: 'SCRAM-SHA-256 and/or SCRAM-SHA-512 (default both)' })
    .option('password', { type: 'string', describe: 'the password (shows in ps; prefer $SLUICE_USER_PASSWORD or stdin)' })
    .option('iterations', { type: 'number', default: 8192, describe: 'PBKDF2 iterations, 4096-16384' })
    .example('SLUICE_USER_PASSWORD=s3cret $0 users create alice', 'alice can log in with SCRAM-SHA-256 and SCRAM-SHA-512 (and PLAIN where enabled)')
    .example('$0 users create bob --mechanism SCRAM-SHA-512 < pw.txt', 'the password from the first line of a file') as Argv<CreateFlags>,
  handler: (args: ArgumentsCamelCase<CreateFlags>) => runClientCommand(args, async (client) => {
    const mechanisms = mechanismsOf(args.mechanism);
    const password = await newPassword(args);
    await client.admin().alterUserScramCredentials({ upsertions: mechanisms.map((mechanism) => ({ user: args.name, mechanism, password, iterations: args.iterations })) });
    print(args, { user: args.name, mechanisms, iterations: args.iterations }, () => `user ${args.name}: ${mechanisms.join(', ')} (${args.iterations} iterations)`);
  }),
};

const deleteCommand: CommandModule<object, UserFlags> = {
  command: 'delete <name>',
  describe: 'Delete a user\'s SCRAM credentials (every mechanism it has unless --mechanism)',
  builder: (y) => (withClientFlags(y) as Argv<UserFlags>)
    .positional('name', { type: 'string', demandOption: true })
    .option('mechanism', { type: 'string', array: true, describe: 'only these mechanisms' }) as Argv<UserFlags>,
  handler: (args: ArgumentsCamelCase<UserFlags>) => runClientCommand(args, async (client) => {
    const admin = client.admin();
    let mechanisms = args.mechanism === undefined ? null : mechanismsOf(args.mechanism);
    if (mechanisms === null) {
      const [user] = await admin.describeUserScramCredentials({ users: [args.name] });
      mechanisms = (user?.credentials ?? []).map((c) => c.mechanism);
    }
    await admin.alterUserScramCredentials({ deletions: mechanisms.map((mechanism) => ({ user: args.name, mechanism })) });
    print(args, { user: args.name, deleted: mechanisms }, () => `user ${args.name}: deleted ${mechanisms!.join(', ')}`);
  }),
};

const listCommand: CommandModule<object, ListFlags> = {
  command: 'list [names..]',
  describe: 'List SCRAM users and their mechanisms (never salts or keys)',
  builder: (y) => (withClientFlags(y) as Argv<ListFlags>).positional('names', { type: 'string', array: true }) as Argv<ListFlags>,
  handler: (args: ArgumentsCamelCase<ListFlags>) => runClientCommand(args, async (client) => {
    const names = listOf(args.names);
    const users = await client.admin().describeUserScramCredentials(names.length > 0 ? { users: names } : {});
    print(args, users, () => renderUsers(users));
  }),
};

export const usersCommand: CommandModule = {
  command: 'users',
  describe: 'Manage SCRAM users (create, delete, list)',
  builder: (y) => y.command(createCommand).command(deleteCommand).command(listCommand).demandCommand(1, 'Name a users subcommand: create, delete or list'),
  handler: () => undefined,
};
