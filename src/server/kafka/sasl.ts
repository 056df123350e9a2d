// SaslHandshake (17) and SaslAuthenticate (36) on the Kafka listener, as
// Kafka's SaslServerAuthenticator answers them. The connection's exchange is
// the listener's SaslGate's authenticator; on a listener without SASL
// (PLAINTEXT, SSL) both answer ILLEGAL_SASL_STATE, as Kafka's KafkaApis does.
// A handshake or authentication that ends the exchange (an unknown
// mechanism, a failed login) is answered, then the connection is closed.
//
// SaslHandshake v0 (raw SASL tokens after the handshake, without Kafka
// framing) is advertised — librdkafka enables SASL only when v0 is in the
// range — but answered ILLEGAL_SASL_STATE and the connection closed: every
// current client sends v1 and then SaslAuthenticate.

import { saslHandshake } from '../../protocol/kafka/apis/sasl-handshake/schema.js';
import { saslAuthenticate } from '../../protocol/kafka/apis/sasl-authenticate/schema.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';

const EMPTY = Buffer.alloc(0);

export const saslHandshakeHandler: KafkaApiHandler = {
  spec: saslHandshake,
  minVersion: 0,
  maxVersion: 1,
  handle(req, ctx) {
    const gate = ctx.deps.sasl;
    const a = gate?.authenticator(ctx.conn);
    if (!gate || !a) return { errorCode: Errors.ILLEGAL_SASL_STATE.code, mechanisms: [] };
    if (ctx.version === 0) {
      gate.closeAfterReply(ctx.conn, 'SaslHandshake v0 (raw SASL tokens) is not served; use v1');
      return { errorCode: Errors.ILLEGAL_SASL_STATE.code, mechanisms: a.offered() };
    }
    const answer = a.handshake(req.mechanism as string);
    if (answer.close) gate.closeAfterReply(ctx.conn, `SaslHandshake for ${String(req.mechanism).slice(0, 40)}: ${answer.error?.name ?? 'refused'}`);
    return { errorCode: answer.error?.code ?? 0, mechanisms: answer.mechanisms };
  },
  errorResponse: (_req, errorCode) => ({ errorCode, mechanisms: [] }),
};

export const saslAuthenticateHandler: KafkaApiHandler = {
  spec: saslAuthenticate,
  minVersion: 0,
  maxVersion: 2,
  handle(req, ctx) {
    const gate = ctx.deps.sasl;
    const a = gate?.authenticator(ctx.conn);
    if (!gate || !a) {
      return { errorCode: Errors.ILLEGAL_SASL_STATE.code, errorMessage: 'this listener does not use SASL', authBytes: EMPTY, sessionLifetimeMs: 0 };
    }
    const answer = a.authenticate(req.authBytes as Buffer);
    if (answer.close) gate.closeAfterReply(ctx.conn, `SASL authentication failed: ${answer.errorMessage ?? ''}`);
    else gate.rearm(ctx.conn);
    return {
      errorCode: answer.error?.code ?? 0, errorMessage: answer.errorMessage, authBytes: Buffer.from(answer.authBytes), sessionLifetimeMs: answer.sessionLifetimeMs,
    };
  },
  errorResponse: (_req, errorCode, errorMessage) => ({ errorCode, errorMessage, authBytes: EMPTY, sessionLifetimeMs: 0 }),
};
