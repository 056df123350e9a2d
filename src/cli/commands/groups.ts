// `sluice groups list|describe|reset-offsets|delete`: consumer-group
// administration through the GroupAdmin client, Kafka's
// kafka-consumer-groups.sh in spirit.
//
// - describe: state, members and their assignments, committed offset, log end
//   (high watermark) and lag per partition. An unknown group is
//   GROUP_ID_NOT_FOUND (exit 1).
// - reset-offsets: a dry run unless --execute (../groups-reset.ts); the
//   group must have no members to execute (NON_EMPTY_GROUP otherwise).
// - delete: only a group without members.
// Text goes to stdout (tables, ../groups-render.ts), or JSON with --json.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import { Errors, SluiceError } from '../../util/errors.js';
import type { ResetTarget } from '../../client/group-admin.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { renderGroupDescription, renderGroupList, renderReset } from '../groups-render.js';
import { resetGroupOffsets } from '../groups-reset.js';

interface GroupFlags extends ClientFlags {
  readonly group: string;
}

interface ResetFlags extends GroupFlags {
  readonly topic: string;
  readonly partitions?: string;
  readonly toEarliest: boolean;
  readonly toLatest: boolean;
  readonly toOffset?: number;
  readonly toTimestamp?: number;
  readonly execute: boolean;
}

function withGroup<T>(y: Argv<T>): Argv<T & GroupFlags> {
  return withClientFlags(y).option('group', { type: 'string', demandOption: true, describe: 'the consumer group' }) as unknown as Argv<T & GroupFlags>;
}

const listCommand: CommandModule<object, ClientFlags> = {
  command: 'list',
  describe: 'List every consumer group of the cluster',
  builder: (y) => withClientFlags(y).example('$0 groups list --json', 'as JSON'),
  handler: (args: ArgumentsCamelCase<ClientFlags>) => runClientCommand(args, async (client) => {
    const groups = await client.groupAdmin().listGroups();
    print(args, groups, () => renderGroupList(groups));
  }),
};

const describeCommand: CommandModule<object, GroupFlags> = {
  command: 'describe',
  describe: 'Show a group\'s members, assignment, committed offsets and lag',
  builder: (y) => withGroup(y).example('$0 groups describe --group billing', 'members and lag per partition'),
  handler: (args: ArgumentsCamelCase<GroupFlags>) => runClientCommand(args, async (client) => {
    const [g] = await client.groupAdmin().describeGroups([args.group]);
    if (!g || (g.state === 'Dead' && g.offsets.length === 0)) throw new SluiceError(Errors.GROUP_ID_NOT_FOUND, `group ${args.group} does not exist`);
    print(args, g, () => renderGroupDescription(g));
  }),
};

function resetTarget(a: ResetFlags): ResetTarget {
  if (a.toEarliest) return 'earliest';
  if (a.toLatest) return 'latest';
  if (a.toOffset !== undefined) return { offset: a.toOffset };
  return { timestamp: a.toTimestamp! };
}

function parsePartitions(spec: string): number[] {
  return spec.split(',').map((s) => {
    const n = Number(s.trim());
    if (!(s.trim() !== '' && Number.isSafeInteger(n) && n >= 0)) throw new Error(`--partitions takes numbers like 0,1,2; got "${spec}"`);
    return n;
  });
}

function resetBuilder(y: Argv): Argv<ResetFlags> {
  return withGroup(y)
    .usage('$0 groups reset-offsets --group G --topic T --to-earliest|--to-latest|--to-offset N|--to-timestamp MS [--partitions 0,1] [--execute]\n\n'
      + 'Shows the new offsets (a dry run) unless --execute; executing needs a group without members.')
    .option('topic', { type: 'string', demandOption: true, describe: 'topic whose offsets to move' })
    .option('partitions', { type: 'string', describe: 'only these partitions, e.g. 0,2 (default: all)' })
    .option('to-earliest', { type: 'boolean', default: false, describe: 'to the log start' })
    .option('to-latest', { type: 'boolean', default: false, describe: 'to the log end (skip everything)' })
    .option('to-offset', { type: 'number', describe: 'to this offset (clamped to each partition\'s range)' })
    .option('to-timestamp', { type: 'number', describe: 'to the first record at or after this time (ms since the epoch)' })
    .option('execute', { type: 'boolean', default: false, describe: 'commit the new offsets (default: only show them)' })
    .example('$0 groups reset-offsets --group billing --topic orders --to-earliest', 'dry run: show the plan')
    .example('$0 groups reset-offsets --group billing --topic orders --to-earliest --execute', 'reprocess everything')
    .check((a) => {
      const chosen = [a.toEarliest, a.toLatest, a.toOffset !== undefined, a.toTimestamp !== undefined].filter(Boolean).length;
      if (chosen !== 1) throw new Error('give exactly one of --to-earliest, --to-latest, --to-offset N, --to-timestamp MS');
      for (const [name, v] of [['to-offset', a.toOffset], ['to-timestamp', a.toTimestamp]] as const) {
        if (v !== undefined && !(Number.isSafeInteger(v) && Number(v) >= 0)) throw new Error(`--${name} must be an integer >= 0, got ${String(v)}`);
      }
      if (a.partitions !== undefined) parsePartitions(String(a.partitions));
      return true;
    }) as unknown as Argv<ResetFlags>;
}

const resetCommand: CommandModule<object, ResetFlags> = {
  command: 'reset-offsets',
  describe: 'Move a group\'s committed offsets for a topic (dry run unless --execute)',
  builder: resetBuilder,
  handler: (args: ArgumentsCamelCase<ResetFlags>) => runClientCommand(args, async (client) => {
    const outcome = await resetGroupOffsets(client, {
      groupId: args.group, topic: args.topic, to: resetTarget(args), execute: args.execute,
      partitions: args.partitions === undefined ? undefined : parsePartitions(args.partitions),
    });
    print(args, outcome, () => renderReset(outcome.rows));
    if (!outcome.executed) {
      const live = outcome.members > 0 ? ` (the group has ${outcome.members} member(s) now: stop them first)` : '';
      process.stderr.write(`sluice groups: dry run, nothing committed; add --execute to commit${live}\n`);
    }
  }),
};

const deleteCommand: CommandModule<object, GroupFlags> = {
  command: 'delete',
  describe: 'Delete a group without members, and its committed offsets',
  builder: (y) => withGroup(y).example('$0 groups delete --group old-billing', 'the group must have no members'),
  handler: (args: ArgumentsCamelCase<GroupFlags>) => runClientCommand(args, async (client) => {
    const [r] = await client.groupAdmin().deleteGroups([args.group]);
    if (r?.error) throw r.error;
    print(args, { groupId: args.group, deleted: true }, () => `deleted group ${args.group}`);
  }),
};

export const groupsCommand: CommandModule = {
  command: 'groups',
  describe: 'Consumer groups: list, describe, reset-offsets, delete',
  builder: (y) => y
    .usage('$0 groups <list|describe|reset-offsets|delete> [options]')
    .command(listCommand)
    .command(describeCommand)
    .command(resetCommand)
    .command(deleteCommand)
    .demandCommand(1, 'Name a groups command: list, describe, reset-offsets or delete.'),
  handler: () => undefined,
};
