// JWT (RFC 7519) validation for OAUTHBEARER, with Kafka's settings' meaning
// (sasl.oauthbearer.expected.audience, .expected.issuer, .clock.skew.seconds,
// .sub.claim.name). A token is accepted only when:
//   - it is three base64url parts and its header and payload are JSON objects;
//   - its alg is one of RS256/RS384/RS512/ES256/ES384/ES512 (never "none",
//     never an HMAC alg: the broker holds public keys only) and a key of the
//     JWKS matches its kid (or, without a kid, the one key of that type);
//   - the signature verifies with that key (node:crypto, JWK import);
//   - exp is present and in the future, nbf (if any) is past, both within
//     the clock skew; aud contains the expected audience and iss equals the
//     expected issuer when those are configured;
//   - the principal claim (sub by default) is a non-empty string.
// Time comes from the caller; nothing here reads a clock or a file.

import { createPublicKey, verify, type KeyObject } from 'node:crypto';

export interface JwtValidatorConfig {
  /** The JWKS's keys ({ keys: [...] } of sasl.oauthbearer.jwks file). */
  readonly jwks: readonly JsonWebKeyLike[];
  readonly expectedAudience: readonly string[];
  readonly expectedIssuer: string | null;
  readonly clockSkewMs: number;
  readonly principalClaim: string;
}

export interface JsonWebKeyLike {
  readonly kty?: unknown;
  readonly kid?: unknown;
  readonly alg?: unknown;
  readonly use?: unknown;
  readonly [k: string]: unknown;
}

export type JwtResult =
  | { readonly ok: true; readonly principal: string; readonly expiresAtMs: number; readonly claims: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string };

const ALGS: Readonly<Record<string, { kty: 'RSA' | 'EC'; hash: string; crv?: string }>> = {
  RS256: { kty: 'RSA', hash: 'sha256' }, RS384: { kty: 'RSA', hash: 'sha384' }, RS512: { kty: 'RSA', hash: 'sha512' },
  ES256: { kty: 'EC', hash: 'sha256', crv: 'P-256' }, ES384: { kty: 'EC', hash: 'sha384', crv: 'P-384' }, ES512: { kty: 'EC', hash: 'sha512', crv: 'P-521' },
};

const B64URL = /^[A-Za-z0-9_-]*$/;

function jsonPart(part: string): Record<string, unknown> | null {
  if (!B64URL.test(part)) return null;
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** Imports the JWKS's public keys once; a key node:crypto cannot import is an error naming it. */
export class JwtValidator {
  private readonly keys: Array<{ jwk: JsonWebKeyLike; key: KeyObject }>;

  constructor(private readonly cfg: JwtValidatorConfig) {
    this.keys = cfg.jwks.map((jwk, i) => {
      if (jwk.kty !== 'RSA' && jwk.kty !== 'EC') throw new Error(`JWKS key ${i}: kty must be RSA or EC, got ${String(jwk.kty)}`);
      if ('d' in jwk) throw new Error(`JWKS key ${i} is a private key: the broker needs public keys only`);
      try {
        return { jwk, key: createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }) };
      } catch (err) {
        throw new Error(`JWKS key ${i} cannot be imported: ${(err as Error).message}`);
      }
    });
  }

  private keyFor(alg: string, kid: unknown): KeyObject | null {
    const want = ALGS[alg]!;
    const candidates = this.keys.filter(({ jwk }) => jwk.kty === want.kty && (want.crv === undefined || jwk.crv === want.crv)
      && (jwk.alg === undefined || jwk.alg === alg) && (jwk.use === undefined || jwk.use === 'sig'));
    if (kid !== undefined) return candidates.find(({ jwk }) => jwk.kid === kid)?.key ?? null;
    return candidates.length === 1 ? candidates[0]!.key : null;
  }

  validate(token: string, nowMs: number): JwtResult {
    const bad = (reason: string): JwtResult => ({ ok: false, reason });
    const parts = token.split('.');
    if (parts.length !== 3) return bad('the token is not a JWS compact serialization (three parts)');
    const header = jsonPart(parts[0]!);
    const claims = jsonPart(parts[1]!);
    if (!header || !claims || !B64URL.test(parts[2]!)) return bad('the token\'s header or payload is not base64url JSON');
    const alg = header.alg;
    if (typeof alg !== 'string' || !Object.hasOwn(ALGS, alg)) return bad(`alg ${JSON.stringify(alg)} is not accepted (RS256/384/512, ES256/384/512)`);
    if (header.crit !== undefined) return bad('critical header parameters are not supported');
    const key = this.keyFor(alg, header.kid);
    if (!key) return bad(`no key in the JWKS for kid ${JSON.stringify(header.kid ?? null)} and alg ${alg}`);
    const signed = Buffer.from(`${parts[0]}.${parts[1]}`, 'ascii');
    const signature = Buffer.from(parts[2]!, 'base64url');
    let good = false;
    try {
      good = verify(ALGS[alg]!.hash, signed, ALGS[alg]!.kty === 'EC' ? { key, dsaEncoding: 'ieee-p1363' } : key, signature);
    } catch {
      good = false;
    }
    if (!good) return bad('the token\'s signature does not verify');
    const skew = this.cfg.clockSkewMs;
    if (typeof claims.exp !== 'number') return bad('the token has no exp claim');
    const expMs = claims.exp * 1000;
    if (nowMs >= expMs + skew) return bad('the token has expired');
    if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || nowMs + skew < claims.nbf * 1000)) return bad('the token is not valid yet (nbf)');
    if (this.cfg.expectedAudience.length > 0) {
      const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
      if (!aud.some((a) => this.cfg.expectedAudience.includes(a as string))) return bad('the token\'s audience is not an expected one');
    }
    if (this.cfg.expectedIssuer !== null && claims.iss !== this.cfg.expectedIssuer) return bad('the token\'s issuer is not the expected one');
    const principal = claims[this.cfg.principalClaim];
    if (typeof principal !== 'string' || principal === '') return bad(`the token has no ${this.cfg.principalClaim} claim`);
    return { ok: true, principal, expiresAtMs: expMs, claims };
  }
}
