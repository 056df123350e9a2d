import { expect } from 'chai';
import { cellText, idList, renderTable } from '../../src/cli/table.js';

describe('cli table', () => {
  it('pads columns to the widest cell, two spaces apart, the last column unpadded', () => {
    const t = renderTable(['ID', 'NAME', 'NOTE'], [[1, 'orders', 'ok'], [12, 'a', null]]);
    expect(t.split('\n')).to.deep.equal([
      'ID  NAME    NOTE',
      '1   orders  ok',
      '12  a       -',
    ]);
  });

  it('shows missing values as - and lists ids with commas', () => {
    expect([cellText(null), cellText(undefined), cellText(''), cellText(0), cellText(false)]).to.deep.equal(['-', '-', '-', '0', 'false']);
    expect(idList([])).to.equal('-');
    expect(idList([3, 1, 2])).to.equal('3,1,2');
  });

  it('refuses a row with the wrong number of cells', () => {
    expect(() => renderTable(['A', 'B'], [[1]])).to.throw(/1 cells for 2 columns/);
  });
});
