import { expect } from 'chai';
import { ScramServer } from '../../../src/security/sasl/scram.js';
import { PlainServer } from '../../../src/security/sasl/plain.js';
import { OauthBearerServer } from '../../../src/security/sasl/oauthbearer.js';
import { JwtValidator, type JwtValidatorConfig } from '../../../src/security/sasl/jwt.js';
import { SaslAuthenticator, type SaslSettings } from '../../../src/security/sasl/authenticator.js';
import { credentialFromSaltedPassword, saltPassword, type CredentialLookup, type ScramCredential } from '../../../src/security/sasl/scram-credential.js';
import type { SaslStep, ScramMechanism } from '../../../src/security/sasl/mechanism.js';
import { ScramClient, saslClient } from '../../../src/client/sasl.js';
import { ManualClock } from '../../../src/util/clock.js';
import { anonymousSession } from '../../../src/security/principal.js';
import { Errors } from '../../../src/util/errors.js';
import { makeJwt, signer } from './jwt-kit.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

function credential(m: ScramMechanism, password: string, salt: Uint8Array, iterations = 4096): ScramCredential {
  return credentialFromSaltedPassword(m, salt, saltPassword(m, password, salt, iterations), iterations);
}

function lookupOf(...creds: Array<[string, ScramCredential]>): CredentialLookup {
  return (user, m) => creds.find(([u, c]) => u === user && c.mechanism === m)?.[1];
}

const bytesOf = (step: SaslStep): string => (step.kind === 'failure' ? `failure: ${step.message}` : dec(step.bytes));

/** Runs a whole exchange between the Web-API client and a server; the server's last step. */
async function exchange(server: { step(b: Uint8Array): SaslStep }, client: { start(): Promise<Uint8Array>; next(b: Uint8Array): Promise<Uint8Array | null> }): Promise<SaslStep> {
  let out: Uint8Array | null = await client.start();
  for (let i = 0; i < 5 && out; i++) {
    const step = server.step(out);
    if (step.kind !== 'challenge') {
      if (step.kind === 'success') expect(await client.next(step.bytes)).to.equal(null);
      return step;
    }
    out = await client.next(step.bytes);
  }
  throw new Error('exchange did not finish');
}

describe('security/sasl: SCRAM (RFC 5802, RFC 7677)', () => {
  // RFC 7677 §3: the SCRAM-SHA-256 example, both sides checked byte for byte.
  const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
  const rfcCred = credential('SCRAM-SHA-256', 'pencil', salt);
  const serverNonce = '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
  const clientFinal = 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=';
  const rfcServer = () => new ScramServer({ mechanism: 'SCRAM-SHA-256', credentials: lookupOf(['user', rfcCred]), nonce: () => serverNonce });

  it('answers the RFC 7677 test vector exactly (server side)', () => {
    const s = rfcServer();
    expect(bytesOf(s.step(enc('n,,n=user,r=rOprNGfwEbeRWgbNEkqO')))).to.equal('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
    const last = s.step(enc(clientFinal));
    expect(last.kind).to.equal('success');
    expect(bytesOf(last)).to.equal('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    if (last.kind === 'success') expect(last.principal).to.deep.equal({ type: 'User', name: 'user' });
  });

  it('the Web-API client sends the RFC 7677 messages and checks the server signature', async () => {
    const c = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO');
    expect(dec(await c.start())).to.equal('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const final = await c.next(enc('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'));
    expect(dec(final!)).to.equal(clientFinal);
    const forged = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO');
    await forged.start();
    await forged.next(enc('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'));
    let err: Error | null = null;
    await forged.next(enc('v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')).catch((e: Error) => { err = e; });
    expect(String(err)).to.match(/signature is wrong/);
  });

  for (const m of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
    it(`${m}: the client and server agree; a wrong password and an unknown user fail alike`, async () => {
      const cred = credential(m, 's3cret=,x', enc('salty-salt'), 4096);
      const server = () => new ScramServer({ mechanism: m, credentials: lookupOf(['al,i=ce', cred]), nonce: () => 'servernonce' });
      const ok = await exchange(server(), new ScramClient(m, 'al,i=ce', 's3cret=,x'));
      expect(ok.kind).to.equal('success');
      const wrong = await exchange(server(), new ScramClient(m, 'al,i=ce', 'nope'));
      const unknown = await exchange(server(), new ScramClient(m, 'bob', 's3cret=,x'));
      expect(wrong.kind).to.equal('failure');
      expect(bytesOf(wrong)).to.equal(bytesOf(unknown));
    });
  }

  it('refuses a bad nonce, a wrong channel binding, replays, truncation and garbage', () => {
    const first = enc('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const failsAfterFirst = (final: string): string => {
      const s = rfcServer();
      s.step(first);
      return bytesOf(s.step(enc(final)));
    };
    expect(failsAfterFirst(clientFinal.replace('k0,p=', 'k1,p='))).to.match(/nonce does not match/);
    expect(failsAfterFirst(clientFinal.replace('c=biws', 'c=eSws'))).to.match(/channel binding/);
    expect(failsAfterFirst(clientFinal.slice(0, 40))).to.match(/failure/);
    expect(failsAfterFirst(clientFinal.replace('p=dHzb', 'p=dHzc'))).to.match(/invalid credentials/);
    expect(failsAfterFirst('\u00ff\u0000garbage')).to.match(/failure/);
    // A replayed final message to a fresh exchange: the server nonce differs, so it fails.
    const fresh = new ScramServer({ mechanism: 'SCRAM-SHA-256', credentials: lookupOf(['user', rfcCred]), nonce: () => 'another-nonce' });
    fresh.step(first);
    expect(bytesOf(fresh.step(enc(clientFinal)))).to.match(/nonce does not match/);
    // The exchange is used once.
    const done = rfcServer();
    done.step(first);
    done.step(enc(clientFinal));
    expect(done.step(enc(clientFinal)).kind).to.equal('failure');
    for (const bad of ['', 'n,,', 'p=tls-unique,,n=user,r=x', 'n,,m=ext,n=user,r=x', 'n,,n=us=er,r=x', 'n,a=other,n=user,r=x', 'n,,n=user,r=x,tokenauth=true', 'n,,r=x']) {
      expect(rfcServer().step(enc(bad)).kind, JSON.stringify(bad)).to.equal('failure');
    }
    expect(rfcServer().step(new Uint8Array([0xc3, 0x28])).kind).to.equal('failure');
  });
});

describe('security/sasl: PLAIN', () => {
  const cred = credential('SCRAM-SHA-512', 'pw', enc('salt'));
  const server = () => new PlainServer(lookupOf(['ann', cred]));
  it('checks the password against the stored SCRAM credential', () => {
    expect(server().step(enc('\u0000ann\u0000pw')).kind).to.equal('success');
    expect(server().step(enc('ann\u0000ann\u0000pw')).kind).to.equal('success');
    expect(bytesOf(server().step(enc('\u0000ann\u0000px')))).to.match(/Invalid username or password/);
    expect(bytesOf(server().step(enc('\u0000bob\u0000pw')))).to.match(/Invalid username or password/);
    expect(bytesOf(server().step(enc('bob\u0000ann\u0000pw')))).to.match(/authorization id/);
    for (const bad of ['', 'ann', '\u0000ann', '\u0000\u0000pw', '\u0000ann\u0000pw\u0000x']) expect(server().step(enc(bad)).kind, JSON.stringify(bad)).to.equal('failure');
  });
});

// ---------------------------------------------------------------- OAUTHBEARER

describe('security/sasl: OAUTHBEARER and JWT', () => {
  const rs = signer('RS256', 'rs');
  const es = signer('ES256', 'es');
  const other = signer('RS256', 'rs');
  const clock = new ManualClock(1_800_000_000_000);
  const now = clock.nowMs() / 1000;
  const cfg: JwtValidatorConfig = { jwks: [rs.jwk, es.jwk], expectedAudience: ['sluice'], expectedIssuer: 'https://idp', clockSkewMs: 30_000, principalClaim: 'sub' };
  const validator = new JwtValidator(cfg);
  const good = { sub: 'carol', aud: 'sluice', iss: 'https://idp', exp: now + 600, nbf: now - 10 };
  const login = (token: string, v = validator) => new OauthBearerServer(v, clock).step(enc(`n,,\u0001auth=Bearer ${token}\u0001\u0001`));

  it('accepts RS256 and ES256 tokens and takes the principal from sub (or the configured claim)', () => {
    for (const s of [rs, es]) {
      const step = login(makeJwt(s, good));
      expect(step.kind, bytesOf(step)).to.equal('success');
      if (step.kind === 'success') {
        expect(step.principal.name).to.equal('carol');
        expect(step.expiresAtMs).to.equal((now + 600) * 1000);
      }
    }
    const byEmail = new JwtValidator({ ...cfg, principalClaim: 'email' });
    const step = login(makeJwt(rs, { ...good, email: 'c@x' }), byEmail);
    expect(step.kind === 'success' && step.principal.name).to.equal('c@x');
  });

  it('refuses expired, not-yet-valid, wrong-audience, wrong-issuer, badly signed and alg:none tokens', () => {
    const cases: Array<[string, string]> = [
      [makeJwt(rs, { ...good, exp: now - 31 }), 'expired'],
      [makeJwt(rs, { ...good, nbf: now + 60 }), 'not valid yet'],
      [makeJwt(rs, { ...good, aud: ['other'] }), 'audience'],
      [makeJwt(rs, { ...good, iss: 'https://evil' }), 'issuer'],
      [makeJwt(other, good), 'signature'],
      [makeJwt(rs, { ...good, exp: undefined }), 'no exp'],
      [makeJwt(rs, { ...good, sub: undefined }), 'no sub'],
      [makeJwt(rs, good, { kid: 'missing' }), 'no key'],
      [`${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(good)).toString('base64url')}.`, 'alg "none"'],
      [makeJwt(rs, good, { alg: 'HS256' }), 'alg "HS256"'],
      ['not.a.jwt', 'base64url JSON'],
    ];
    for (const [token, why] of cases) expect(bytesOf(login(token)), why).to.contain(why);
    // Within the clock skew an expired token still passes.
    expect(login(makeJwt(rs, { ...good, exp: now - 5 })).kind).to.equal('success');
  });

  it('refuses malformed OAUTHBEARER messages and a private key in the JWKS', () => {
    for (const bad of ['', 'n,,', 'n,,\u0001auth=Basic x\u0001\u0001', 'n,,\u0001auth=Bearer x\u0001', 'p=x,,\u0001auth=Bearer x\u0001\u0001', 'n,,\u0001noequals\u0001\u0001']) {
      expect(new OauthBearerServer(validator, clock).step(enc(bad)).kind, JSON.stringify(bad)).to.equal('failure');
    }
    expect(() => new JwtValidator({ ...cfg, jwks: [rs.key.export({ format: 'jwk' }) as Record<string, unknown>] })).to.throw(/private key/);
  });
});

describe('security/sasl: the connection authenticator', () => {
  const clock = new ManualClock();
  const cred = credential('SCRAM-SHA-256', 'pw', enc('salt'));
  const settings: SaslSettings = {
    required: true, mechanisms: ['SCRAM-SHA-256', 'PLAIN'], plainWithoutTls: false, reauthMs: 60_000, authTimeoutMs: 10_000,
    credentials: lookupOf(['ann', cred]), jwt: null, nonce: () => 'n0nce',
  };

  async function login(a: SaslAuthenticator, user = 'ann', password = 'pw'): Promise<ReturnType<SaslAuthenticator['authenticate']>> {
    expect(a.handshake('SCRAM-SHA-256').error).to.equal(null);
    const c = saslClient({ mechanism: 'SCRAM-SHA-256', username: user, password });
    let out = a.authenticate(await c.start());
    if (out.error) return out;
    out = a.authenticate((await c.next(out.authBytes))!);
    return out;
  }

  it('serves only the pre-authentication APIs until logged in, then sets the session', async () => {
    const a = new SaslAuthenticator(settings, anonymousSession(), clock);
    expect(a.refusal(18)).to.equal(null);
    expect(a.refusal(3)).to.match(/before SASL authentication/);
    expect(a.offered()).to.deep.equal(['SCRAM-SHA-256']);
    const done = await login(a);
    expect(done.error).to.equal(null);
    expect(done.sessionLifetimeMs).to.equal(60_000);
    expect(a.session.principal.name).to.equal('ann');
    expect(a.session.mechanism).to.equal('SCRAM-SHA-256');
    expect(a.refusal(3)).to.equal(null);
  });

  it('closes on a wrong password, an unknown mechanism, or an out-of-order message', async () => {
    const wrong = await login(new SaslAuthenticator(settings, anonymousSession(), clock), 'ann', 'bad');
    expect(wrong.error).to.equal(Errors.SASL_AUTHENTICATION_FAILED);
    expect(wrong.close).to.equal(true);
    const mech = new SaslAuthenticator(settings, anonymousSession(), clock).handshake('PLAIN');
    expect(mech.error).to.equal(Errors.UNSUPPORTED_SASL_MECHANISM);
    expect(mech.mechanisms).to.deep.equal(['SCRAM-SHA-256']);
    const early = new SaslAuthenticator(settings, anonymousSession(), clock).authenticate(enc('n,,n=ann,r=x'));
    expect(early.error).to.equal(Errors.ILLEGAL_SASL_STATE);
  });

  it('times out a connection that never authenticates, and a session that is not renewed (KIP-368)', async () => {
    const idle = new SaslAuthenticator(settings, anonymousSession(), clock);
    expect(idle.overdue()).to.equal(null);
    clock.advance(10_000);
    expect(idle.overdue()).to.match(/not authenticated within/);
    const a = new SaslAuthenticator(settings, anonymousSession(), clock);
    await login(a);
    clock.advance(59_000);
    expect(a.overdue()).to.equal(null);
    // Re-authentication as the same user extends the session.
    const again = await login(a);
    expect(again.error).to.equal(null);
    clock.advance(59_000);
    expect(a.overdue()).to.equal(null);
    clock.advance(1_000);
    expect(a.overdue()).to.match(/expired/);
    expect(a.refusal(3)).to.match(/expired/);
  });

  it('counts a verified client certificate as a login only where the settings say so (the WebSocket listener)', () => {
    const certSession = () => ({ principal: { type: 'User', name: 'CN=node-1' }, mechanism: 'SSL', tls: true, expiresAtMs: null });
    const ws = new SaslAuthenticator({ ...settings, clientCertAuthenticates: true }, certSession(), clock);
    expect(ws.refusal(3)).to.equal(null);
    expect(ws.deadlineMs()).to.equal(null);
    clock.advance(20_000);
    expect(ws.overdue()).to.equal(null);
    // Kafka's SASL_SSL: the certificate alone is not a login.
    const kafka = new SaslAuthenticator(settings, certSession(), clock);
    expect(kafka.refusal(3)).to.match(/before SASL authentication/);
    // An anonymous TLS connection (no certificate) still has to log in.
    const anon = new SaslAuthenticator({ ...settings, clientCertAuthenticates: true }, { ...anonymousSession(), tls: true }, clock);
    expect(anon.refusal(3)).to.match(/before SASL authentication/);
  });

  it('refuses re-authentication as another principal', async () => {
    const two = lookupOf(['ann', cred], ['bob', credential('SCRAM-SHA-256', 'pw2', enc('s2'))]);
    const a = new SaslAuthenticator({ ...settings, credentials: two }, anonymousSession(), clock);
    await login(a);
    const other = await login(a, 'bob', 'pw2');
    expect(other.errorMessage).to.match(/change principals/);
  });
});
