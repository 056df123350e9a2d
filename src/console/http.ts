// The web console's side of a node's HTTP listener (--http-listen): static
// files only. The page talks to the cluster itself, as a Sluice browser
// client over WebSocket; nothing here reads or changes cluster data.
//
//   GET /                      302 → /console/
//   GET /console/              the page (index.html, page-html.ts)
//   GET /console/style.css     its style sheet
//   GET /console/config.json   configuration, not data: the WebSocket bootstrap
//                              list, whether admin actions are on, this node's id,
//                              the SASL mechanisms a login form may offer
//   GET /console/<name>.js     the page's modules (src/console/page/, built by tsc)
//   GET /sluice.js             the browser bundle (dist/browser/sluice.js)
//
// Paths are matched against that fixed list; a module name must be
// [a-z0-9-]+.js(.map): no percent-decoding, no "..", no separators, so no
// request can name a file outside the two directories (a refused path is a
// 400; an unknown one a 404). Files are read per request — they are small,
// and a rebuilt bundle is served without a restart.

import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CONSOLE_CSS, CONSOLE_HTML } from './page-html.js';

export interface ConsoleConfig {
  /** This node's id, shown in the page's header. */
  readonly nodeId: number;
  /** WebSocket bootstrap URLs (ws://host:port), this node's broker listener first when it has one. */
  readonly bootstrap: readonly string[];
  /** Whether the produce form and admin actions are offered (--console-admin). */
  readonly admin: boolean;
  /**
   * The SASL logins this node's WebSocket listener takes that a person can
   * type (SCRAM, PLAIN), and whether it serves nothing without one
   * (ws.sasl.required); null on a node without a broker listener.
   */
  readonly sasl: { readonly mechanisms: readonly string[]; readonly required: boolean } | null;
}

export interface ConsoleOptions {
  /** Read per request: the bootstrap list follows the metadata image. */
  readonly config: () => ConsoleConfig;
  /** Where the page modules are; default: ./page/ beside this file (dist/src/console/page/). */
  readonly pageDir?: string;
  /** The browser bundle; default: dist/browser/sluice.js. */
  readonly bundleFile?: string;
}

export interface ConsoleReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The page's Content-Security-Policy: scripts only from this origin (its
 * modules and /sluice.js; WebAssembly for codecs the bundle may carry),
 * connections to this origin and to WebSocket brokers anywhere (the bootstrap
 * list may name other hosts), no framing.
 */
export const CONSOLE_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' ws: wss:; "
  + "style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const BUNDLE_FILE = fileURLToPath(new URL('../../browser/sluice.js', import.meta.url));
const MODULE_NAME = /^[a-z0-9][a-z0-9-]*\.js(\.map)?$/;
const JS = 'text/javascript; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

function text(status: number, body: string): ConsoleReply {
  return { status, contentType: TEXT, body };
}

async function file(path: string, contentType: string, missing: string): Promise<ConsoleReply> {
  try {
    return { status: 200, contentType, body: await fs.readFile(path) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return text(404, `${missing}\n`);
    throw err;
  }
}

/** Whether `path` (raw, without the query) is one of the console's. */
export function isConsolePath(path: string): boolean {
  return path === '/' || path === '/console' || path.startsWith('/console/') || path === '/sluice.js' || path === '/sluice.js.map';
}

/** The answer to GET `path` (raw, without the query), or a 4xx naming the problem. */
export async function serveConsole(opts: ConsoleOptions, path: string): Promise<ConsoleReply> {
  if (path.includes('..') || path.includes('%') || path.includes('\\') || path.includes('//')) return text(400, 'bad path\n');
  const bundle = opts.bundleFile ?? BUNDLE_FILE;
  switch (path) {
    case '/':
    case '/console':
      return { status: 302, contentType: TEXT, body: 'see /console/\n', headers: { location: '/console/' } };
    case '/console/':
    case '/console/index.html':
      return { status: 200, contentType: 'text/html; charset=utf-8', body: CONSOLE_HTML, headers: { 'content-security-policy': CONSOLE_CSP } };
    case '/console/style.css':
      return { status: 200, contentType: 'text/css; charset=utf-8', body: CONSOLE_CSS };
    case '/console/config.json':
      return { status: 200, contentType: 'application/json', body: JSON.stringify(opts.config()) };
    case '/sluice.js':
      return file(bundle, JS, 'the browser bundle is not built (make build writes dist/browser/sluice.js)');
    case '/sluice.js.map':
      return file(`${bundle}.map`, 'application/json', 'no source map for the browser bundle');
    default:
      break;
  }
  const name = path.slice('/console/'.length);
  if (!path.startsWith('/console/') || !MODULE_NAME.test(name)) return text(404, 'not found (the console is at /console/)\n');
  return file(`${opts.pageDir ?? PAGE_DIR}${name}`, name.endsWith('.map') ? 'application/json' : JS, `no console module ${name}`);
}
