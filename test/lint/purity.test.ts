// The purity fence is a lint rule; this test proves the rule bites, so a
// config change that silently disables it fails the build.
import { expect } from 'chai';
import { ruleIds } from './lint-kit.js';

const impure = [
  "import fs from 'node:fs';",
  "import { WebSocket } from 'ws';",
  "import { randomBytes } from 'node:crypto';",
  "import crypto from 'crypto';",
  'export const a = Date.now();',
  'export const b = Math.random();',
  'setTimeout(() => {}, 1);',
  'export const c = fs.constants.F_OK + String(WebSocket) + String(randomBytes) + String(crypto);',
  'export const d = globalThis.crypto.getRandomValues(new Uint8Array(4));',
].join('\n');

describe('lint purity fence', function () {
  this.timeout(60_000);

  it('rejects I/O, crypto, timers, Date, globalThis and Math.random in src/raft', async () => {
    const ids = await ruleIds('src/raft/example.ts', impure);
    expect(ids.filter((id) => id === 'no-restricted-imports')).to.have.length(4);
    expect(ids).to.include('no-restricted-globals');
    expect(ids).to.include('no-restricted-properties');
  });

  it('rejects the Web Crypto global and globalThis in a pure folder', async () => {
    const ids = await ruleIds('src/replication/rules/example.ts', 'export const r = crypto.getRandomValues(new Uint8Array(4));\nexport const g = globalThis;');
    expect(ids.filter((id) => id === 'no-restricted-globals')).to.have.length(2);
  });

  it('allows I/O and crypto in a shell folder (time still comes from the Clock)', async () => {
    const shellCode = impure.split('\n').filter((l) => !/Date\.now|Math\.random|setTimeout/.test(l)).join('\n');
    const ids = await ruleIds('src/raft-node/example.ts', shellCode);
    expect(ids.filter((id) => id.startsWith('no-restricted'))).to.deep.equal([]);
  });
});
