// The HTTP listener of one node (node:http, or node:https with the node's TLS
// identity for --http-listen https://; its old name --metrics-listen still works):
//   GET /metrics  Prometheus text exposition of the node's registry;
//   GET /healthz  200 while the process runs (liveness);
//   GET /readyz   200 once the node is ready, else 503 with a one-line reason;
//   GET /, /console/..., /sluice.js  the web console's static files
//                 (src/console/http.ts), when a console is given.
// Anything else is 404; methods other than GET/HEAD are 405. listen()
// resolves once bound or rejects with a clear message (port in use) — never
// an unhandled 'error' event. The listener only reads node state.
//
// Readiness (readiness() is pure, for tests):
//   - every node: the metadata quorum has a leader and this node applied the
//     metadata log up to the commit index it knows;
//   - with the broker role: the broker is running (registered, and unfenced
//     by the controller once its metadata caught up with its registration).

import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../util/logger.js';
import type { NodeMetrics } from './metrics.js';
import { isConsolePath, serveConsole, type ConsoleOptions } from '../console/http.js';
import type { TlsContext } from '../net/tls.js';

export interface ReadinessView {
  /** Quorum leader id as this node knows it (0: none). */
  readonly leader: number;
  readonly commit: number;
  readonly applied: number;
  /** The broker lifecycle state, for nodes with the broker role. */
  readonly brokerState?: string;
}

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

const NO_LEADER = 0;

export function readiness(v: ReadinessView): Readiness {
  if (v.leader === NO_LEADER) return { ready: false, reason: 'the metadata quorum has no leader' };
  if (v.applied < v.commit) return { ready: false, reason: `metadata applied to ${v.applied}, behind the commit index ${v.commit}` };
  if (v.brokerState !== undefined && v.brokerState !== 'running') return { ready: false, reason: `the broker is ${v.brokerState}, not running` };
  return { ready: true };
}

export interface MetricsServerOptions {
  readonly host: string;
  readonly port: number;
  readonly metrics: NodeMetrics;
  readonly readiness: () => Readiness;
  readonly logger: Logger;
  /** The web console's files and config; without it, console paths are 404. */
  readonly console?: ConsoleOptions;
  /** Present: serve HTTPS with the node's TLS identity (--http-listen https://), reloaded with it. */
  readonly tls?: TlsContext;
}

export interface MetricsServer {
  /** http://host:port, with the bound port (useful with port 0). */
  readonly url: string;
  close(): Promise<void>;
}

function reply(res: http.ServerResponse, status: number, body: string | Uint8Array, contentType = 'text/plain; charset=utf-8', extra: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...extra });
  res.end(body);
}

function routeConsole(opts: MetricsServerOptions, console: ConsoleOptions, path: string, res: http.ServerResponse): void {
  serveConsole(console, path).then(
    (r) => reply(res, r.status, r.body, r.contentType, r.headers ?? {}),
    (err: Error) => {
      opts.logger.warn({ err: err.message, path }, 'console file failed');
      reply(res, 500, `console file failed: ${err.message}\n`);
    },
  );
}

function route(opts: MetricsServerOptions, req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'method not allowed\n');
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  switch (path) {
    case '/healthz':
      return reply(res, 200, 'ok\n');
    case '/readyz': {
      const r = opts.readiness();
      return r.ready ? reply(res, 200, 'ready\n') : reply(res, 503, `not ready: ${r.reason}\n`);
    }
    case '/metrics':
      opts.metrics.text().then(
        (text) => reply(res, 200, text, opts.metrics.contentType),
        (err: Error) => {
          opts.logger.warn({ err: err.message }, 'metrics collection failed');
          reply(res, 500, `metrics collection failed: ${err.message}\n`);
        },
      );
      return;
    default:
      if (opts.console && isConsolePath(path)) return routeConsole(opts, opts.console, path, res);
      return reply(res, 404, `not found (try /metrics, /healthz, /readyz${opts.console ? ', /console/' : ''})\n`);
  }
}

export function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => route(opts, req, res);
  const secure = opts.tls ? https.createServer(opts.tls.serverOptions(), handler) : null;
  const detachTls = secure && opts.tls ? opts.tls.attach(secure, 'http') : undefined;
  const server: http.Server = secure ?? http.createServer(handler);
  // Scrapers reconnect often; idle keep-alive sockets must not hold close() up.
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(new Error(err.code === 'EADDRINUSE'
        ? `http address ${opts.host}:${opts.port} is already in use`
        : `cannot listen for http on ${opts.host}:${opts.port}: ${err.message}`));
    };
    server.once('error', onError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onError);
      server.on('error', (err) => opts.logger.error({ err: err.message }, 'http listener error'));
      const port = (server.address() as AddressInfo).port;
      const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
      resolve({
        url: `${opts.tls ? 'https' : 'http'}://${host}:${port}`,
        close: () => new Promise<void>((done) => {
          detachTls?.();
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}
