// Test tokens: a key pair per algorithm, its public JWK for a JWKS file, and
// JWTs signed with node:crypto (what an identity provider would issue).

import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export interface Signer { readonly kid: string; readonly alg: 'RS256' | 'ES256'; readonly key: KeyObject; readonly jwk: Record<string, unknown> }

export function signer(alg: 'RS256' | 'ES256', kid: string): Signer {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg, key: pair.privateKey, jwk: { ...pair.publicKey.export({ format: 'jwk' }), kid, use: 'sig' } };
}

export function makeJwt(s: Signer, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const h = Buffer.from(JSON.stringify({ alg: s.alg, typ: 'JWT', kid: s.kid, ...header })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const sig = sign('sha256', Buffer.from(`${h}.${p}`), s.alg === 'ES256' ? { key: s.key, dsaEncoding: 'ieee-p1363' } : s.key);
  return `${h}.${p}.${sig.toString('base64url')}`;
}
