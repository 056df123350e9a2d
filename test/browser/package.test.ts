// `npm pack` makes a package a user can install: the tarball holds the
// compiled library and the browser bundle (no tests, bench or build info),
// and, installed into a fresh directory (offline: the tarball, with this
// checkout's node_modules as its dependencies), both entries import.

import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

describe('npm pack', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('packs only the library and installs with both entries importable', () => {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { encoding: 'utf8' });
    const [info] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info!.files.map((f) => f.path);
    expect(files).to.include.members(['package.json', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/browser.d.ts', 'dist/browser/sluice.js']);
    expect(files.filter((f) => /^dist\/(test|bench)\/|tsbuildinfo/.test(f))).to.deep.equal([]);

    const app = join(dir, 'app');
    const pkg = join(app, 'node_modules', 'sluice');
    mkdirSync(pkg, { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, info!.filename), '-C', pkg, '--strip-components=1']);
    symlinkSync(resolve('node_modules'), join(pkg, 'node_modules'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
    writeFileSync(join(app, 'check.mjs'), [
      "const node = await import('sluice');",
      "const browser = await import('sluice/browser');",
      "for (const m of [node, browser]) for (const k of ['Client', 'Producer', 'Consumer', 'Admin']) if (typeof m[k] !== 'function') throw new Error(k + ' missing');",
      "console.log(JSON.stringify({ node: node.compressionCodecs.names(), browser: browser.compressionCodecs.names(), crc: node.crc32cImplementation() }));",
    ].join('\n'));
    const result = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8' })) as Record<string, unknown>;
    expect(result).to.deep.equal({ node: ['none', 'gzip', 'snappy', 'lz4', 'zstd'], browser: ['none', 'gzip'], crc: 'native' });
    expect(existsSync(join(pkg, 'dist', 'test'))).to.equal(false);
  });
});
