// `sluice configs describe|alter`: topic and cluster-wide configs through the
// Admin client (DescribeConfigs, AlterConfigs, answered by the active
// controller once committed).
//
// Exactly one resource per call: `--topic T` or `--cluster`. Flag shapes
// (k=v syntax, a missing resource, an alter with nothing to change) are usage
// errors (exit 2, checked before any connection); whether a key or value is
// acceptable is the broker's call: its error code and message, exit 1.
//
// Also home of parseKeyValues, which `topics` uses for --config.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { ConfigResourceType, DescribedConfig } from '../../client/admin.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { renderTable } from '../table.js';

/** `['a=1', 'b=x=y']` → `{ a: '1', b: 'x=y' }`; throws a usage message for an entry without `=` or with an empty key. */
export function parseKeyValues(entries: readonly unknown[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of entries) {
    const entry = String(raw);
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`--${flag} takes key=value, got '${entry}'`);
    out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

/** Values of an array option (yargs gives undefined when absent). */
export function listOf(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

interface ResourceFlags extends ClientFlags {
  readonly topic?: string;
  readonly cluster: boolean;
}

interface AlterFlags extends ResourceFlags {
  readonly set?: string[];
  readonly delete?: string[];
}

function withResource<T>(y: Argv<T>): Argv<T & ResourceFlags> {
  return withClientFlags(y)
    .option('topic', { type: 'string', describe: 'the topic whose configs to use' })
    .option('cluster', { type: 'boolean', default: false, describe: 'the cluster-wide configs (broker defaults)' })
    .check((args) => {
      const hasTopic = typeof args.topic === 'string' && args.topic !== '';
      if (hasTopic === args.cluster) throw new Error('Name exactly one resource: --topic T or --cluster');
      return true;
    }) as unknown as Argv<T & ResourceFlags>;
}

function resourceOf(args: ResourceFlags): { resourceType: ConfigResourceType; resourceName: string; label: string } {
  return args.cluster
    ? { resourceType: 'cluster', resourceName: '', label: 'cluster' }
    : { resourceType: 'topic', resourceName: args.topic!, label: `topic ${args.topic!}` };
}

function renderConfigs(configs: readonly DescribedConfig[]): string {
  if (configs.length === 0) return '(no configs)';
  return renderTable(['NAME', 'VALUE', 'SOURCE'], configs.map((c) => [c.name, c.value, c.source]));
}

const describeCommand: CommandModule<object, ResourceFlags> = {
  command: 'describe',
  describe: 'Show every config of a topic or of the cluster, with its value and where it comes from',
  builder: (y) => withResource(y)
    .usage('$0 configs describe (--topic T | --cluster)')
    .example('$0 configs describe --topic orders', 'topic configs (source: topic, cluster or default)')
    .example('$0 configs describe --cluster --json', 'cluster-wide configs as JSON, with docs'),
  handler: (args: ArgumentsCamelCase<ResourceFlags>) => runClientCommand(args, async (client) => {
    const r = resourceOf(args);
    const configs = await client.admin().describeConfigs({ resourceType: r.resourceType, resourceName: r.resourceName });
    const sorted = [...configs].sort((a, b) => a.name.localeCompare(b.name));
    print(args, { resourceType: r.resourceType, resourceName: r.resourceName, configs: sorted }, () => renderConfigs(sorted));
  }),
};

const alterCommand: CommandModule<object, AlterFlags> = {
  command: 'alter',
  describe: 'Set or delete configs of a topic or of the cluster',
  builder: (y) => withResource(y)
    .usage('$0 configs alter (--topic T | --cluster) [--set k=v ...] [--delete k ...]')
    .option('set', { type: 'string', array: true, describe: 'key=value to set (repeatable)' })
    .option('delete', { type: 'string', array: true, describe: 'key to delete: falls back to the cluster value or the default (repeatable)' })
    .check((args) => {
      const sets = listOf(args.set);
      if (sets.length === 0 && listOf(args.delete).length === 0) throw new Error('Nothing to change: give --set k=v or --delete k');
      parseKeyValues(sets, 'set');
      return true;
    })
    .example('$0 configs alter --topic orders --set retention.ms=3600000', 'keep an hour of data')
    .example('$0 configs alter --topic orders --delete retention.ms', 'back to the cluster value')
    .example('$0 configs alter --cluster --set min.insync.replicas=2', 'a cluster-wide default') as unknown as Argv<AlterFlags>,
  handler: (args: ArgumentsCamelCase<AlterFlags>) => runClientCommand(args, async (client) => {
    const r = resourceOf(args);
    const set = parseKeyValues(listOf(args.set), 'set');
    const del = listOf(args.delete);
    await client.admin().alterConfigs({ resources: [{ resourceType: r.resourceType, resourceName: r.resourceName, set, delete: del }] });
    print(args, { resourceType: r.resourceType, resourceName: r.resourceName, set, delete: del }, () =>
      `Altered ${r.label}: ${[...Object.entries(set).map(([k, v]) => `${k}=${v}`), ...del.map((k) => `-${k}`)].join(' ')}`);
  }),
};

export const configsCommand: CommandModule = {
  command: 'configs',
  describe: 'Describe and alter topic and cluster configs',
  builder: (y) => y
    .command(describeCommand)
    .command(alterCommand)
    .demandCommand(1, 'Name an action: describe or alter'),
  handler: () => undefined,
};
