// Client quota commands and queries (pure): AlterClientQuotas becomes
// ClientQuotaRecords after every entry is checked against the one table of
// entity types and keys (metadata/quota-defs.ts); DescribeClientQuotas filters
// the image's quotas with Kafka's filter components (KIP-546).
//
// Errors are Kafka's: a bad entity, an unknown key or a bad value is
// INVALID_REQUEST for that entry only; a filter naming a custom entity type is
// UNSUPPORTED_VERSION; other bad filters are INVALID_REQUEST.

import type { MetadataImage } from '../metadata/image.js';
import type { MetadataRecord, QuotaEntityPart } from '../metadata/records.js';
import { entityOfParts, entityProblem, partsOfEntity, quotaEntityKey, quotaValueProblem, QUOTA_ENTITY_TYPES } from '../metadata/quota-defs.js';
import { Errors } from '../util/errors.js';
import type { CommandContext, CommandResult } from './context.js';

/** An entity part as a client sent it: any type string. */
export interface RequestedEntityPart { readonly entityType: string; readonly entityName: string | null }

export interface QuotaOp { readonly key: string; readonly value: number; readonly remove: boolean }

export interface AlterQuotaEntry { readonly entity: readonly RequestedEntityPart[]; readonly ops: readonly QuotaOp[] }

export interface AlterQuotaResult {
  readonly entity: readonly RequestedEntityPart[];
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

function entryProblem(e: AlterQuotaEntry): string | null {
  const bad = entityProblem(e.entity);
  if (bad) return bad.message;
  const keys = new Set<string>();
  for (const op of e.ops) {
    if (keys.has(op.key)) return `key ${op.key} appears more than once`;
    keys.add(op.key);
    if (op.remove) {
      if (!quotaValueProblem(op.key, 1)) continue;
      return `invalid configuration key ${op.key}`;
    }
    const problem = quotaValueProblem(op.key, op.value);
    if (problem) return problem.message;
  }
  return null;
}

/** Entities named twice in one request fail, as in Kafka (the outcome would depend on order). */
export function alterClientQuotas(ctx: CommandContext, entries: readonly AlterQuotaEntry[], validateOnly = false): CommandResult<AlterQuotaResult[]> {
  const records: MetadataRecord[] = [];
  const seen = new Map<string, number>();
  for (const e of entries) {
    if (entityProblem(e.entity)) continue;
    const key = quotaEntityKey(entityOfParts(e.entity as QuotaEntityPart[]));
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const response = entries.map((e): AlterQuotaResult => {
    let problem = entryProblem(e);
    const entity = problem ? null : entityOfParts(e.entity as QuotaEntityPart[]);
    if (entity && (seen.get(quotaEntityKey(entity)) ?? 0) > 1) problem = 'entity appears more than once in the request';
    if (problem || !entity) return { entity: e.entity, errorCode: Errors.INVALID_REQUEST.code, errorMessage: `INVALID_REQUEST: ${problem}` };
    if (!validateOnly) {
      const parts = partsOfEntity(entity);
      const current = ctx.image.clientQuotas.get(quotaEntityKey(entity))?.values;
      for (const op of e.ops) {
        // Removing a key that is not set changes nothing: no record.
        if (op.remove && !current?.has(op.key)) continue;
        records.push({ type: 'clientQuota', v: 1, entity: parts, key: op.key, value: op.remove ? 0 : op.value, remove: op.remove });
      }
    }
    return { entity: e.entity, errorCode: 0, errorMessage: null };
  });
  return { records, response };
}

/** Kafka's match types of a DescribeClientQuotas filter component. */
export const MATCH_EXACT = 0;
export const MATCH_DEFAULT = 1;
export const MATCH_SPECIFIED = 2;

export interface QuotaFilterComponent { readonly entityType: string; readonly matchType: number; readonly match: string | null }

export interface DescribedQuotas {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly entries: Array<{ entity: QuotaEntityPart[]; values: Array<{ key: string; value: number }> }> | null;
}

function filterProblem(components: readonly QuotaFilterComponent[]): { code: number; message: string } | null {
  const seen = new Set<string>();
  for (const c of components) {
    if (c.entityType === '') return { code: Errors.INVALID_REQUEST.code, message: 'invalid empty entity type' };
    if (seen.has(c.entityType)) return { code: Errors.INVALID_REQUEST.code, message: `entity type ${c.entityType} cannot appear more than once in the filter` };
    seen.add(c.entityType);
    if (!(QUOTA_ENTITY_TYPES as readonly string[]).includes(c.entityType) && c.entityType !== 'ip') {
      return { code: Errors.UNSUPPORTED_VERSION.code, message: `custom entity type ${c.entityType} not supported` };
    }
    if (c.matchType === MATCH_EXACT && c.match === null) return { code: Errors.INVALID_REQUEST.code, message: `exact match on ${c.entityType} needs a name` };
    if (c.matchType !== MATCH_EXACT && c.match !== null) return { code: Errors.INVALID_REQUEST.code, message: `a match name is only for exact matches (${c.entityType})` };
    if (c.matchType < MATCH_EXACT || c.matchType > MATCH_SPECIFIED) return { code: Errors.INVALID_REQUEST.code, message: `unknown match type ${c.matchType}` };
  }
  return null;
}

function partMatches(part: QuotaEntityPart | undefined, c: QuotaFilterComponent): boolean {
  if (!part) return false;
  if (c.matchType === MATCH_EXACT) return part.entityName === c.match;
  if (c.matchType === MATCH_DEFAULT) return part.entityName === null;
  return part.entityName !== null;
}

/** The quotas of every entity matching all components (and, when strict, naming no other entity type). */
export function describeClientQuotas(image: MetadataImage, components: readonly QuotaFilterComponent[], strict: boolean): DescribedQuotas {
  const problem = filterProblem(components);
  if (problem) return { errorCode: problem.code, errorMessage: `${problem.code === Errors.UNSUPPORTED_VERSION.code ? 'UNSUPPORTED_VERSION' : 'INVALID_REQUEST'}: ${problem.message}`, entries: null };
  const entries: NonNullable<DescribedQuotas['entries']> = [];
  for (const key of [...image.clientQuotas.keys()].sort()) {
    const q = image.clientQuotas.get(key)!;
    const parts = partsOfEntity(q.entity);
    if (!components.every((c) => partMatches(parts.find((p) => p.entityType === c.entityType), c))) continue;
    if (strict && parts.length !== components.length) continue;
    entries.push({ entity: parts, values: [...q.values.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, value]) => ({ key: k, value })) });
  }
  return { errorCode: 0, errorMessage: null, entries };
}
