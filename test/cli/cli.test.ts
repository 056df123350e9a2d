import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { VERSION } from '../../src/version.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, '../../src/cli/main.js');

function sluice(...args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 15_000 });
}

describe('sluice command', () => {
  it('prints its version', () => {
    const r = sluice('--version');
    expect(r.status).to.equal(0);
    expect(r.stdout.trim()).to.equal(VERSION);
  });

  it('prints help', () => {
    const r = sluice('--help');
    expect(r.status).to.equal(0);
    expect(r.stdout).to.contain('sluice <command>');
  });

  it('rejects unknown commands and flags with usage and exit 2', () => {
    const r = sluice('no-such-command');
    expect(r.status).to.equal(2);
    expect(r.stderr).to.match(/sluice: /);
    const f = sluice('--no-such-flag');
    expect(f.status).to.equal(2);
  });
});
