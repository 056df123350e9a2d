// One connection's SASL state, shared by the Kafka and the WebSocket listener
// (Kafka's SaslServerAuthenticator, as a pure state machine; the listener is
// the shell that closes sockets and runs the timer at `deadlineMs()`).
//
//   states: 'start' → handshake → 'handshaken' → authenticate (challenges) …
//           → 'authenticated' → handshake (KIP-368 re-authentication) →
//           'reauthenticating' → authenticate … → 'authenticated';
//           any failure → 'failed' (the listener closes the connection).
//
// Rules (Kafka's):
//   - while required and not authenticated, only ApiVersions, SaslHandshake
//     and SaslAuthenticate are served; anything else closes the connection;
//   - a handshake naming a mechanism not enabled answers
//     UNSUPPORTED_SASL_MECHANISM with the enabled list, and the exchange ends;
//     PLAIN is offered only over TLS unless plainWithoutTls;
//   - a failed authentication answers SASL_AUTHENTICATION_FAILED with the
//     mechanism's message and ends the exchange;
//   - success sets the connection's SecuritySession; the session lasts
//     min(connections.max.reauth.ms, the credential's expiry) and that is
//     answered as session_lifetime_ms (0: no limit). Past it, the connection
//     is closed unless it re-authenticated as the same principal with the
//     same mechanism;
//   - a connection not authenticated within authTimeoutMs is closed.

import type { Clock } from '../../util/clock.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';
import type { SecuritySession } from '../principal.js';
import { samePrincipal } from '../principal.js';
import { isScramMechanism, OAUTHBEARER, PLAIN, type SaslServer } from './mechanism.js';
import { ScramServer } from './scram.js';
import { PlainServer } from './plain.js';
import { OauthBearerServer } from './oauthbearer.js';
import type { CredentialLookup } from './scram-credential.js';
import type { JwtValidator } from './jwt.js';

/** The API keys (same numbers on both protocols) served before authentication. */
export const SASL_HANDSHAKE_KEY = 17;
export const SASL_AUTHENTICATE_KEY = 36;
export const API_VERSIONS_KEY = 18;
export const PRE_AUTH_APIS: ReadonlySet<number> = new Set([API_VERSIONS_KEY, SASL_HANDSHAKE_KEY, SASL_AUTHENTICATE_KEY]);

export interface SaslSettings {
  /** Whether anything but the pre-authentication APIs needs an authenticated session. */
  readonly required: boolean;
  /** sasl.enabled.mechanisms, in the order offered. */
  readonly mechanisms: readonly string[];
  /** sasl.plain.allow.plaintext: offer PLAIN on a connection without TLS. */
  readonly plainWithoutTls: boolean;
  /** connections.max.reauth.ms; 0: sessions have no limit of their own. */
  readonly reauthMs: number;
  /** sasl.authentication.timeout.ms: a required connection not authenticated by then is closed. */
  readonly authTimeoutMs: number;
  readonly credentials: CredentialLookup;
  /** OAUTHBEARER's token validator; null when no JWKS is configured. */
  readonly jwt: JwtValidator | null;
  /** A fresh SCRAM server nonce (crypto-random in production). */
  readonly nonce: () => string;
  /**
   * A connection whose TLS client certificate verified (mechanism "SSL")
   * counts as authenticated where a login is required: the WebSocket
   * listener's rule (node links and the CLI log in by certificate). Off on
   * the Kafka listener, where SASL_SSL asks for a SASL login as Kafka does.
   */
  readonly clientCertAuthenticates?: boolean;
}

export interface HandshakeAnswer {
  readonly error: ErrorInfo | null;
  readonly mechanisms: readonly string[];
  /** The exchange ended: the listener answers, then closes. */
  readonly close: boolean;
}

export interface AuthenticateAnswer {
  readonly error: ErrorInfo | null;
  readonly errorMessage: string | null;
  readonly authBytes: Uint8Array;
  readonly sessionLifetimeMs: number;
  readonly close: boolean;
}

type State = 'start' | 'handshaken' | 'authenticated' | 'reauthenticating' | 'failed';

export class SaslAuthenticator {
  private state: State = 'start';
  private server: SaslServer | null = null;
  /** When the current session ends (node clock), null: never. */
  private sessionEndMs: number | null = null;
  private readonly openedMs: number;
  /** Authenticated by a verified client certificate when the connection opened (and the settings let that count). */
  private readonly byCertificate: boolean;

  constructor(
    private readonly settings: SaslSettings,
    /** The connection's session: updated in place on success. */
    readonly session: SecuritySession,
    private readonly clock: Clock,
  ) {
    this.openedMs = clock.nowMs();
    this.byCertificate = settings.clientCertAuthenticates === true && session.mechanism === 'SSL';
  }

  get authenticated(): boolean {
    return this.state === 'authenticated' || this.state === 'reauthenticating';
  }

  /** Whether requests beyond the pre-authentication APIs may be served: a SASL login, or a certificate that counts. */
  private get loggedIn(): boolean {
    return this.authenticated || (this.byCertificate && this.state === 'start');
  }

  /** The mechanisms this connection is offered. */
  offered(): string[] {
    return this.settings.mechanisms.filter((m) => m !== PLAIN || this.session.tls || this.settings.plainWithoutTls)
      .filter((m) => m !== OAUTHBEARER || this.settings.jwt !== null);
  }

  /** Why a request of `apiKey` must close the connection now, or null to serve it. */
  refusal(apiKey: number): string | null {
    const now = this.clock.nowMs();
    if (this.state === 'failed') return 'the SASL exchange failed';
    if (this.authenticated && this.sessionEndMs !== null && now >= this.sessionEndMs && !PRE_AUTH_APIS.has(apiKey)) {
      return 'the SASL session expired without re-authentication (KIP-368)';
    }
    if (this.settings.required && !this.loggedIn && !PRE_AUTH_APIS.has(apiKey)) {
      return `api key ${apiKey} before SASL authentication completed`;
    }
    return null;
  }

  /**
   * When the listener must look again (call `overdue()`): the authentication
   * deadline while not yet authenticated, the session's end after; null: never.
   */
  deadlineMs(): number | null {
    if (this.state === 'failed') return null;
    if (!this.authenticated) return this.settings.required && !this.byCertificate ? this.openedMs + this.settings.authTimeoutMs : null;
    return this.sessionEndMs;
  }

  /** Why the connection must close now (a timed-out or expired session), or null. */
  overdue(): string | null {
    const deadline = this.deadlineMs();
    if (deadline === null || this.clock.nowMs() < deadline) return null;
    return this.authenticated
      ? 'the SASL session expired without re-authentication (KIP-368)'
      : `not authenticated within ${this.settings.authTimeoutMs} ms (sasl.authentication.timeout.ms)`;
  }

  handshake(mechanism: string): HandshakeAnswer {
    const offered = this.offered();
    if (this.state !== 'start' && this.state !== 'authenticated') {
      this.state = 'failed';
      return { error: Errors.ILLEGAL_SASL_STATE, mechanisms: offered, close: true };
    }
    if (!offered.includes(mechanism)) {
      if (this.state === 'start') this.state = 'failed';
      return { error: Errors.UNSUPPORTED_SASL_MECHANISM, mechanisms: offered, close: this.state === 'failed' };
    }
    if (this.state === 'authenticated' && mechanism !== this.session.mechanism) {
      this.state = 'failed';
      return { error: Errors.UNSUPPORTED_SASL_MECHANISM, mechanisms: [this.session.mechanism ?? ''], close: true };
    }
    this.server = this.makeServer(mechanism);
    this.state = this.state === 'authenticated' ? 'reauthenticating' : 'handshaken';
    return { error: null, mechanisms: offered, close: false };
  }

  private makeServer(mechanism: string): SaslServer {
    const s = this.settings;
    if (isScramMechanism(mechanism)) return new ScramServer({ mechanism, credentials: s.credentials, nonce: s.nonce });
    if (mechanism === PLAIN) return new PlainServer(s.credentials);
    if (mechanism === OAUTHBEARER && s.jwt) return new OauthBearerServer(s.jwt, this.clock);
    throw new Error(`no server for offered mechanism ${mechanism}`);
  }

  authenticate(bytes: Uint8Array): AuthenticateAnswer {
    const empty = new Uint8Array(0);
    if (this.state !== 'handshaken' && this.state !== 'reauthenticating') {
      this.state = 'failed';
      return { error: Errors.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate before a successful SaslHandshake', authBytes: empty, sessionLifetimeMs: 0, close: true };
    }
    const step = this.server!.step(bytes);
    if (step.kind === 'challenge') return { error: null, errorMessage: null, authBytes: step.bytes, sessionLifetimeMs: 0, close: false };
    const fail = (message: string): AuthenticateAnswer => {
      this.state = 'failed';
      this.server = null;
      return { error: Errors.SASL_AUTHENTICATION_FAILED, errorMessage: message, authBytes: empty, sessionLifetimeMs: 0, close: true };
    };
    if (step.kind === 'failure') return fail(step.message);
    if (this.state === 'reauthenticating' && !samePrincipal(step.principal, this.session.principal)) {
      return fail('Cannot change principals during re-authentication');
    }
    const now = this.clock.nowMs();
    const limits = [
      ...(this.settings.reauthMs > 0 ? [now + this.settings.reauthMs] : []),
      ...(step.expiresAtMs !== null ? [step.expiresAtMs] : []),
    ];
    this.sessionEndMs = limits.length > 0 ? Math.min(...limits) : null;
    if (this.sessionEndMs !== null && this.sessionEndMs <= now) return fail('the credential has already expired');
    this.session.principal = step.principal;
    this.session.mechanism = this.server!.mechanism;
    this.session.expiresAtMs = this.sessionEndMs;
    this.server = null;
    this.state = 'authenticated';
    return { error: null, errorMessage: null, authBytes: step.bytes, sessionLifetimeMs: this.sessionEndMs === null ? 0 : this.sessionEndMs - now, close: false };
  }
}
