// Bundles the browser entry (dist/src/browser.js, from tsc) into one ESM
// file, dist/browser/sluice.js, with esbuild, and prints its size raw and
// gzipped. `make build` runs it after tsc. Fails if the bundle would pull in
// anything from Node (esbuild cannot resolve node: modules for the browser
// platform, and none is marked external).
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';

const outfile = 'dist/browser/sluice.js';
await build({
  entryPoints: ['dist/src/browser.js'],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  outfile,
  logLevel: 'warning',
});
const bytes = readFileSync(outfile);
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`${outfile}: ${kb(bytes.length)} raw, ${kb(gzipSync(bytes, { level: 9 }).length)} gzipped`);
