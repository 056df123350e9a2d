// Encoding of metadata records for the Raft log and snapshots (msgpackr).
// Decoding validates every field against a per-type schema: a record that
// does not match is a CORRUPT_MESSAGE error, never a half-typed object that
// fails later inside replay. Unknown record types or versions are refused the
// same way, so an old node never silently skips a newer record.

import { Packr } from 'msgpackr';
import { Errors, SluiceError } from '../util/errors.js';
import type { MetadataRecord, MetadataRecordType } from './records.js';

type FieldKind = 'int' | 'string' | 'bool' | 'ints' | 'nullableString' | 'endpoints' | 'bytes' | 'number' | 'quotaEntity';
interface FieldSpec {
  readonly kind: FieldKind;
  readonly optional?: boolean;
}
const f = (kind: FieldKind, optional = false): FieldSpec => ({ kind, optional });

const SCHEMAS: Record<MetadataRecordType, Record<string, FieldSpec>> = {
  cluster: { clusterId: f('string'), metadataVersion: f('int') },
  registerBroker: {
    brokerId: f('int'), incarnationId: f('string'), brokerEpoch: f('int'), endpoints: f('endpoints'),
    rack: f('nullableString'), fenced: f('bool'),
  },
  unregisterBroker: { brokerId: f('int'), brokerEpoch: f('int') },
  brokerRegistrationChange: {
    brokerId: f('int'), brokerEpoch: f('int'), fenced: f('bool', true), inControlledShutdown: f('bool', true),
  },
  topic: { name: f('string'), topicId: f('string') },
  partition: {
    topicId: f('string'), partition: f('int'), replicas: f('ints'), isr: f('ints'), leader: f('int'),
    leaderEpoch: f('int'), partitionEpoch: f('int'), addingReplicas: f('ints'), removingReplicas: f('ints'),
  },
  partitionChange: {
    topicId: f('string'), partition: f('int'), leader: f('int', true), isr: f('ints', true), replicas: f('ints', true),
    addingReplicas: f('ints', true), removingReplicas: f('ints', true),
  },
  config: {
    resourceType: f('string'), resourceName: f('string'), name: f('string'), value: f('nullableString'),
  },
  removeTopic: { topicId: f('string') },
  producerIds: { brokerId: f('int'), brokerEpoch: f('int'), nextProducerId: f('int') },
  accessControlEntry: {
    id: f('string'), resourceType: f('int'), resourceName: f('string'), patternType: f('int'), principal: f('string'),
    host: f('string'), operation: f('int'), permissionType: f('int'),
  },
  removeAccessControlEntry: { id: f('string') },
  userScramCredential: {
    name: f('string'), mechanism: f('int'), salt: f('bytes'), storedKey: f('bytes'), serverKey: f('bytes'), iterations: f('int'),
  },
  removeUserScramCredential: { name: f('string'), mechanism: f('int') },
  clientQuota: { entity: f('quotaEntity'), key: f('string'), value: f('number'), remove: f('bool') },
  controllerEndpoint: { nodeId: f('int'), url: f('nullableString') },
};

const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeMetadataRecord(record: MetadataRecord): Buffer {
  return packr.pack(record);
}

export function encodeMetadataRecords(records: readonly MetadataRecord[]): Buffer {
  return packr.pack(records);
}

export function decodeMetadataRecord(bytes: Uint8Array): MetadataRecord {
  return validate(unpack(bytes));
}

export function decodeMetadataRecords(bytes: Uint8Array): MetadataRecord[] {
  const value = unpack(bytes);
  if (!Array.isArray(value)) throw corrupt('expected a list of metadata records');
  return value.map(validate);
}

/** Validates already-unpacked values (e.g. inside a snapshot) as metadata records. */
export function validateMetadataRecords(values: readonly unknown[]): MetadataRecord[] {
  return values.map(validate);
}

function unpack(bytes: Uint8Array): unknown {
  try {
    return packr.unpack(bytes);
  } catch (err) {
    throw corrupt(`undecodable metadata record: ${(err as Error).message}`);
  }
}

function corrupt(message: string): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, message);
}

function validate(value: unknown): MetadataRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt('metadata record is not an object');
  const obj = value as Record<string, unknown>;
  const type = obj.type;
  if (typeof type !== 'string' || !Object.hasOwn(SCHEMAS, type)) throw corrupt(`unknown metadata record type ${String(type)}`);
  if (obj.v !== 1) throw corrupt(`unsupported version ${String(obj.v)} of metadata record ${type}`);
  const schema = SCHEMAS[type as MetadataRecordType];
  for (const key of Object.keys(obj)) {
    if (key !== 'type' && key !== 'v' && !Object.hasOwn(schema, key)) throw corrupt(`unexpected field ${key} in ${type}`);
  }
  for (const [key, spec] of Object.entries(schema)) {
    const field = obj[key];
    if (field === undefined) {
      if (spec.optional) continue;
      throw corrupt(`missing field ${key} in ${type}`);
    }
    if (!fieldMatches(spec.kind, field)) throw corrupt(`field ${key} of ${type} is not a valid ${spec.kind}`);
  }
  return obj as unknown as MetadataRecord;
}

function fieldMatches(kind: FieldKind, v: unknown): boolean {
  switch (kind) {
    case 'int':
      return Number.isSafeInteger(v);
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'ints':
      return Array.isArray(v) && v.every((x) => Number.isSafeInteger(x));
    case 'nullableString':
      return v === null || typeof v === 'string';
    case 'bytes':
      return v instanceof Uint8Array;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'quotaEntity':
      return Array.isArray(v) && v.length > 0 && v.every((e) => typeof e === 'object' && e !== null
        && (e.entityType === 'user' || e.entityType === 'client-id') && (e.entityName === null || typeof e.entityName === 'string')
        && Object.keys(e).length === 2);
    case 'endpoints':
      return Array.isArray(v) && v.every((e) => typeof e === 'object' && e !== null && typeof e.name === 'string' && typeof e.url === 'string');
  }
}
