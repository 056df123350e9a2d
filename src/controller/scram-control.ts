// SCRAM credential commands (pure): Kafka's ScramControlManager. An
// alteration deletes and upserts credentials of several users at once; each
// user gets one result. Checks, with Kafka's errors:
//   - an empty user name, too few/many iterations, an empty salt or keys of
//     the wrong length: UNACCEPTABLE_CREDENTIAL;
//   - a mechanism id other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512):
//     UNSUPPORTED_SASL_MECHANISM;
//   - the same (user, mechanism) named twice in one request: DUPLICATE_RESOURCE;
//   - deleting a credential that does not exist: RESOURCE_NOT_FOUND.
// A user with any failing item has none of its items applied. The
// credentials arrive salted (StoredKey, ServerKey): the controller never
// sees a password.

import type { MetadataImage } from '../metadata/image.js';
import type { MetadataRecord } from '../metadata/records.js';
import { Errors, type ErrorInfo } from '../util/errors.js';
import type { CommandContext, CommandResult } from './context.js';

export const SCRAM_ITERATIONS_MIN = 4096;
export const SCRAM_ITERATIONS_MAX = 16384;
/** Mechanism id → hash length in bytes. */
const KEY_BYTES: ReadonlyMap<number, number> = new Map([[1, 32], [2, 64]]);

export interface ScramDeletion { readonly name: string; readonly mechanism: number }
export interface ScramUpsertion {
  readonly name: string;
  readonly mechanism: number;
  readonly iterations: number;
  readonly salt: Uint8Array;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
}

export interface ScramAlterationResult {
  readonly user: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

type Problem = { readonly error: ErrorInfo; readonly message: string } | null;

function deletionProblem(image: MetadataImage, d: ScramDeletion): Problem {
  if (d.name === '') return { error: Errors.UNACCEPTABLE_CREDENTIAL, message: 'Username must not be empty' };
  if (!KEY_BYTES.has(d.mechanism)) return { error: Errors.UNSUPPORTED_SASL_MECHANISM, message: `Unknown SCRAM mechanism ${d.mechanism}` };
  if (!image.scramCredential(d.name, d.mechanism)) return { error: Errors.RESOURCE_NOT_FOUND, message: 'Attempt to delete a user credential that does not exist' };
  return null;
}

function upsertionProblem(u: ScramUpsertion): Problem {
  if (u.name === '') return { error: Errors.UNACCEPTABLE_CREDENTIAL, message: 'Username must not be empty' };
  const keyBytes = KEY_BYTES.get(u.mechanism);
  if (keyBytes === undefined) return { error: Errors.UNSUPPORTED_SASL_MECHANISM, message: `Unknown SCRAM mechanism ${u.mechanism}` };
  if (!(Number.isSafeInteger(u.iterations) && u.iterations >= SCRAM_ITERATIONS_MIN)) return { error: Errors.UNACCEPTABLE_CREDENTIAL, message: `Too few iterations: at least ${SCRAM_ITERATIONS_MIN}` };
  if (u.iterations > SCRAM_ITERATIONS_MAX) return { error: Errors.UNACCEPTABLE_CREDENTIAL, message: `Too many iterations: at most ${SCRAM_ITERATIONS_MAX}` };
  if (u.salt.length === 0) return { error: Errors.UNACCEPTABLE_CREDENTIAL, message: 'The salt must not be empty' };
  if (u.storedKey.length !== keyBytes || u.serverKey.length !== keyBytes) return { error: Errors.UNACCEPTABLE_CREDENTIAL, message: `keys must be ${keyBytes} bytes for this mechanism` };
  return null;
}

export function alterUserScramCredentials(ctx: CommandContext, deletions: readonly ScramDeletion[], upsertions: readonly ScramUpsertion[]): CommandResult<ScramAlterationResult[]> {
  const users: string[] = [];
  const problems = new Map<string, Problem>();
  const note = (user: string, p: Problem): void => {
    if (!users.includes(user)) users.push(user);
    if (p && !problems.get(user)) problems.set(user, p);
  };
  const seen = new Map<string, number>();
  for (const item of [...deletions, ...upsertions]) {
    const key = `${item.mechanism}:${item.name}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const duplicate = (item: ScramDeletion): Problem => (seen.get(`${item.mechanism}:${item.name}`)! > 1
    ? { error: Errors.DUPLICATE_RESOURCE, message: 'A user credential cannot be altered twice in the same request' } : null);
  for (const d of deletions) note(d.name, duplicate(d) ?? deletionProblem(ctx.image, d));
  for (const u of upsertions) note(u.name, duplicate(u) ?? upsertionProblem(u));
  const records: MetadataRecord[] = [];
  for (const d of deletions) if (!problems.get(d.name)) records.push({ type: 'removeUserScramCredential', v: 1, name: d.name, mechanism: d.mechanism });
  for (const u of upsertions) {
    if (problems.get(u.name)) continue;
    records.push({ type: 'userScramCredential', v: 1, name: u.name, mechanism: u.mechanism, salt: u.salt, storedKey: u.storedKey, serverKey: u.serverKey, iterations: u.iterations });
  }
  const response = users.map((user): ScramAlterationResult => {
    const p = problems.get(user);
    return p ? { user, errorCode: p.error.code, errorMessage: p.message } : { user, errorCode: 0, errorMessage: null };
  });
  return { records, response };
}

export interface DescribedScramUser {
  readonly user: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly credentialInfos: ReadonlyArray<{ readonly mechanism: number; readonly iterations: number }>;
}

/** Kafka's DescribeUserScramCredentials from an image: null or [] names every user with a credential. */
export function describeUserScramCredentials(image: MetadataImage, users: readonly string[] | null): DescribedScramUser[] {
  const names = users === null || users.length === 0 ? [...image.scramCredentials.keys()].sort() : users;
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  const out: DescribedScramUser[] = [];
  for (const user of new Set(names)) {
    const creds = image.scramCredentials.get(user);
    if (counts.get(user)! > 1) out.push({ user, errorCode: Errors.DUPLICATE_RESOURCE.code, errorMessage: 'Cannot describe the same user twice', credentialInfos: [] });
    else if (!creds || creds.size === 0) out.push({ user, errorCode: Errors.RESOURCE_NOT_FOUND.code, errorMessage: 'Attempt to describe a user credential that does not exist', credentialInfos: [] });
    else out.push({ user, errorCode: 0, errorMessage: null, credentialInfos: [...creds.values()].sort((a, b) => a.mechanism - b.mechanism).map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) });
  }
  return out;
}
