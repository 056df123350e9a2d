// The SASL settings of a broker's listeners, from flags (or a config file's
// Kafka-style keys, config-file.ts). Names follow Kafka where it has them:
//
//   --kafka-listen SASL_PLAINTEXT://host:port  the Kafka listener's security protocol
//   sasl.enabled.mechanisms               SCRAM-SHA-256,SCRAM-SHA-512 (default), PLAIN, OAUTHBEARER
//   sasl.plain.allow.plaintext            offer PLAIN without TLS (default false: PLAIN sends the password)
//   connections.max.reauth.ms             KIP-368 session limit (default 0: none beyond a token's expiry)
//   sasl.authentication.timeout.ms        close a connection not authenticated by then (default 10000)
//   ws.sasl.required                      the WebSocket listener serves nothing before authentication (default false)
//   sasl.oauthbearer.jwks.file            JWKS (JSON) of the token issuer's public keys: enables OAUTHBEARER
//   sasl.oauthbearer.expected.audience    comma-separated; a token must name one (default: not checked)
//   sasl.oauthbearer.expected.issuer      a token's iss must equal it (default: not checked)
//   sasl.oauthbearer.clock.skew.seconds   leeway for exp/nbf (default 30)
//   sasl.oauthbearer.sub.claim.name       the claim that names the principal (default sub)
//
// Errors are INVALID_CONFIG with a one-line reason naming the flag.

import fs from 'node:fs';
import { Errors, SluiceError } from '../util/errors.js';
import { SASL_MECHANISMS, OAUTHBEARER } from '../security/sasl/mechanism.js';
import { JwtValidator, type JsonWebKeyLike } from '../security/sasl/jwt.js';

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export interface OauthConfig {
  readonly jwksFile: string;
  readonly expectedAudience: readonly string[];
  readonly expectedIssuer: string | null;
  readonly clockSkewMs: number;
  readonly subClaim: string;
}

export interface SaslConfig {
  readonly mechanisms: readonly string[];
  readonly plainWithoutTls: boolean;
  readonly reauthMs: number;
  readonly authTimeoutMs: number;
  readonly wsRequired: boolean;
  readonly oauth: OauthConfig | null;
}

export interface SaslFlags {
  readonly saslEnabledMechanisms?: string;
  readonly saslPlainAllowPlaintext?: boolean;
  readonly connectionsMaxReauthMs?: number;
  readonly saslAuthenticationTimeoutMs?: number;
  readonly wsSaslRequired?: boolean;
  readonly saslOauthbearerJwksFile?: string;
  readonly saslOauthbearerExpectedAudience?: string;
  readonly saslOauthbearerExpectedIssuer?: string;
  readonly saslOauthbearerClockSkewSeconds?: number;
  readonly saslOauthbearerSubClaimName?: string;
}

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

function nonNegative(v: number | undefined, dflt: number, flag: string): number {
  const n = v ?? dflt;
  if (!(Number.isSafeInteger(n) && n >= 0)) throw invalid(`${flag} must be a non-negative integer`);
  return n;
}

export function saslConfigFrom(flags: SaslFlags): SaslConfig {
  const mechanisms = (flags.saslEnabledMechanisms ?? 'SCRAM-SHA-256,SCRAM-SHA-512').split(',').map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
  for (const m of mechanisms) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(m)) throw invalid(`--sasl-enabled-mechanisms: unknown mechanism ${m} (known: ${SASL_MECHANISMS.join(', ')})`);
  }
  const jwksFile = flags.saslOauthbearerJwksFile;
  if (mechanisms.includes(OAUTHBEARER) && jwksFile === undefined) throw invalid('OAUTHBEARER needs --sasl-oauthbearer-jwks-file (the issuer\'s public keys)');
  const skew = nonNegative(flags.saslOauthbearerClockSkewSeconds, 30, '--sasl-oauthbearer-clock-skew-seconds');
  const authTimeoutMs = nonNegative(flags.saslAuthenticationTimeoutMs, 10_000, '--sasl-authentication-timeout-ms');
  if (authTimeoutMs === 0) throw invalid('--sasl-authentication-timeout-ms must be positive');
  return {
    mechanisms,
    plainWithoutTls: flags.saslPlainAllowPlaintext === true,
    reauthMs: nonNegative(flags.connectionsMaxReauthMs, 0, '--connections-max-reauth-ms'),
    authTimeoutMs,
    wsRequired: flags.wsSaslRequired === true,
    oauth: jwksFile === undefined ? null : {
      jwksFile,
      expectedAudience: (flags.saslOauthbearerExpectedAudience ?? '').split(',').map((a) => a.trim()).filter((a) => a !== ''),
      expectedIssuer: flags.saslOauthbearerExpectedIssuer ?? null,
      clockSkewMs: skew * 1000,
      subClaim: flags.saslOauthbearerSubClaimName ?? 'sub',
    },
  };
}

/** Reads the JWKS file and imports its keys; a missing or bad file is INVALID_CONFIG naming it. */
export function jwtValidatorFrom(oauth: OauthConfig): JwtValidator {
  let keys: JsonWebKeyLike[];
  try {
    const doc = JSON.parse(fs.readFileSync(oauth.jwksFile, 'utf8')) as { keys?: unknown };
    if (!Array.isArray(doc.keys)) throw new Error('no "keys" list');
    keys = doc.keys as JsonWebKeyLike[];
  } catch (err) {
    throw invalid(`--sasl-oauthbearer-jwks-file ${oauth.jwksFile}: ${(err as Error).message}`);
  }
  try {
    return new JwtValidator({
      jwks: keys, expectedAudience: oauth.expectedAudience, expectedIssuer: oauth.expectedIssuer, clockSkewMs: oauth.clockSkewMs, principalClaim: oauth.subClaim,
    });
  } catch (err) {
    throw invalid(`--sasl-oauthbearer-jwks-file ${oauth.jwksFile}: ${(err as Error).message}`);
  }
}
