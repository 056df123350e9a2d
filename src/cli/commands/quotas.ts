// `sluice quotas set|remove|list`: client quotas (Kafka's AlterClientQuotas /
// DescribeClientQuotas through the Admin client; docs/security.md, "Quotas").
//
// The entity: --user NAME or --user-default, and/or --client-id NAME or
// --client-id-default; or kafka-configs' way for one type: --entity-type
// users|clients with --entity-name NAME or --entity-default. Keys go in
// --add-config k=v[,k=v] (set) and --delete-config k[,k] (remove). Flag shapes
// are usage errors (exit 2, before any connection); whether a key or value
// is acceptable is the controller's call (exit 1 with its error).

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { QuotaEntityPart } from '../../client/broker-connection.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { renderTable } from '../table.js';
import { listOf } from './configs.js';

interface EntityFlags extends ClientFlags {
  readonly user?: string;
  readonly userDefault: boolean;
  readonly clientId?: string;
  readonly clientIdDefault: boolean;
  readonly entityType?: string;
  readonly entityName?: string;
  readonly entityDefault: boolean;
}

interface SetFlags extends EntityFlags { readonly addConfig?: string[]; readonly validateOnly: boolean }
interface RemoveFlags extends EntityFlags { readonly deleteConfig?: string[] }

const ENTITY_TYPES: Readonly<Record<string, 'user' | 'client-id'>> = { users: 'user', user: 'user', clients: 'client-id', 'client-id': 'client-id' };

/** The entity the flags name (null name: default); [] when none. Throws a usage message for contradictory flags. */
export function entityOf(a: Omit<EntityFlags, keyof ClientFlags>): QuotaEntityPart[] {
  let user: string | null | undefined;
  let clientId: string | null | undefined;
  if (a.user !== undefined && a.userDefault) throw new Error('Give --user NAME or --user-default, not both');
  if (a.clientId !== undefined && a.clientIdDefault) throw new Error('Give --client-id NAME or --client-id-default, not both');
  if (a.user !== undefined) user = a.user;
  else if (a.userDefault) user = null;
  if (a.clientId !== undefined) clientId = a.clientId;
  else if (a.clientIdDefault) clientId = null;
  if (a.entityType !== undefined) {
    const type = ENTITY_TYPES[a.entityType];
    if (!type) throw new Error(`--entity-type must be users or clients, got '${a.entityType}'`);
    if ((a.entityName !== undefined) === a.entityDefault) throw new Error('--entity-type needs --entity-name NAME or --entity-default');
    const name = a.entityDefault ? null : a.entityName!;
    if (type === 'user') {
      if (user !== undefined) throw new Error('The user is named twice');
      user = name;
    } else {
      if (clientId !== undefined) throw new Error('The client id is named twice');
      clientId = name;
    }
  } else if (a.entityName !== undefined || a.entityDefault) {
    throw new Error('--entity-name and --entity-default need --entity-type');
  }
  if (user === '' || clientId === '') throw new Error('An entity name cannot be empty (use --user-default / --client-id-default for the default)');
  const parts: QuotaEntityPart[] = [];
  if (user !== undefined) parts.push({ entityType: 'user', entityName: user });
  if (clientId !== undefined) parts.push({ entityType: 'client-id', entityName: clientId });
  return parts;
}

/** `['a=1,b=2', 'c=3']` → { a: 1, b: 2, c: 3 }; a value that is not a number is a usage error. */
export function parseQuotaValues(entries: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of entries.flatMap((e) => e.split(',')).map((e) => e.trim()).filter((e) => e !== '')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`--add-config takes key=value, got '${entry}'`);
    const text = entry.slice(eq + 1).trim();
    const value = Number(text);
    if (text === '' || !Number.isFinite(value)) throw new Error(`the value of ${entry.slice(0, eq)} must be a number, got '${text}'`);
    out[entry.slice(0, eq).trim()] = value;
  }
  return out;
}

function withEntity<T>(y: Argv<T>, required: boolean): Argv<T & EntityFlags> {
  return withClientFlags(y)
    .option('user', { type: 'string', describe: 'the user (principal name, e.g. alice or ANONYMOUS)' })
    .option('user-default', { type: 'boolean', default: false, describe: 'the default user: every user without a quota of its own' })
    .option('client-id', { type: 'string', describe: 'the client id' })
    .option('client-id-default', { type: 'boolean', default: false, describe: 'the default client id' })
    .option('entity-type', { type: 'string', describe: 'kafka-configs style: users or clients' })
    .option('entity-name', { type: 'string', describe: 'kafka-configs style: the entity\'s name' })
    .option('entity-default', { type: 'boolean', default: false, describe: 'kafka-configs style: the entity type\'s default' })
    .check((args) => {
      const parts = entityOf(args as unknown as EntityFlags);
      if (required && parts.length === 0) throw new Error('Name the entity: --user NAME|--user-default and/or --client-id NAME|--client-id-default');
      return true;
    }) as unknown as Argv<T & EntityFlags>;
}

const describeEntity = (parts: readonly QuotaEntityPart[]): string => parts.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',');

const setCommand: CommandModule<object, SetFlags> = {
  command: 'set',
  describe: 'Set quota keys of a user, a client id, or both (producer_byte_rate, consumer_byte_rate, request_percentage)',
  builder: (y) => withEntity(y, true)
    .option('add-config', { type: 'string', array: true, describe: 'key=value[,key=value]' })
    .option('validate-only', { type: 'boolean', default: false, describe: 'check the change without making it' })
    .check((args) => {
      if (Object.keys(parseQuotaValues(listOf(args.addConfig))).length === 0) throw new Error('Nothing to set: give --add-config key=value');
      return true;
    })
    .usage('$0 quotas set (--user U | --user-default) [--client-id C | --client-id-default] --add-config k=v[,k=v]')
    .example('$0 quotas set --user alice --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152', 'alice: 1 MiB/s in, 2 MiB/s out')
    .example('$0 quotas set --entity-type clients --entity-default --add-config request_percentage=50', 'every client id: half a request thread') as unknown as Argv<SetFlags>,
  handler: (args: ArgumentsCamelCase<SetFlags>) => runClientCommand(args, async (client) => {
    const entity = entityOf(args);
    const set = parseQuotaValues(listOf(args.addConfig));
    await client.admin().alterClientQuotas({ entries: [{ entity, set }], validateOnly: args.validateOnly });
    print(args, { entity, set, validateOnly: args.validateOnly }, () => `${args.validateOnly ? 'valid: would set' : 'set'} ${Object.entries(set).map(([k, v]) => `${k}=${v}`).join(',')} for ${describeEntity(entity)}`);
  }),
};

const removeCommand: CommandModule<object, RemoveFlags> = {
  command: 'remove',
  describe: 'Remove quota keys of an entity',
  builder: (y) => withEntity(y, true)
    .option('delete-config', { type: 'string', array: true, describe: 'key[,key]' })
    .check((args) => {
      if (listOf(args.deleteConfig).flatMap((k) => k.split(',')).filter((k) => k.trim() !== '').length === 0) throw new Error('Nothing to remove: give --delete-config key');
      return true;
    })
    .example('$0 quotas remove --user alice --delete-config producer_byte_rate', '') as unknown as Argv<RemoveFlags>,
  handler: (args: ArgumentsCamelCase<RemoveFlags>) => runClientCommand(args, async (client) => {
    const entity = entityOf(args);
    const remove = listOf(args.deleteConfig).flatMap((k) => k.split(',')).map((k) => k.trim()).filter((k) => k !== '');
    await client.admin().alterClientQuotas({ entries: [{ entity, remove }] });
    print(args, { entity, removed: remove }, () => `removed ${remove.join(',')} for ${describeEntity(entity)}`);
  }),
};

const listCommand: CommandModule<object, EntityFlags> = {
  command: 'list',
  describe: 'List client quotas (all, or those of the entity named)',
  builder: (y) => withEntity(y, false)
    .example('$0 quotas list', 'every quota')
    .example('$0 quotas list --user alice --json', 'alice\'s quotas (alone and with any client id)'),
  handler: (args: ArgumentsCamelCase<EntityFlags>) => runClientCommand(args, async (client) => {
    const components = entityOf(args).map((p) => (p.entityName === null
      ? { entityType: p.entityType, matchType: 1 as const, match: null }
      : { entityType: p.entityType, matchType: 0 as const, match: p.entityName }));
    const quotas = await client.admin().describeClientQuotas({ components });
    print(args, { quotas }, () => (quotas.length === 0 ? '(no quotas)' : renderTable(['ENTITY', 'KEY', 'VALUE'],
      quotas.flatMap((q) => Object.entries(q.values).map(([k, v]) => [describeEntity(q.entity), k, String(v)])))));
  }),
};

export const quotasCommand: CommandModule = {
  command: 'quotas <command>',
  describe: 'Client quotas per user and client id: set, remove, list',
  builder: (y) => y.command(setCommand).command(removeCommand).command(listCommand).demandCommand(1),
  handler: () => undefined,
};
