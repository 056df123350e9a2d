// DescribeClientQuotas (api key 48) and AlterClientQuotas (49): Kafka's names,
// keys and fields (KIP-546), as msgpack maps. Both are admin APIs: a broker
// forwards them to the active controller, which parses them with the
// functions here (so both listeners refuse the same bad shapes).
//
// AlterClientQuotas
//   request  { entries: [{ entity: [{ entityType, entityName (null: default) }],
//                          ops: [{ key, value (number), remove (bool) }] }], validateOnly? }
//   response { throttleTimeMs, entries: [{ entity, errorCode, errorMessage }] }
// DescribeClientQuotas
//   request  { components: [{ entityType, matchType (0 exact, 1 default, 2 any specified), match (null unless exact) }], strict? }
//   response { throttleTimeMs, errorCode, errorMessage, entries: [{ entity, values: [{ key, value }] }] | null }
//
// entityType is "user" or "client-id"; a bad entity or key is the entry's
// INVALID_REQUEST, never a refused request (docs/protocol.md).

import { badRequest, bool, int, list, optStr, str, type Body } from '../body.js';

export interface EntityPartBody { readonly entityType: string; readonly entityName: string | null }

export interface AlterClientQuotasRequest {
  readonly entries: ReadonlyArray<{ readonly entity: readonly EntityPartBody[]; readonly ops: ReadonlyArray<{ key: string; value: number; remove: boolean }> }>;
  readonly validateOnly: boolean;
}

export interface DescribeClientQuotasRequest {
  readonly components: ReadonlyArray<{ entityType: string; matchType: number; match: string | null }>;
  readonly strict: boolean;
}

function entity(b: Body): EntityPartBody[] {
  return list(b, 'entity').map((p) => ({ entityType: str(p, 'entityType'), entityName: optStr(p, 'entityName') }));
}

export function parseAlterClientQuotasRequest(b: Body): AlterClientQuotasRequest {
  return {
    entries: list(b, 'entries').map((e) => ({
      entity: entity(e),
      ops: list(e, 'ops').map((o) => {
        const remove = bool(o, 'remove', false);
        const value = o.value === undefined && remove ? 0 : o.value;
        if (typeof value !== 'number') throw badRequest('value must be a number');
        return { key: str(o, 'key'), value, remove };
      }),
    })),
    validateOnly: bool(b, 'validateOnly', false),
  };
}

export function parseDescribeClientQuotasRequest(b: Body): DescribeClientQuotasRequest {
  return {
    components: list(b, 'components').map((c) => ({ entityType: str(c, 'entityType'), matchType: int(c, 'matchType'), match: optStr(c, 'match') })),
    strict: bool(b, 'strict', false),
  };
}
