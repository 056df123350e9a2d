import { expect } from 'chai';
import fc from 'fast-check';
import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { crc32c, crc32cImplementation, crc32cJs } from '../../src/util/crc32c.js';
import '../../src/util/crc32c-native.js';

describe('crc32c', () => {
  for (const [name, fn] of [['native (installed by the Node entry)', crc32c], ['pure JS (the browser build)', crc32cJs]] as const) {
    describe(name, () => {
      it('matches the standard check value and RFC 3720 vectors', () => {
        expect(fn(Buffer.from('123456789'))).to.equal(0xe3069283);
        expect(fn(Buffer.alloc(32, 0))).to.equal(0x8a9136aa);
        expect(fn(Buffer.alloc(32, 0xff))).to.equal(0x62a8ab43);
      });

      it('can continue a running checksum', () => {
        const whole = Buffer.from('hello, sluice');
        expect(fn(whole.subarray(5), fn(whole.subarray(0, 5)))).to.equal(fn(whole));
      });
    });
  }

  it('the Node runtime uses the native implementation', () => {
    expect(crc32cImplementation()).to.equal('native');
  });

  it('pure JS agrees with the native module on any bytes, offsets and running values', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(20), fc.integer({ min: 0, max: 0xffffffff }), (bytes, skip, initial) => {
      const view = bytes.subarray(Math.min(skip, bytes.length));
      expect(crc32cJs(view, initial)).to.equal(nativeCrc32c(Buffer.from(view), initial) >>> 0);
    }), { numRuns: 500 });
  });
});
