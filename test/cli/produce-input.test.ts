import { expect } from 'chai';
import { LineSplitter, lineToMessage, parseHeaders, ProduceTally } from '../../src/cli/produce-input.js';
import { isSluiceError } from '../../src/util/errors.js';

describe('sluice produce: lines to records', () => {
  it('splits chunks into lines, keeping partial lines and dropping CRs', () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from('a\nb'))).to.deep.equal(['a']);
    expect(s.push(Buffer.from('c\r\n\nd'))).to.deep.equal(['bc', '']);
    expect(s.end()).to.deep.equal(['d']);
    expect(s.end()).to.deep.equal([]);
  });

  it('gives no record for empty input or a final newline', () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from('x\n'))).to.deep.equal(['x']);
    expect(s.end()).to.deep.equal([]);
    expect(new LineSplitter().end()).to.deep.equal([]);
  });

  it('decodes a UTF-8 character split across chunks', () => {
    const bytes = Buffer.from('é€\n', 'utf8');
    const s = new LineSplitter();
    const out = [...s.push(bytes.subarray(0, 1)), ...s.push(bytes.subarray(1, 3)), ...s.push(bytes.subarray(3))];
    expect(out).to.deep.equal(['é€']);
  });

  it('refuses a line that grows past the bound', () => {
    const s = new LineSplitter(8);
    expect(s.push(Buffer.from('12345678\n'))).to.deep.equal(['12345678']);
    try {
      s.push(Buffer.from('123456789'));
      expect.fail('no error');
    } catch (err) {
      expect(isSluiceError(err) && err.errorName).to.equal('MESSAGE_TOO_LARGE');
      expect((err as Error).message).to.contain('line 2');
    }
  });

  it('splits key and value at the first separator; no separator means no key', () => {
    expect(lineToMessage('k:v:w', { keySeparator: ':' })).to.deep.equal({ key: 'k', value: 'v:w' });
    expect(lineToMessage('novalue', { keySeparator: ':' })).to.deep.equal({ key: null, value: 'novalue' });
    expect(lineToMessage('k::v', { keySeparator: '::' })).to.deep.equal({ key: 'k', value: 'v' });
    expect(lineToMessage('a:b', {})).to.deep.equal({ key: null, value: 'a:b' });
    expect(lineToMessage('v', { headers: { h: '1' }, partition: 2 })).to.deep.equal({ key: null, value: 'v', headers: { h: '1' }, partition: 2 });
  });

  it('parses --headers and refuses malformed pairs', () => {
    expect(parseHeaders('a=1,b=x=y,c=')).to.deep.equal({ a: '1', b: 'x=y', c: '' });
    expect(() => parseHeaders('a=1,b')).to.throw(/k=v/);
    expect(() => parseHeaders('=v')).to.throw(/k=v/);
  });

  it('tallies records per partition', () => {
    const t = new ProduceTally();
    for (const p of [2, 0, 2, 1]) t.add(p);
    expect(t.total).to.equal(4);
    expect(t.byPartition()).to.deep.equal([{ partition: 0, records: 1 }, { partition: 1, records: 1 }, { partition: 2, records: 2 }]);
    expect(t.summary('t')).to.equal('sent 4 record(s) to t (per partition 0: 1, 1: 1, 2: 2)');
    expect(new ProduceTally().summary('t')).to.equal('sent 0 record(s) to t');
  });
});
