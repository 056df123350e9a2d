// The SASL shell of a listener (Kafka's and the WebSocket one): one
// SaslAuthenticator (security/sasl/authenticator.ts, pure) per connection,
// made when the connection opens, and the one timer that closes it when its
// authentication deadline or session end passes. Both protocols' request
// paths ask `refuse(conn, apiKey)` before serving anything: a request that
// may not be served closes the connection (Kafka's rule) and is not answered.
//
// Closing after a failed exchange: the failure's answer must reach the
// client first, so the close waits for a microtask — by then the listener
// has written the (synchronous) answer; a request pipelined behind it finds
// the exchange failed and closes at once.

import { randomBytes } from 'node:crypto';
import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { ConnectionInfo } from '../net/server-connection.js';
import { SaslAuthenticator, type SaslSettings } from '../security/sasl/authenticator.js';

/** A crypto-random SCRAM server nonce: 24 bytes as base64url (no ','). */
export function scramNonce(): string {
  return randomBytes(24).toString('base64url');
}

export class SaslGate {
  private readonly auth = new WeakMap<ConnectionInfo, { authenticator: SaslAuthenticator; arm: () => void }>();

  constructor(
    readonly settings: SaslSettings,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    private readonly log: Logger,
  ) {}

  /** Starts tracking a new connection; the returned function stops it (on close). */
  open(conn: ConnectionInfo): () => void {
    const authenticator = new SaslAuthenticator(this.settings, conn.security, this.clock);
    let cancel = (): void => undefined;
    const arm = (): void => {
      cancel();
      const deadline = authenticator.deadlineMs();
      if (deadline === null) return;
      cancel = this.scheduler.schedule(Math.max(1, deadline - this.clock.nowMs()), () => {
        const why = authenticator.overdue();
        if (why) this.close(conn, why);
        else arm();
      });
    };
    this.auth.set(conn, { authenticator, arm });
    arm();
    return () => cancel();
  }

  authenticator(conn: ConnectionInfo): SaslAuthenticator | undefined {
    return this.auth.get(conn)?.authenticator;
  }

  /** After an exchange step: re-arm the timer for the new deadline (a session's end). */
  rearm(conn: ConnectionInfo): void {
    this.auth.get(conn)?.arm();
  }

  /** True when `apiKey` may not be served on `conn`: the connection is then being closed. */
  refuse(conn: ConnectionInfo, apiKey: number): boolean {
    const a = this.auth.get(conn)?.authenticator;
    if (!a) return false;
    const why = a.refusal(apiKey);
    if (why === null) return false;
    this.close(conn, why);
    return true;
  }

  /** Closes once the answer being written has gone out. */
  closeAfterReply(conn: ConnectionInfo, reason: string): void {
    queueMicrotask(() => this.close(conn, reason));
  }

  private close(conn: ConnectionInfo, reason: string): void {
    if (conn.closed) return;
    this.log.info({ conn: conn.id, remote: conn.remoteAddress, principal: conn.security.principal.name, reason }, 'closing connection (SASL)');
    conn.close?.(reason);
  }
}
