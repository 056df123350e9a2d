import { expect } from 'chai';
import { chromiumSkipReason, launchChromium } from './chromium.js';

describe('headless Chromium (Debian package, playwright-core)', function () {
  this.timeout(60_000);

  it('starts, runs a script and closes', async function () {
    const reason = chromiumSkipReason();
    if (reason) {
      console.log(`      ${reason}`);
      this.skip();
    }
    const chromium = await launchChromium();
    try {
      const page = await chromium.context.newPage();
      await page.setContent('<p id="x">hello</p>');
      expect(await page.textContent('#x')).to.equal('hello');
      expect(await page.evaluate(() => typeof WebSocket)).to.equal('function');
    } finally {
      await chromium.close();
    }
  });
});
