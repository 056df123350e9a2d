// The admin handlers' whole-request error answers (errorResponse: what the
// dispatcher sends when a handler throws, e.g. no active controller): for
// every served version, built from the golden request of that version, the
// answer encodes, decodes, and carries the error on every item it names.

import { expect } from 'chai';
import { KAFKA_HANDLERS } from '../../../src/server/kafka/handlers.js';
import { decodeBody, encodeBody, loadGolden } from '../../protocol/kafka/golden.js';
import { ADMIN_SAMPLES } from '../../protocol/kafka/admin-samples.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import { Errors } from '../../../src/util/errors.js';
import { inVersions, type FieldSpec } from '../../../src/protocol/kafka/schema.js';

/** Every errorCode field of `version` in a decoded struct (fields the version lacks are decoded as defaults: skipped). */
function errorCodes(fields: readonly FieldSpec[], version: number, v: Struct): number[] {
  return fields.filter((f) => inVersions(f.versions, version)).flatMap((f) => {
    const x = v[f.name];
    if (f.name === 'errorCode') return [x as number];
    if (typeof f.type === 'string' || x === null) return [];
    const sub = f.type.fields;
    return f.array ? (x as Struct[]).flatMap((item) => errorCodes(sub, version, item)) : errorCodes(sub, version, x as Struct);
  });
}

describe('Kafka admin handlers: whole-request error answers', () => {
  const code = Errors.REQUEST_TIMED_OUT.code;
  for (const s of ADMIN_SAMPLES) {
    it(`${s.spec.name}: the error on every item, at every served version`, () => {
      const handler = KAFKA_HANDLERS.get(s.spec.apiKey)!;
      expect(handler, 'served').to.not.equal(undefined);
      expect([handler.minVersion, handler.maxVersion]).to.deep.equal([s.versions[0], s.versions.at(-1)]);
      for (const v of s.versions) {
        const req = decodeBody(s.spec, v, 'request', loadGolden(s.dir, v, 'request'));
        const body = handler.errorResponse(req, code, 'REQUEST_TIMED_OUT: no controller answered', v);
        const decoded = decodeBody(s.spec, v, 'response', encodeBody(s.spec, v, 'response', body));
        const codes = errorCodes(s.spec.response.fields, v, decoded);
        expect(codes.length, `v${v}: some item carries the error`).to.be.greaterThan(0);
        expect(codes.every((c) => c === code), `v${v}: ${JSON.stringify(codes)}`).to.equal(true);
      }
    });
  }
});
