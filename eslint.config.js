// Lint rules. Beyond typescript-eslint's recommended set, the important part is
// the purity fence: the pure cores (Raft, and later the controller's decisions,
// ISR/HW rules and group membership) may not touch I/O, timers, wall-clock time
// or global randomness. Time and randomness are injected (src/util/clock.ts,
// src/util/rng.ts); the shells in other folders do the I/O.
import tseslint from 'typescript-eslint';

/** Folders whose code must stay deterministic and I/O-free. */
export const PURE_FOLDERS = [
  'src/raft/**/*.ts',
  'src/controller/**/*.ts',
  'src/replication/rules/**/*.ts',
  'src/groups/membership/**/*.ts',
  'src/groups/assignors.ts',
  'src/groups/consumer-protocol.ts',
];

/** Shell code inside otherwise pure folders: it wires the pure part to I/O. */
export const SHELL_FOLDERS = ['src/controller/service/**/*.ts'];

const ioModules = [
  'fs', 'fs/promises', 'net', 'dgram', 'http', 'https', 'http2', 'tls', 'child_process',
  'worker_threads', 'timers', 'timers/promises', 'ws', 'pino', 'os', 'cluster', 'readline',
];

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
    files: PURE_FOLDERS,
    ignores: SHELL_FOLDERS,
    rules: {
      'no-restricted-imports': ['error', {
        paths: ioModules.flatMap((m) => [
          { name: m, message: 'pure core: no I/O here; do it in the shell' },
          { name: `node:${m}`, message: 'pure core: no I/O here; do it in the shell' },
        ]),
      }],
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'pure core: time comes from tick()' },
        { name: 'setInterval', message: 'pure core: time comes from tick()' },
        { name: 'setImmediate', message: 'pure core: time comes from tick()' },
        { name: 'queueMicrotask', message: 'pure core: no scheduling' },
        { name: 'Date', message: 'pure core: use the injected Clock' },
        { name: 'performance', message: 'pure core: use the injected Clock' },
        { name: 'process', message: 'pure core: no process access' },
        { name: 'fetch', message: 'pure core: no network' },
        { name: 'WebSocket', message: 'pure core: no network' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Math', property: 'random', message: 'pure core: use the injected Rng' },
      ],
    },
  },
);
