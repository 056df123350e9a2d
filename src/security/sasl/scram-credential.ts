// A user's SCRAM credential as the metadata log stores it (Kafka's
// UserScramCredentialRecord): salt, StoredKey = H(ClientKey), ServerKey and
// the iteration count — never the password, from which nothing here can be
// turned back. RFC 5802 §3:
//   SaltedPassword = Hi(password, salt, i)      (PBKDF2 with HMAC-H)
//   ClientKey = HMAC(SaltedPassword, "Client Key"); StoredKey = H(ClientKey)
//   ServerKey = HMAC(SaltedPassword, "Server Key")
// AlterUserScramCredentials carries SaltedPassword (the client salts and
// iterates, as Kafka's admin client does); the broker derives the rest.

import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { scramHash, type ScramMechanism } from './mechanism.js';

export interface ScramCredential {
  readonly mechanism: ScramMechanism;
  readonly salt: Uint8Array;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
  readonly iterations: number;
}

export function hmac(m: ScramMechanism, key: Uint8Array, data: Uint8Array | string): Buffer {
  return createHmac(scramHash(m).hash, key).update(data).digest();
}

export function hash(m: ScramMechanism, data: Uint8Array): Buffer {
  return createHash(scramHash(m).hash).update(data).digest();
}

export function credentialFromSaltedPassword(mechanism: ScramMechanism, salt: Uint8Array, saltedPassword: Uint8Array, iterations: number): ScramCredential {
  const clientKey = hmac(mechanism, saltedPassword, 'Client Key');
  return {
    mechanism, salt: Uint8Array.from(salt), iterations,
    storedKey: hash(mechanism, clientKey), serverKey: hmac(mechanism, saltedPassword, 'Server Key'),
  };
}

export function saltPassword(mechanism: ScramMechanism, password: string, salt: Uint8Array, iterations: number): Buffer {
  const { hash: h, bytes } = scramHash(mechanism);
  return pbkdf2Sync(Buffer.from(password.normalize('NFKC'), 'utf8'), salt, iterations, bytes, h);
}

/** Whether `password` is the one behind `cred` (PLAIN checks passwords against the stored SCRAM credential). */
export function passwordMatches(cred: ScramCredential, password: string): boolean {
  const derived = credentialFromSaltedPassword(cred.mechanism, cred.salt, saltPassword(cred.mechanism, password, cred.salt, cred.iterations), cred.iterations);
  return equalBytes(derived.storedKey, cred.storedKey);
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Where the mechanisms find credentials: the broker's metadata image, in production. */
export type CredentialLookup = (user: string, mechanism: ScramMechanism) => ScramCredential | undefined;
