// `sluice acls add|remove|list`: Kafka's ACLs through the Admin client
// (CreateAcls, DeleteAcls, DescribeAcls), with kafka-acls.sh's flags:
//
//   --allow-principal P / --deny-principal P   who (repeatable; User:* is everyone)
//   --operation O                              Read, Write, Create, Delete, Alter, Describe,
//                                              ClusterAction, DescribeConfigs, AlterConfigs,
//                                              IdempotentWrite, All (repeatable)
//   --topic T / --group G / --transactional-id X / --cluster   the resources (repeatable; "*" is every one)
//   --resource-pattern-type literal|prefixed (add; list/remove also any|match)
//   --host H                                   the client address the ACL applies to (default *)
//
// `add` creates every combination of resource × principal × operation.
// `remove` deletes what matches: the named resources, narrowed by the
// principals and operations given. `list` shows the ACLs on the named
// resources (every ACL with none), optionally only a --principal's.
// Flag shapes are usage errors (exit 2, before any connection); the broker's
// refusals (CLUSTER_AUTHORIZATION_FAILED, SECURITY_DISABLED, ...) exit 1.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import {
  AclOperation, AclPermission, CLUSTER_RESOURCE_NAME, PatternType, ResourceType, operationName, parseOperation,
  parsePatternType, patternTypeName, permissionName, resourceTypeName,
  type AclBinding, type AclBindingFilter, type AclOperationCode, type PatternTypeCode, type ResourceTypeCode,
} from '../../security/acl.js';
import { parsePrincipal } from '../../security/principal.js';
import { print, runClientCommand, withClientFlags, type ClientFlags } from '../client-command.js';
import { listOf } from './configs.js';
import { renderTable } from '../table.js';

interface AclFlags extends ClientFlags {
  readonly allowPrincipal?: string[];
  readonly denyPrincipal?: string[];
  readonly principal?: string[];
  readonly operation?: string[];
  readonly topic?: string[];
  readonly group?: string[];
  readonly transactionalId?: string[];
  readonly cluster: boolean;
  readonly resourcePatternType?: string;
  readonly host?: string;
}

interface Resource { readonly type: ResourceTypeCode; readonly name: string }

function resourcesOf(args: AclFlags): Resource[] {
  return [
    ...listOf(args.topic).map((name) => ({ type: ResourceType.TOPIC, name })),
    ...listOf(args.group).map((name) => ({ type: ResourceType.GROUP, name })),
    ...listOf(args.transactionalId).map((name) => ({ type: ResourceType.TRANSACTIONAL_ID, name })),
    ...(args.cluster ? [{ type: ResourceType.CLUSTER, name: CLUSTER_RESOURCE_NAME }] : []),
  ] as Resource[];
}

function operationsOf(args: AclFlags): AclOperationCode[] {
  return listOf(args.operation).map(parseOperation);
}

function principalsOf(list: readonly string[]): string[] {
  for (const p of list) parsePrincipal(p);
  return [...list];
}

function patternOf(args: AclFlags, fallback: PatternTypeCode): PatternTypeCode {
  return args.resourcePatternType === undefined ? fallback : parsePatternType(args.resourcePatternType);
}

/** The bindings `add` creates: every resource × principal × operation. */
export function bindingsToAdd(args: AclFlags): AclBinding[] {
  const resources = resourcesOf(args);
  if (resources.length === 0) throw new Error('Name a resource: --topic, --group, --transactional-id or --cluster');
  const allow = principalsOf(listOf(args.allowPrincipal));
  const deny = principalsOf(listOf(args.denyPrincipal));
  if (allow.length + deny.length === 0) throw new Error('Name who: --allow-principal User:NAME or --deny-principal User:NAME');
  const ops = operationsOf(args);
  if (ops.length === 0) throw new Error('Name what: --operation Read|Write|Create|Delete|Alter|Describe|ClusterAction|DescribeConfigs|AlterConfigs|IdempotentWrite|All');
  const patternType = patternOf(args, PatternType.LITERAL);
  if (patternType !== PatternType.LITERAL && patternType !== PatternType.PREFIXED) throw new Error('--resource-pattern-type must be literal or prefixed when adding');
  const host = args.host ?? '*';
  const out: AclBinding[] = [];
  for (const r of resources) {
    for (const [who, permissionType] of [...allow.map((p) => [p, AclPermission.ALLOW] as const), ...deny.map((p) => [p, AclPermission.DENY] as const)]) {
      for (const operation of ops) {
        out.push({
          resourceType: r.type, resourceName: r.name, patternType: r.type === ResourceType.CLUSTER ? PatternType.LITERAL : patternType,
          principal: who, host, operation, permissionType,
        });
      }
    }
  }
  return out;
}

/** The filters `list` and `remove` use: per named resource (or everything), narrowed by principals and operations. */
export function filtersOf(args: AclFlags, forRemove: boolean): AclBindingFilter[] {
  const resources = resourcesOf(args);
  if (forRemove && resources.length === 0) throw new Error('Name the resource whose ACLs to remove: --topic, --group, --transactional-id or --cluster');
  const principals: Array<[string | null, number]> = [
    ...principalsOf(listOf(args.allowPrincipal)).map((p) => [p, AclPermission.ALLOW] as [string, number]),
    ...principalsOf(listOf(args.denyPrincipal)).map((p) => [p, AclPermission.DENY] as [string, number]),
    ...principalsOf(listOf(args.principal)).map((p) => [p, AclPermission.ANY] as [string, number]),
  ];
  if (principals.length === 0) principals.push([null, AclPermission.ANY]);
  const ops: AclOperationCode[] = operationsOf(args);
  if (ops.length === 0) ops.push(AclOperation.ANY);
  const patternType = patternOf(args, resources.length === 0 ? PatternType.ANY : PatternType.LITERAL);
  const targets: Array<{ type: ResourceTypeCode; name: string | null }> = resources.length > 0 ? resources : [{ type: ResourceType.ANY, name: null }];
  const out: AclBindingFilter[] = [];
  for (const r of targets) {
    for (const [principal, permissionType] of principals) {
      for (const operation of ops) {
        out.push({
          resourceType: r.type, resourceName: r.name, patternType: r.type === ResourceType.CLUSTER && patternType !== PatternType.ANY ? PatternType.LITERAL : patternType,
          principal, host: args.host ?? null, operation, permissionType: permissionType as AclBindingFilter['permissionType'],
        });
      }
    }
  }
  return out;
}

function renderAcls(acls: readonly AclBinding[]): string {
  if (acls.length === 0) return '(no ACLs)';
  const sorted = [...acls].sort((a, b) => `${a.resourceType}${a.resourceName}${a.principal}`.localeCompare(`${b.resourceType}${b.resourceName}${b.principal}`));
  return renderTable(['RESOURCE', 'PATTERN', 'PRINCIPAL', 'HOST', 'OPERATION', 'PERMISSION'], sorted.map((b) => [
    `${resourceTypeName(b.resourceType)}:${b.resourceName}`, patternTypeName(b.patternType), b.principal, b.host,
    operationName(b.operation), permissionName(b.permissionType),
  ]));
}

function jsonAcl(b: AclBinding): Record<string, string> {
  return {
    resourceType: resourceTypeName(b.resourceType), resourceName: b.resourceName, patternType: patternTypeName(b.patternType),
    principal: b.principal, host: b.host, operation: operationName(b.operation), permissionType: permissionName(b.permissionType),
  };
}

function withAclFlags<T>(y: Argv<T>): Argv<T & AclFlags> {
  return withClientFlags(y)
    .option('allow-principal', { type: 'string', array: true, describe: 'principal the ACL allows, e.g. User:alice (User:* for everyone; repeatable)' })
    .option('deny-principal', { type: 'string', array: true, describe: 'principal the ACL denies (repeatable)' })
    .option('operation', { type: 'string', array: true, describe: 'Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite or All (repeatable)' })
    .option('topic', { type: 'string', array: true, describe: 'a topic (or prefix, or * for every topic; repeatable)' })
    .option('group', { type: 'string', array: true, describe: 'a consumer group (repeatable)' })
    .option('transactional-id', { type: 'string', array: true, describe: 'a transactional id (repeatable)' })
    .option('cluster', { type: 'boolean', default: false, describe: 'the cluster resource' })
    .option('resource-pattern-type', { type: 'string', describe: 'literal (default) or prefixed; list and remove also take any or match' })
    .option('host', { type: 'string', describe: 'the client IP address the ACL applies to (default * for any)' }) as unknown as Argv<T & AclFlags>;
}

const usage = (f: (args: AclFlags) => unknown) => (args: AclFlags): true => {
  f(args);
  return true;
};

const addCommand: CommandModule<object, AclFlags> = {
  command: 'add',
  describe: 'Create ACLs: every resource × principal × operation given',
  builder: (y) => withAclFlags(y)
    .usage('$0 acls add (--allow-principal P | --deny-principal P)... --operation OP... (--topic T | --group G | --transactional-id X | --cluster)...')
    .check(usage(bindingsToAdd))
    .example('$0 acls add --allow-principal User:alice --operation Read --operation Describe --topic orders --group billing', 'a consumer of orders in group billing')
    .example('$0 acls add --allow-principal User:bob --operation Write --topic sales- --resource-pattern-type prefixed', 'a producer to every sales-* topic')
    .example('$0 acls add --deny-principal User:mallory --operation All --topic "*"', 'deny wins over every allow'),
  handler: (args: ArgumentsCamelCase<AclFlags>) => runClientCommand(args, async (client) => {
    const bindings = bindingsToAdd(args);
    await client.admin().createAcls(bindings);
    print(args, { created: bindings.map(jsonAcl) }, () => `Created ${bindings.length} ACL(s):\n${renderAcls(bindings)}`);
  }),
};

const removeCommand: CommandModule<object, AclFlags> = {
  command: 'remove',
  describe: 'Delete the ACLs of the named resources (narrowed by --allow-/--deny-/--principal and --operation)',
  builder: (y) => withAclFlags(y)
    .option('principal', { type: 'string', array: true, describe: 'only ACLs of this principal, allow or deny (repeatable)' })
    .usage('$0 acls remove (--topic T | --group G | --transactional-id X | --cluster)... [--allow-principal P] [--operation OP]')
    .check(usage((a) => filtersOf(a, true)))
    .example('$0 acls remove --allow-principal User:alice --operation Read --topic orders', 'one ACL')
    .example('$0 acls remove --topic orders', 'every ACL on the topic orders'),
  handler: (args: ArgumentsCamelCase<AclFlags>) => runClientCommand(args, async (client) => {
    const removed = await client.admin().deleteAcls(filtersOf(args, true));
    print(args, { removed: removed.map(jsonAcl) }, () => `Removed ${removed.length} ACL(s)${removed.length > 0 ? `:\n${renderAcls(removed)}` : ''}`);
  }),
};

const listCommand: CommandModule<object, AclFlags> = {
  command: 'list',
  describe: 'Show ACLs: of the named resources, or every one',
  builder: (y) => withAclFlags(y)
    .option('principal', { type: 'string', array: true, describe: 'only ACLs of this principal (repeatable)' })
    .usage('$0 acls list [--topic T | --group G | --transactional-id X | --cluster]... [--principal P] [--resource-pattern-type any|match|literal|prefixed]')
    .check(usage((a) => filtersOf(a, false)))
    .example('$0 acls list', 'every ACL')
    .example('$0 acls list --topic orders --resource-pattern-type match', 'every ACL that applies to the topic orders (literal, * and prefixes)'),
  handler: (args: ArgumentsCamelCase<AclFlags>) => runClientCommand(args, async (client) => {
    const admin = client.admin();
    const seen = new Map<string, AclBinding>();
    for (const f of filtersOf(args, false)) for (const b of await admin.describeAcls(f)) seen.set(JSON.stringify(b), b);
    const acls = [...seen.values()];
    print(args, { acls: acls.map(jsonAcl) }, () => renderAcls(acls));
  }),
};

export const aclsCommand: CommandModule = {
  command: 'acls',
  describe: 'Add, remove and list ACLs (Kafka\'s model; needs an authorizer on the cluster)',
  builder: (y) => y
    .command(addCommand)
    .command(removeCommand)
    .command(listCommand)
    .demandCommand(1, 'Name an action: add, remove or list'),
  handler: () => undefined,
};
