// The broker's side of AlterUserScramCredentials on both protocols: the
// client sends salt + SaltedPassword (Kafka's admin client salts and
// iterates locally), the broker derives StoredKey and ServerKey and forwards
// only those to the controller (controller/scram-control.ts checks them).

import { credentialFromSaltedPassword } from './scram-credential.js';
import { scramMechanismOfId } from './mechanism.js';

export interface SaltedUpsertion {
  readonly name: string;
  readonly mechanism: number;
  readonly iterations: number;
  readonly salt: Uint8Array;
  readonly saltedPassword: Uint8Array;
}

/** The controller's upsertion body; an unknown mechanism keeps empty keys (the controller answers UNSUPPORTED_SASL_MECHANISM). */
export function derivedUpsertion(u: SaltedUpsertion): Record<string, unknown> {
  const m = scramMechanismOfId(u.mechanism);
  const empty = new Uint8Array(0);
  const keys = m && u.saltedPassword.length > 0 ? credentialFromSaltedPassword(m, u.salt, u.saltedPassword, u.iterations) : null;
  return {
    name: u.name, mechanism: u.mechanism, iterations: u.iterations, salt: Uint8Array.from(u.salt),
    storedKey: keys ? Uint8Array.from(keys.storedKey) : empty, serverKey: keys ? Uint8Array.from(keys.serverKey) : empty,
  };
}
