// The SASL and SCRAM-credential APIs of the WebSocket protocol
// (docs/protocol.md): the same exchange as Kafka's SaslHandshake and
// SaslAuthenticate, with msgpack bodies, and the same credential admin as
// Describe/AlterUserScramCredentials. Plus the browser's way in: a bearer
// token offered as the WebSocket subprotocol "bearer.<token>" (a browser
// cannot set an Authorization header on a WebSocket), checked as an
// OAUTHBEARER exchange when the connection opens.

import { badRequest, bytes, int, list, str, type Body } from '../protocol/body.js';
import type { ConnectionInfo } from '../net/server-connection.js';
import type { MetadataImage } from '../metadata/image.js';
import { describeUserScramCredentials } from '../controller/scram-control.js';
import { derivedUpsertion } from '../security/sasl/scram-admin.js';
import { OAUTHBEARER } from '../security/sasl/mechanism.js';
import { Errors } from '../util/errors.js';
import type { SaslGate } from './sasl-gate.js';
import type { ControllerCall } from './broker-api.js';

export const BEARER_SUBPROTOCOL_PREFIX = 'bearer.';

export function serveSaslHandshake(gate: SaslGate | undefined, conn: ConnectionInfo, body: Body): unknown {
  const mechanism = str(body, 'mechanism');
  const a = gate?.authenticator(conn);
  if (!gate || !a) return { errorCode: Errors.ILLEGAL_SASL_STATE.code, errorMessage: 'this listener does not use SASL', mechanisms: [] };
  const answer = a.handshake(mechanism);
  if (answer.close) gate.closeAfterReply(conn, `SaslHandshake for ${mechanism.slice(0, 40)}: ${answer.error?.name ?? 'refused'}`);
  return { errorCode: answer.error?.code ?? 0, errorMessage: answer.error ? `${answer.error.name}: ${mechanism.slice(0, 40)} (enabled: ${answer.mechanisms.join(', ')})` : null, mechanisms: answer.mechanisms };
}

export function serveSaslAuthenticate(gate: SaslGate | undefined, conn: ConnectionInfo, body: Body): unknown {
  const authBytes = bytes(body, 'authBytes');
  const a = gate?.authenticator(conn);
  if (!gate || !a) return { errorCode: Errors.ILLEGAL_SASL_STATE.code, errorMessage: 'this listener does not use SASL', authBytes: new Uint8Array(0), sessionLifetimeMs: 0 };
  const answer = a.authenticate(authBytes);
  if (answer.close) gate.closeAfterReply(conn, `SASL authentication failed: ${answer.errorMessage ?? ''}`);
  else gate.rearm(conn);
  return {
    errorCode: answer.error?.code ?? 0, errorMessage: answer.errorMessage, authBytes: answer.authBytes, sessionLifetimeMs: answer.sessionLifetimeMs,
    ...(answer.error === null && a.authenticated ? { principal: conn.security.principal.name } : {}),
  };
}

export function serveDescribeUserScramCredentials(image: MetadataImage, body: Body): unknown {
  const users = body.users;
  if (users !== undefined && users !== null && !(Array.isArray(users) && users.every((u) => typeof u === 'string'))) throw badRequest('users must be a list of names or null');
  return { errorCode: 0, results: describeUserScramCredentials(image, (users ?? null) as string[] | null) };
}

export function serveAlterUserScramCredentials(controller: ControllerCall, body: Body): Promise<unknown> {
  const deletions = list(body, 'deletions').map((d) => ({ name: str(d, 'name'), mechanism: int(d, 'mechanism') }));
  const upsertions = list(body, 'upsertions').map((u) => derivedUpsertion({
    name: str(u, 'name'), mechanism: int(u, 'mechanism'), iterations: int(u, 'iterations'), salt: bytes(u, 'salt'), saltedPassword: bytes(u, 'saltedPassword'),
  }));
  return controller('alterUserScramCredentials', { deletions, upsertions });
}

/**
 * A connection that offered "bearer.<token>" logs in with it at once; a bad
 * token closes the connection (close code 1008 and the reason).
 */
export function bearerOnConnect(gate: SaslGate, conn: ConnectionInfo, protocols: readonly string[]): void {
  const offered = protocols.find((p) => p.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  if (offered === undefined) return;
  const a = gate.authenticator(conn)!;
  const token = offered.slice(BEARER_SUBPROTOCOL_PREFIX.length);
  const hs = a.handshake(OAUTHBEARER);
  if (hs.error) {
    gate.closeAfterReply(conn, `bearer token on connect: ${hs.error.name} (OAUTHBEARER is not enabled)`);
    return;
  }
  const answer = a.authenticate(new TextEncoder().encode(`n,,\u0001auth=Bearer ${token}\u0001\u0001`));
  if (answer.close) gate.closeAfterReply(conn, `bearer token on connect: ${answer.errorMessage ?? 'refused'}`);
  else gate.rearm(conn);
}
