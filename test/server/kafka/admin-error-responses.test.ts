// The admin and transaction handlers' whole-request error answers
// (errorResponse: what the dispatcher sends when a handler throws, e.g. no
// active controller, a refused transactional id): for every served version,
// built from the golden request of that version, the answer encodes,
// decodes, and carries the error on every item it names — in the code that
// version knows (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH to a client
// older than KIP-588, TRANSACTION_ABORTABLE INVALID_TXN_STATE to one older
// than KIP-890).

import { expect } from 'chai';
import { KAFKA_HANDLERS } from '../../../src/server/kafka/handlers.js';
import { decodeBody, encodeBody, loadGolden } from '../../protocol/kafka/golden.js';
import { ADMIN_SAMPLES, type AdminSample } from '../../protocol/kafka/admin-samples.js';
import { TXN_SAMPLES } from '../../protocol/kafka/txn-samples.js';
import { clientCode } from '../../../src/server/kafka/txn-kit.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import { Errors } from '../../../src/util/errors.js';
import { inVersions, type FieldSpec } from '../../../src/protocol/kafka/schema.js';

/** Every errorCode field of `version` in a decoded struct (fields the version lacks are decoded as defaults: skipped). */
function errorCodes(fields: readonly FieldSpec[], version: number, v: Struct): number[] {
  return fields.filter((f) => inVersions(f.versions, version)).flatMap((f) => {
    const x = v[f.name];
    if (f.name === 'errorCode' || f.name === 'partitionErrorCode') return [x as number];
    if (typeof f.type === 'string' || x === null) return [];
    const sub = f.type.fields;
    return f.array ? (x as Struct[]).flatMap((item) => errorCodes(sub, version, item)) : errorCodes(sub, version, x as Struct);
  });
}

/** The codes of the whole-request error answer of `s` at version `v`. */
function answerCodes(s: AdminSample, v: number, code: number): number[] {
  const handler = KAFKA_HANDLERS.get(s.spec.apiKey)!;
  const req = decodeBody(s.spec, v, 'request', loadGolden(s.dir, v, 'request'));
  const body = handler.errorResponse(req, code, 'the request failed', v);
  return errorCodes(s.spec.response.fields, v, decodeBody(s.spec, v, 'response', encodeBody(s.spec, v, 'response', body)));
}

describe('Kafka admin handlers: whole-request error answers', () => {
  const code = Errors.REQUEST_TIMED_OUT.code;
  for (const s of ADMIN_SAMPLES) {
    it(`${s.spec.name}: the error on every item, at every served version`, () => {
      const handler = KAFKA_HANDLERS.get(s.spec.apiKey)!;
      expect(handler, 'served').to.not.equal(undefined);
      expect([handler.minVersion, handler.maxVersion]).to.deep.equal([s.versions[0], s.versions.at(-1)]);
      for (const v of s.versions) {
        const codes = answerCodes(s, v, code);
        expect(codes.length, `v${v}: some item carries the error`).to.be.greaterThan(0);
        expect(codes.every((c) => c === code), `v${v}: ${JSON.stringify(codes)}`).to.equal(true);
      }
    });
  }
});

describe('Kafka transaction handlers: whole-request error answers', () => {
  // The version that first knows PRODUCER_FENCED, and TRANSACTION_ABORTABLE, per API (Kafka's message definitions).
  const NEW_CODES: ReadonlyMap<number, { fenced?: number; abortable: number }> = new Map([
    [24, { fenced: 2, abortable: 5 }], [25, { fenced: 2, abortable: 4 }], [26, { fenced: 2, abortable: 4 }], [28, { abortable: 4 }],
  ]);
  for (const s of TXN_SAMPLES) {
    it(`${s.spec.name}: the error on every item, at every served version, in the code the version knows`, () => {
      const handler = KAFKA_HANDLERS.get(s.spec.apiKey)!;
      expect(handler, 'served').to.not.equal(undefined);
      for (let v = handler.minVersion; v <= handler.maxVersion; v++) {
        for (const code of [Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code, Errors.COORDINATOR_NOT_AVAILABLE.code]) {
          const codes = answerCodes(s, v, code);
          expect(codes.length, `v${v}: some item carries the error`).to.be.greaterThan(0);
          expect(codes.every((c) => c === code), `v${v}: ${JSON.stringify(codes)}`).to.equal(true);
        }
        const known = NEW_CODES.get(s.spec.apiKey);
        if (!known) continue;
        const fenced = answerCodes(s, v, Errors.PRODUCER_FENCED.code);
        const wantFenced = known.fenced !== undefined && v < known.fenced ? Errors.INVALID_PRODUCER_EPOCH.code : Errors.PRODUCER_FENCED.code;
        expect(fenced.every((c) => c === wantFenced), `v${v} PRODUCER_FENCED: ${JSON.stringify(fenced)}`).to.equal(true);
        const abortable = answerCodes(s, v, Errors.TRANSACTION_ABORTABLE.code);
        const wantAbortable = v < known.abortable ? Errors.INVALID_TXN_STATE.code : Errors.TRANSACTION_ABORTABLE.code;
        expect(abortable.every((c) => c === wantAbortable), `v${v} TRANSACTION_ABORTABLE: ${JSON.stringify(abortable)}`).to.equal(true);
      }
    });
  }

  it('maps only the two newer codes, and only below their versions', () => {
    expect(clientCode(Errors.PRODUCER_FENCED.code, 1, { producerFenced: 2 })).to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
    expect(clientCode(Errors.PRODUCER_FENCED.code, 2, { producerFenced: 2 })).to.equal(Errors.PRODUCER_FENCED.code);
    expect(clientCode(Errors.PRODUCER_FENCED.code, 0, {}), 'an API without the code change keeps it').to.equal(Errors.PRODUCER_FENCED.code);
    expect(clientCode(Errors.TRANSACTION_ABORTABLE.code, 10, { abortable: 11 })).to.equal(Errors.INVALID_TXN_STATE.code);
    expect(clientCode(Errors.TRANSACTION_ABORTABLE.code, 11, { abortable: 11 })).to.equal(Errors.TRANSACTION_ABORTABLE.code);
    expect(clientCode(Errors.CONCURRENT_TRANSACTIONS.code, 0, { producerFenced: 2, abortable: 4 })).to.equal(Errors.CONCURRENT_TRANSACTIONS.code);
  });
});
