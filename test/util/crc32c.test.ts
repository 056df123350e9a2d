import { expect } from 'chai';
import { crc32c } from '../../src/util/crc32c.js';

describe('crc32c', () => {
  it('matches the standard check value and RFC 3720 vectors', () => {
    expect(crc32c(Buffer.from('123456789'))).to.equal(0xe3069283);
    expect(crc32c(Buffer.alloc(32, 0))).to.equal(0x8a9136aa);
    expect(crc32c(Buffer.alloc(32, 0xff))).to.equal(0x62a8ab43);
  });

  it('can continue a running checksum', () => {
    const whole = Buffer.from('hello, sluice');
    expect(crc32c(whole.subarray(5), crc32c(whole.subarray(0, 5)))).to.equal(crc32c(whole));
  });
});
