import { expect } from 'chai';
import type { ConsumerMessage } from '../../src/client/consumer.js';
import { formatRecord } from '../../src/cli/consume-format.js';

const m: ConsumerMessage = {
  topic: 'orders', partition: 2, offset: 41, timestamp: 1700000000000,
  key: Buffer.from('k1'), value: Buffer.from('hello wörld'), headers: [{ key: 'h', value: Buffer.from('1') }, { key: 'h', value: null }],
};
const nulls: ConsumerMessage = { ...m, key: null, value: null, headers: [] };

describe('sluice consume: output formats', () => {
  it('prints the value, or "null"', () => {
    expect(formatRecord(m, 'value')).to.equal('hello wörld');
    expect(formatRecord(nulls, 'value')).to.equal('null');
  });

  it('prints key TAB value, or with the given separator', () => {
    expect(formatRecord(m, 'key-value')).to.equal('k1\thello wörld');
    expect(formatRecord(m, 'key-value', ':')).to.equal('k1:hello wörld');
    expect(formatRecord(nulls, 'key-value')).to.equal('null\tnull');
  });

  it('prints one JSON object with the metadata and repeated headers', () => {
    expect(JSON.parse(formatRecord(m, 'json'))).to.deep.equal({
      topic: 'orders', partition: 2, offset: 41, timestamp: 1700000000000, key: 'k1', value: 'hello wörld',
      headers: [{ key: 'h', value: '1' }, { key: 'h', value: null }],
    });
    expect(formatRecord(m, 'json')).not.to.contain('\n');
    expect(JSON.parse(formatRecord(nulls, 'json'))).to.include({ key: null, value: null });
  });
});
