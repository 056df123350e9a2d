// The time fence and the layering are lint rules (eslint.config.js); these
// tests prove they bite on bad samples and pass good ones, and that the
// config's lists stay true to the tree, so a config change that silently
// disables a fence, or an allow-list entry gone stale, fails the build.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { config, findings, root, ruleIds, sourceFiles } from './lint-kit.js';

const TIME_RULES = ['no-restricted-globals', 'no-restricted-properties', 'no-restricted-syntax', 'no-restricted-imports'];
const timeProblems = async (file: string, text: string) => (await ruleIds(file, text)).filter((id) => TIME_RULES.includes(id));

describe('lint time fence (all of src/)', function () {
  this.timeout(60_000);

  const samples: Array<[string, string]> = [
    ['performance.now()', 'export const t = performance.now();'],
    ['Date.now()', 'export const t = Date.now();'],
    ['new Date() reading the clock', 'export const t = new Date().getTime();'],
    ['Date() reading the clock', 'export const t = Date();'],
    ['setTimeout', 'setTimeout(() => undefined, 10);'],
    ['setInterval', 'export const i = setInterval(() => undefined, 10);'],
    ['setImmediate', 'setImmediate(() => undefined);'],
    ['globalThis.setTimeout', 'globalThis.setTimeout(() => undefined, 10);'],
    ['Math.random()', 'export const r = Math.random();'],
    ['process.hrtime', 'export const h = process.hrtime.bigint();'],
    ['node:timers/promises', "import { setTimeout as sleep } from 'node:timers/promises';\nexport const s = sleep;"],
    ['perf_hooks', "import { performance as p } from 'perf_hooks';\nexport const n = p;"],
  ];
  for (const [what, text] of samples) {
    it(`rejects ${what} in a shell folder (src/storage)`, async () => {
      expect(await timeProblems('src/storage/example.ts', text)).to.have.length.greaterThan(0);
    });
  }

  it('rejects them in every lane\'s folders, not only the pure cores', async () => {
    for (const dir of ['server', 'cli', 'metadata', 'security', 'net', 'replication', 'groups', 'client', 'raft-node']) {
      expect(await timeProblems(`src/${dir}/example.ts`, 'export const t = Date.now() + Math.random();'), dir).to.have.length(2);
    }
  });

  it('allows formatting a given time and an injected clock', async () => {
    const ok = [
      "import type { Clock, Scheduler } from '../util/clock.js';",
      'export const iso = (ms: number) => new Date(ms).toISOString();',
      'export const later = (c: Clock, s: Scheduler) => s.schedule(10, () => c.nowMs());',
      'export const t: ReturnType<typeof setTimeout> | undefined = undefined;',
    ].join('\n');
    expect(await ruleIds('src/storage/example.ts', ok)).to.deep.equal([]);
  });

  it('lets the time sources touch the real clock', async () => {
    expect(await timeProblems('src/util/clock.ts', 'export const t = Date.now() + performance.now();\nsetTimeout(() => undefined, 1);')).to.deep.equal([]);
  });

  it('names time sources and pending files that exist, none twice', async () => {
    const { TIME_SOURCES, PENDING_INJECTION } = await config();
    for (const f of [...TIME_SOURCES, ...PENDING_INJECTION]) expect(fs.existsSync(path.join(root, f)), f).to.equal(true);
    const all = [...TIME_SOURCES, ...PENDING_INJECTION];
    expect(new Set(all).size).to.equal(all.length);
  });

  // PENDING_INJECTION only shrinks: a file that no longer reads real time
  // must leave the list, or a regression in it would go unseen.
  it('lists in PENDING_INJECTION only files that still break the fence', async () => {
    const { PENDING_INJECTION, TIME_FENCE_RULES } = await config();
    const strict = new ESLint({ cwd: root, overrideConfig: { files: PENDING_INJECTION, rules: TIME_FENCE_RULES } });
    const results = await strict.lintFiles(PENDING_INJECTION.map((f) => path.join(root, f)));
    const clean = results
      .filter((r) => !r.messages.some((m) => TIME_RULES.includes(m.ruleId ?? '')))
      .map((r) => path.relative(root, r.filePath));
    expect(clean, 'these files pass the time fence now: delete them from PENDING_INJECTION in eslint.config.js').to.deep.equal([]);
  });
});

describe('lint layering (LAYERS)', function () {
  this.timeout(60_000);
  const layerProblems = async (file: string, text: string) => (await findings(file, text)).filter((f) => f.ruleId === 'sluice/layers');

  it('rejects a lower folder importing a higher one', async () => {
    const bad: Array<[string, string]> = [
      ['src/storage/example.ts', "import { Partition } from '../replication/partition.js';\nexport const p = Partition;"],
      ['src/client/example.ts', "import type { BrokerOptions } from '../server/broker.js';\nexport type B = BrokerOptions;"],
      ['src/metadata/example.ts', "export { QuorumController } from '../controller/service/quorum-controller.js';"],
      ['src/util/example.ts', "export * from '../record/record-batch.js';"],
      ['src/raft/example.ts', "export type T = import('../raft-node/node.js').RaftNode;"],
      ['src/protocol/example.ts', "export const m = () => import('../net/ws-server.js');"],
    ];
    for (const [file, text] of bad) expect((await layerProblems(file, text)).length, `${file}: ${text}`).to.equal(1);
  });

  it('rejects an import between two modules of one layer', async () => {
    const [f] = await layerProblems('src/raft/example.ts', "import { crc32c } from '../record/crc.js';\nexport const c = crc32c;");
    expect(f?.message).to.match(/raft must not import record .* peer/);
  });

  it('allows imports down the layers and within a module', async () => {
    const ok = [
      "import { Errors } from '../util/errors.js';",
      "import type { PartitionLog } from '../storage/partition-log.js';",
      "import type { MetadataImage } from '../metadata/image.js';",
      "import { BrokerConnection } from '../client/broker-connection.js';",
      "import { Partition } from './partition.js';",
      "import { WebSocket } from 'ws';",
      'export const all = [Errors, BrokerConnection, Partition, WebSocket];',
      'export type T = PartitionLog | MetadataImage;',
    ].join('\n');
    expect(await layerProblems('src/replication/example.ts', ok)).to.deep.equal([]);
  });

  it('maps the console page\'s dist/ imports back to their module', async () => {
    expect(await layerProblems('src/console/page/example.ts', "import type { Client } from '../../../dist/src/client/index.js';\nexport type C = Client;")).to.deep.equal([]);
    expect(await layerProblems('src/client/example.ts', "import type { X } from '../../dist/src/server/broker.js';\nexport type Y = X;")).to.have.length(1);
  });

  it('rejects a file in no module (a new folder needs a layer)', async () => {
    const [f] = await layerProblems('src/txn/coordinator.ts', 'export const x = 1;');
    expect(f?.message).to.match(/belongs to no module/);
  });

  it('gives every source file a module, and every module a path that exists', async () => {
    const { LAYERS, moduleOf } = await config();
    expect(sourceFiles().filter((f) => moduleOf(f) === undefined)).to.deep.equal([]);
    for (const m of LAYERS.flat()) for (const p of m.paths) expect(fs.existsSync(path.join(root, p)), `${m.name}: ${p}`).to.equal(true);
  });
});
