import { expect } from 'chai';
import fc from 'fast-check';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, peekCorrelationId } from '../../src/protocol/envelope.js';
import { Packr } from 'msgpackr';

describe('protocol envelope', () => {
  it('round-trips requests and responses, keeping batches as raw bytes', () => {
    const batch = Buffer.from([1, 2, 3, 4]);
    const req = { apiKey: 0, apiVersion: 1, correlationId: 0xffffffff, clientId: 'c', body: { batches: [batch] } };
    const back = decodeRequest(encodeRequest(req));
    expect(back.ok).to.equal(true);
    if (back.ok) {
      expect(back.value.correlationId).to.equal(0xffffffff);
      expect(Buffer.from((back.value.body as { batches: Uint8Array[] }).batches[0]!).equals(batch)).to.equal(true);
    }
    const res = decodeResponse(encodeResponse({ correlationId: 7, body: { errorCode: 0 } }));
    expect(res).to.deep.equal({ ok: true, value: { correlationId: 7, body: { errorCode: 0 } } });
  });

  it('refuses ill-shaped envelopes with a reason', () => {
    const p = new Packr({ useRecords: false });
    const cases: unknown[] = [
      'x', [], [0, 0, 1, null], [-1, 0, 1, null, {}], [0, 0.5, 1, null, {}], [0, 0, 2 ** 32, null, {}],
      [0, 0, 1, 5, {}], [0, 0, 1, null, []], [0, 0, 1, null, null],
    ];
    for (const c of cases) {
      const r = decodeRequest(p.pack(c));
      expect(r.ok, JSON.stringify(c)).to.equal(false);
    }
    expect(peekCorrelationId(p.pack([0, 0, 9, null, 'bad']))).to.equal(9);
  });

  it('never throws on random or mutated bytes', () => {
    const valid = encodeRequest({ apiKey: 1, apiVersion: 0, correlationId: 5, clientId: 'x', body: { a: [1, 2, 3], b: Buffer.alloc(8) } });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      decodeRequest(bytes);
      decodeResponse(bytes);
      peekCorrelationId(bytes);
    }), { numRuns: 2000, seed: 42 });
    fc.assert(fc.property(fc.nat(valid.length - 1), fc.nat(255), (pos, byte) => {
      const copy = Buffer.from(valid);
      copy[pos] = byte;
      decodeRequest(copy);
    }), { numRuns: 2000, seed: 43 });
  });
});
