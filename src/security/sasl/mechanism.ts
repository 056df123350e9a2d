// The contract of a server-side SASL mechanism (RFC 4422): one exchange is a
// state machine fed the client's messages in order. Each step answers a
// challenge to send back, success (with the final server message, the
// principal and when its credential stops being valid), or failure (with a
// message for the client and the log). Every mechanism here is pure: no
// sockets, timers or global randomness; time and nonces are injected.
//
// A step after success or failure is a failure: an exchange is used once.

import type { Principal } from '../principal.js';

export type SaslStep =
  | { readonly kind: 'challenge'; readonly bytes: Uint8Array }
  | { readonly kind: 'success'; readonly bytes: Uint8Array; readonly principal: Principal; readonly expiresAtMs: number | null }
  | { readonly kind: 'failure'; readonly message: string };

export interface SaslServer {
  readonly mechanism: string;
  step(clientMessage: Uint8Array): SaslStep;
}

export const SCRAM_SHA_256 = 'SCRAM-SHA-256';
export const SCRAM_SHA_512 = 'SCRAM-SHA-512';
export const PLAIN = 'PLAIN';
export const OAUTHBEARER = 'OAUTHBEARER';
export const SASL_MECHANISMS = [SCRAM_SHA_256, SCRAM_SHA_512, PLAIN, OAUTHBEARER] as const;
export type SaslMechanismName = (typeof SASL_MECHANISMS)[number];

export type ScramMechanism = typeof SCRAM_SHA_256 | typeof SCRAM_SHA_512;
export const SCRAM_MECHANISMS: readonly ScramMechanism[] = [SCRAM_SHA_256, SCRAM_SHA_512];

/** Kafka's ScramMechanism type ids (AlterUserScramCredentials, UserScramCredentialRecord). */
export const SCRAM_MECHANISM_IDS: Readonly<Record<ScramMechanism, number>> = { [SCRAM_SHA_256]: 1, [SCRAM_SHA_512]: 2 };

export function scramMechanismOfId(id: number): ScramMechanism | null {
  return id === 1 ? SCRAM_SHA_256 : id === 2 ? SCRAM_SHA_512 : null;
}

export function isScramMechanism(name: string): name is ScramMechanism {
  return name === SCRAM_SHA_256 || name === SCRAM_SHA_512;
}

/** Kafka's ScramMechanism: the hash and its output length. */
export function scramHash(m: ScramMechanism): { readonly hash: 'sha256' | 'sha512'; readonly bytes: number } {
  return m === SCRAM_SHA_256 ? { hash: 'sha256', bytes: 32 } : { hash: 'sha512', bytes: 64 };
}

/** Kafka's minimum and maximum SCRAM iteration counts (ScramMechanism.minIterations, ScramFormatter). */
export const SCRAM_ITERATIONS_MIN = 4096;
export const SCRAM_ITERATIONS_MAX = 16384;

export const failure = (message: string): SaslStep => ({ kind: 'failure', message });
