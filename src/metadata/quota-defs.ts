// Client quotas (Kafka's KIP-55/KIP-257 model): which entities a quota may
// name, which keys it may set, and how an entity is written as one string.
// The controller validates alterations here; the image stores quotas by
// quotaEntityKey(); the broker's quota manager (src/security/quota-manager.ts)
// resolves which entity applies to a connection.
//
// An entity is a user, a client id, or both; each part names one principal or
// client id, or is that type's default (a null name). Kafka's entity type
// `ip` (connection_creation_rate) is not supported: Sluice limits connections
// with its listener limits instead.

import type { QuotaEntityPart } from './records.js';

export const QUOTA_ENTITY_TYPES = ['user', 'client-id'] as const;
export type QuotaEntityType = (typeof QUOTA_ENTITY_TYPES)[number];

/** The keys a quota may set, with what each limits. */
export const QUOTA_KEYS: ReadonlyMap<string, { readonly doc: string; readonly integer: boolean }> = new Map([
  ['producer_byte_rate', { doc: 'Produce request bytes per second', integer: true }],
  ['consumer_byte_rate', { doc: 'Fetch response bytes per second (replication fetches are exempt)', integer: true }],
  ['request_percentage', { doc: 'Percent of one request-handling thread\'s time (100 = one full thread) spent on the entity\'s requests', integer: false }],
]);

export type QuotaKey = 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage';

/** An entity in the form quotas are looked up by: undefined = not part of the entity, null = the default. */
export interface QuotaEntity {
  readonly user?: string | null;
  readonly clientId?: string | null;
}

export function entityOfParts(parts: readonly QuotaEntityPart[]): QuotaEntity {
  const out: { user?: string | null; clientId?: string | null } = {};
  for (const p of parts) {
    if (p.entityType === 'user') out.user = p.entityName;
    else out.clientId = p.entityName;
  }
  return out;
}

export function partsOfEntity(e: QuotaEntity): QuotaEntityPart[] {
  const parts: QuotaEntityPart[] = [];
  if (e.user !== undefined) parts.push({ entityType: 'user', entityName: e.user });
  if (e.clientId !== undefined) parts.push({ entityType: 'client-id', entityName: e.clientId });
  return parts;
}

/** One string per entity, for maps; JSON so no name can collide with a default or another part. */
export function quotaEntityKey(e: QuotaEntity): string {
  return JSON.stringify([e.user === undefined ? 0 : e.user, e.clientId === undefined ? 0 : e.clientId]);
}

/** How an entity reads in logs and the CLI: user=alice,client-id=<default>. */
export function describeEntity(e: QuotaEntity): string {
  const name = (n: string | null): string => (n === null ? '<default>' : n);
  return partsOfEntity(e).map((p) => `${p.entityType}=${name(p.entityName)}`).join(',');
}

export type QuotaProblem = { readonly kind: 'entity' | 'key' | 'value'; readonly message: string };

/** Why these entity parts (as a client sent them) are not a valid quota entity, or null. */
export function entityProblem(parts: readonly { entityType: string; entityName: string | null }[]): QuotaProblem | null {
  if (parts.length === 0) return { kind: 'entity', message: 'invalid empty client quota entity' };
  const seen = new Set<string>();
  for (const p of parts) {
    if (!(QUOTA_ENTITY_TYPES as readonly string[]).includes(p.entityType)) {
      return { kind: 'entity', message: `unhandled client quota entity type: ${p.entityType}` };
    }
    if (seen.has(p.entityType)) return { kind: 'entity', message: `entity type ${p.entityType} appears more than once` };
    seen.add(p.entityType);
    if (p.entityName === '') return { kind: 'entity', message: `empty ${p.entityType} name (the default is a null name)` };
  }
  return null;
}

/** Why `value` cannot be set for `key`, or null. */
export function quotaValueProblem(key: string, value: number): QuotaProblem | null {
  const def = QUOTA_KEYS.get(key);
  if (!def) return { kind: 'key', message: `invalid configuration key ${key}` };
  if (!Number.isFinite(value) || value <= 0) return { kind: 'value', message: `${key} must be a positive number, not ${value}` };
  if (def.integer && !Number.isSafeInteger(value)) return { kind: 'value', message: `${key} must be a whole number of bytes per second, not ${value}` };
  return null;
}
