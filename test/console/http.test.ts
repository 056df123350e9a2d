// The console's static file handler (src/console/http.ts) on its own, with
// its two directories in a temp dir: what each path answers, and that no
// path reaches a file outside them. (console.test.ts checks the same through
// a real node's listener.)
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isConsolePath, serveConsole, type ConsoleOptions } from '../../src/console/http.js';
import { parseHttpListen, serverConfigFromFlags, type ServerFlags } from '../../src/server/config.js';
import { readServerConfigFile } from '../../src/server/config-file.js';

describe('console http handler', () => {
  let root: string;
  let opts: ConsoleOptions;

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-console-'));
    fs.mkdirSync(path.join(root, 'page'));
    fs.mkdirSync(path.join(root, 'browser'));
    fs.writeFileSync(path.join(root, 'page', 'app.js'), 'export {};\n');
    fs.writeFileSync(path.join(root, 'secret.js'), 'SECRET\n');
    opts = {
      pageDir: `${path.join(root, 'page')}/`,
      bundleFile: path.join(root, 'browser', 'sluice.js'),
      config: () => ({ nodeId: 7, bootstrap: ['ws://127.0.0.1:1'], admin: false, sasl: null }),
    };
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('serves the page, its modules, its config and the bundle; says when the bundle is not built', async () => {
    expect((await serveConsole(opts, '/')).headers).to.deep.equal({ location: '/console/' });
    const page = await serveConsole(opts, '/console/');
    expect(page.body).to.contain('/console/app.js');
    expect(page.headers?.['content-security-policy']).to.contain("script-src 'self'");
    expect(String((await serveConsole(opts, '/console/app.js')).body)).to.equal('export {};\n');
    expect(JSON.parse(String((await serveConsole(opts, '/console/config.json')).body))).to.deep.equal({ nodeId: 7, bootstrap: ['ws://127.0.0.1:1'], admin: false, sasl: null });
    const missing = await serveConsole(opts, '/sluice.js');
    expect([missing.status, String(missing.body)]).to.deep.equal([404, 'the browser bundle is not built (make build writes dist/browser/sluice.js)\n']);
    fs.writeFileSync(opts.bundleFile!, 'export const Client = 1;\n');
    const bundle = await serveConsole(opts, '/sluice.js');
    expect([bundle.status, bundle.contentType]).to.deep.equal([200, 'text/javascript; charset=utf-8']);
  });

  it('refuses paths that could leave its directories, and 404s what it does not have', async () => {
    for (const p of ['/console/../secret.js', '/console/..%2fsecret.js', '/console/%2e%2e/secret.js', '/console//secret.js', '/console/..\\secret.js']) {
      expect((await serveConsole(opts, p)).status, p).to.equal(400);
    }
    for (const p of ['/console/secret.js', '/console/App.js', '/console/app.ts', '/console/.hidden.js', '/console/sub/app.js']) {
      expect((await serveConsole(opts, p)).status, p).to.equal(404);
    }
    expect(isConsolePath('/metrics')).to.equal(false);
    expect(isConsolePath('/consolex')).to.equal(false);
    expect(isConsolePath('/console/x')).to.equal(true);
  });
});

describe('--http-listen, --metrics-listen and --console-admin', () => {
  const base: ServerFlags = {
    nodeId: 1, roles: 'controller', controllerListen: 'ws://127.0.0.1:9093', controllerQuorum: '1@127.0.0.1:9093', dataDir: 'data/node-1',
  };

  it('takes either name (the same address if both), and admin only with a listener', () => {
    expect(serverConfigFromFlags({ ...base, httpListen: 'http://127.0.0.1:9300' }).httpListen?.url).to.equal('http://127.0.0.1:9300');
    expect(serverConfigFromFlags({ ...base, metricsListen: 'http://127.0.0.1:9300' }).httpListen?.url).to.equal('http://127.0.0.1:9300');
    expect(serverConfigFromFlags({ ...base, httpListen: 'http://127.0.0.1:9300', metricsListen: 'http://127.0.0.1:9300' }).httpListen?.port).to.equal(9300);
    expect(() => serverConfigFromFlags({ ...base, httpListen: 'http://127.0.0.1:9300', metricsListen: 'http://127.0.0.1:9301' })).to.throw(/old name of --http-listen/);
    expect(() => serverConfigFromFlags({ ...base, httpListen: 'ws://127.0.0.1:9300' })).to.throw(/--http-listen must be http:\/\/host:port/);
    expect(serverConfigFromFlags({ ...base, httpListen: 'http://127.0.0.1:0' }).consoleAdmin).to.equal(false);
    expect(serverConfigFromFlags({ ...base, httpListen: 'http://127.0.0.1:0', consoleAdmin: true }).consoleAdmin).to.equal(true);
    expect(() => serverConfigFromFlags({ ...base, consoleAdmin: true })).to.throw(/--console-admin needs --http-listen/);
    expect(parseHttpListen('http://[::1]:0')).to.deep.include({ host: '::1', port: 0 });
  });

  it('reads http.listen, metrics.listen and console.admin.enable from a config file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-console-cfg-'));
    try {
      const file = path.join(dir, 'server.properties');
      fs.writeFileSync(file, 'http.listen=http://127.0.0.1:9300\nconsole.admin.enable=true\n');
      expect(readServerConfigFile(file)).to.deep.include({ httpListen: 'http://127.0.0.1:9300', consoleAdmin: true });
      fs.writeFileSync(file, 'metrics.listen=http://127.0.0.1:9300\n');
      expect(readServerConfigFile(file)).to.deep.include({ metricsListen: 'http://127.0.0.1:9300' });
      fs.writeFileSync(file, 'console.admin.enable=yes\n');
      expect(() => readServerConfigFile(file)).to.throw(/console.admin.enable must be true or false/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
