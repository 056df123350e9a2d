// Lint rules. Beyond typescript-eslint's recommended set, three fences keep the
// architecture honest (test/lint/ proves each one bites on a bad sample):
//
// 1. The time fence, on all of src/: no wall-clock reads, timers or global
//    randomness (performance.now(), Date.now(), new Date() without arguments,
//    setTimeout/setInterval/setImmediate, Math.random(), node:timers,
//    node:perf_hooks). Time, timers and randomness are injected — a Clock, a
//    Scheduler and an Rng from src/util/ — so one simulated world can drive
//    every node's real code. Only TIME_SOURCES may touch the real ones.
// 2. The purity fence, on the pure cores (Raft, the controller's decisions,
//    ISR/HW rules, group membership): on top of the time fence, no I/O, no
//    process, no crypto, no globalThis — the shells in other folders do that.
// 3. The layering, on all of src/: a folder may import only folders in lower
//    LAYERS. A lower folder importing a higher one fails `make lint`.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------- time fence

/**
 * The only files that may read real time, arm real timers or draw global
 * randomness, each with why. Everything else takes a Clock, a Scheduler and an
 * Rng. The process entry points — src/server/server.ts (a node's
 * composition), src/cli/ (the command line) and the client's public
 * constructor — need no exemption: they pick SystemClock/SystemScheduler and a
 * seeded Rng from src/util/ and pass them down, so the real time still comes
 * from the files below.
 */
export const TIME_SOURCES = [
  // The one definition of real time and timers: SystemClock, SystemScheduler.
  'src/util/clock.ts',
  // The one definition of randomness: SeededRng (seeds come from the entry points).
  'src/util/rng.ts',
  // The web console's page is a browser program of its own, compiled apart
  // (tsconfig.console.json, rootDir src/console/page) so it cannot import
  // src/util/; this is its entry point, and its refresh loop runs on the
  // page's own timers. Nothing simulates it.
  'src/console/page/app.ts',
];

const TIME_GLOBALS = [
  { name: 'setTimeout', message: 'use the injected Scheduler (src/util/clock.ts)' },
  { name: 'setInterval', message: 'use the injected Scheduler (src/util/clock.ts)' },
  { name: 'setImmediate', message: 'use the injected Scheduler (src/util/clock.ts)' },
  { name: 'clearTimeout', message: 'use the cancel function the injected Scheduler returns' },
  { name: 'clearInterval', message: 'use the cancel function the injected Scheduler returns' },
  { name: 'clearImmediate', message: 'use the cancel function the injected Scheduler returns' },
  { name: 'performance', message: 'use the injected Clock (monotonicMs)' },
];

const TIME_PROPERTIES = [
  { object: 'Math', property: 'random', message: 'use the injected Rng (src/util/rng.ts)' },
  { object: 'Date', property: 'now', message: 'use the injected Clock (nowMs)' },
  { object: 'process', property: 'hrtime', message: 'use the injected Clock (monotonicMs)' },
  ...['setTimeout', 'setInterval', 'setImmediate', 'performance', 'Date'].flatMap((property) => [
    { object: 'globalThis', property, message: 'use the injected Clock/Scheduler (src/util/clock.ts)' },
    { object: 'global', property, message: 'use the injected Clock/Scheduler (src/util/clock.ts)' },
  ]),
];

const TIME_SYNTAX = [
  { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'new Date() reads the wall clock: use the injected Clock (new Date(clock.nowMs()))' },
  { selector: "CallExpression[callee.name='Date']", message: 'Date() reads the wall clock: use the injected Clock' },
];

const TIME_MODULES = ['timers', 'timers/promises', 'perf_hooks'];

const restrictedImports = (modules, message) => ({
  paths: modules.flatMap((m) => [{ name: m, message }, { name: `node:${m}`, message }]),
});

/** The time fence's rules. */
export const TIME_FENCE_RULES = {
  'no-restricted-imports': ['error', restrictedImports(TIME_MODULES, 'real timers: use the injected Scheduler (src/util/clock.ts)')],
  'no-restricted-globals': ['error', ...TIME_GLOBALS],
  'no-restricted-properties': ['error', ...TIME_PROPERTIES],
  'no-restricted-syntax': ['error', ...TIME_SYNTAX],
};

// -------------------------------------------------------------- purity fence

/** Folders whose code must stay deterministic and I/O-free. */
export const PURE_FOLDERS = [
  'src/raft/**/*.ts',
  'src/controller/**/*.ts',
  'src/replication/rules/**/*.ts',
  'src/groups/membership/**/*.ts',
  'src/groups/assignors.ts',
  'src/groups/consumer-protocol.ts',
  'src/transactions/state-machine.ts',
];

/** Shell code inside otherwise pure folders: it wires the pure part to I/O. */
export const SHELL_FOLDERS = ['src/controller/service/**/*.ts'];

const ioModules = [
  'fs', 'fs/promises', 'net', 'dgram', 'http', 'https', 'http2', 'tls', 'child_process',
  'worker_threads', 'ws', 'pino', 'os', 'cluster', 'readline', 'crypto',
  ...TIME_MODULES,
];

const PURE_GLOBALS = [
  { name: 'queueMicrotask', message: 'pure core: no scheduling' },
  { name: 'Date', message: 'pure core: use the injected Clock' },
  { name: 'process', message: 'pure core: no process access' },
  { name: 'fetch', message: 'pure core: no network' },
  { name: 'WebSocket', message: 'pure core: no network' },
  { name: 'crypto', message: 'pure core: no crypto; randomness comes from the injected Rng' },
  { name: 'globalThis', message: 'pure core: no global state; inject what you need' },
  { name: 'global', message: 'pure core: no global state; inject what you need' },
];

// ------------------------------------------------------------------ layering

/**
 * The intended architecture, lowest layer first. A file may import files of
 * its own module and of modules in LOWER layers only; modules in one layer are
 * independent of each other. A module is a set of paths under the project root
 * (a folder ends with '/'); the longest matching path names a file's module.
 * Every file under src/ must belong to one (a new folder gets a place here).
 */
export const LAYERS = [
  [{ name: 'util', paths: ['src/util/', 'src/version.ts'] }],
  [
    { name: 'record', paths: ['src/record/'] },
    { name: 'raft', paths: ['src/raft/'] },
    // Principals, the ACL vocabulary and its index, SASL mechanisms: the
    // words every layer above speaks (the wire, the image, the listeners).
    { name: 'security', paths: ['src/security/'] },
  ],
  [
    // What a Node.js process loads for its effects (native CRC32C, codecs, Buffer bytes).
    { name: 'node-runtime', paths: ['src/node.ts'] },
    { name: 'protocol', paths: ['src/protocol/'] },
  ],
  [
    { name: 'storage', paths: ['src/storage/'] },
    { name: 'net', paths: ['src/net/'] },
    // The consumer protocol's bytes and the partition assignors are shared by
    // the client and the group coordinator (in Kafka they live in clients):
    // pure, portable, below both.
    { name: 'consumer-protocol', paths: ['src/groups/consumer-protocol.ts', 'src/groups/assignors.ts'] },
  ],
  [
    // The public client: portable, and below the broker, whose replica
    // fetchers talk to leaders through its BrokerConnection (as Kafka's
    // brokers use its clients' NetworkClient). It never imports server code.
    { name: 'client', paths: ['src/client/'] },
    { name: 'raft-node', paths: ['src/raft-node/'] },
  ],
  [
    // The package's public entries (Node and browser): the client plus codecs.
    { name: 'client-entries', paths: ['src/index.ts', 'src/browser.ts'] },
    { name: 'metadata', paths: ['src/metadata/'] },
  ],
  [
    // The broker's quota enforcement reads the quotas of the metadata image.
    { name: 'quotas', paths: ['src/security/quota-manager.ts'] },
    { name: 'controller', paths: ['src/controller/'] },
    { name: 'replication', paths: ['src/replication/'] },
  ],
  [{ name: 'groups', paths: ['src/groups/'] }],
  // The transaction coordinator: its placement is the group coordinator's,
  // and AddOffsetsToTxn names a group's __consumer_offsets partition.
  [{ name: 'transactions', paths: ['src/transactions/'] }],
  // The console's HTTP handler (served by the node) and its page (a browser
  // program on the public client; it reads the client's declarations in dist/).
  [{ name: 'console', paths: ['src/console/'] }],
  [{ name: 'server', paths: ['src/server/'] }],
  [{ name: 'cli', paths: ['src/cli/'] }],
];

const MODULES = LAYERS.flatMap((layer, rank) => layer.map((m) => ({ ...m, rank })));

/** The module a project-relative posix path belongs to, or undefined. */
export function moduleOf(relPath) {
  let best;
  for (const m of MODULES) {
    for (const p of m.paths) {
      const hit = p.endsWith('/') ? relPath.startsWith(p) : relPath === p;
      if (hit && (best === undefined || p.length > best.len)) best = { m, len: p.length };
    }
  }
  return best?.m;
}

/** 'src/a/b.ts' for an import source seen from `fromFile`; compiled paths (dist/src/x.js) map back to their source. */
function targetOf(fromFile, source) {
  let rel = path.relative(ROOT, path.resolve(path.dirname(fromFile), source)).split(path.sep).join('/');
  if (rel.startsWith('dist/src/')) rel = rel.slice('dist/'.length);
  return rel.replace(/\.d\.ts$/, '.ts').replace(/\.js$/, '.ts');
}

const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'imports point down the layers of eslint.config.js (LAYERS)' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const rel = path.relative(ROOT, file).split(path.sep).join('/');
    if (!rel.startsWith('src/')) return {};
    const from = moduleOf(rel);
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = targetOf(file, source);
      if (!target.startsWith('src/')) return;
      const to = moduleOf(target);
      if (from === undefined || to === undefined || to === from || to.rank < from.rank) return;
      const how = to.rank === from.rank ? 'is its peer in the same layer' : 'sits in a higher layer';
      context.report({
        node,
        message: `${from.name} must not import ${to.name} (${target}): ${to.name} ${how} (LAYERS in eslint.config.js)`,
      });
    };
    return {
      Program(node) {
        if (from === undefined) context.report({ node, message: `${rel} belongs to no module of LAYERS in eslint.config.js: give its folder a layer` });
      },
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      TSImportType: (node) => check(node, node.argument?.literal?.value ?? node.argument?.value),
    };
  },
};

const sluicePlugin = { rules: { layers: layersRule } };

// -------------------------------------------------------------------- config

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '.tmp/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { sluice: sluicePlugin },
    rules: { 'sluice/layers': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: TIME_SOURCES,
    rules: TIME_FENCE_RULES,
  },
  {
    files: PURE_FOLDERS,
    ignores: SHELL_FOLDERS,
    rules: {
      'no-restricted-imports': ['error', restrictedImports(ioModules, 'pure core: no I/O here; do it in the shell')],
      'no-restricted-globals': ['error', ...TIME_GLOBALS.map((g) => ({ ...g, message: `pure core: ${g.message}` })), ...PURE_GLOBALS],
      'no-restricted-properties': ['error', ...TIME_PROPERTIES.map((p) => ({ ...p, message: `pure core: ${p.message}` }))],
      'no-restricted-syntax': ['error', ...TIME_SYNTAX],
    },
  },
);
