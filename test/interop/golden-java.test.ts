// The golden Kafka frames under test/protocol/kafka/fixtures, checked once by
// Kafka's own generated message classes (kafka-clients 4.x):
// test/interop/java/.../GoldenCheck.java decodes each at its version,
// expects every byte consumed and re-serializes it to the same bytes. A
// version the Java classes no longer read (KIP-896 removed some) is skipped
// by name; the test fails if any fixture disagrees, or if none was checked.

import path from 'node:path';
import { expect } from 'chai';
import { CACHE_DIR, REPO_ROOT, jsonLines, runTool, toolOrSkip } from './kafka-kit.js';

describe('interop: golden Kafka frames against Kafka\'s own message classes', function () {
  this.timeout(120_000);

  it('every fixture decodes and re-serializes byte for byte with kafka-clients', async function () {
    const java = toolOrSkip(this, 'java');
    const classes = path.join(CACHE_DIR, 'java/classes');
    const cp = `${path.join(CACHE_DIR, 'java/lib')}/*${path.delimiter}${classes}`;
    const run = await runTool({ name: 'golden-check', argv: [java.argv[0]!, '-cp', cp, 'sluice.interop.GoldenCheck'] }, [path.join(REPO_ROOT, 'test/protocol/kafka/fixtures')], { timeoutMs: 90_000 });
    const results = jsonLines(run.stdout) as Array<{ file: string; ok: boolean; skipped?: string; error?: string }>;
    const failed = results.filter((r) => !r.ok).map((r) => `${r.file}: ${r.error ?? ''}`);
    const checked = results.filter((r) => r.ok && r.skipped === undefined);
    const skipped = results.filter((r) => r.skipped !== undefined).map((r) => r.file);
    console.log(`      ${checked.length} fixtures checked by Kafka's classes; ${skipped.length} skipped (versions they no longer read: ${skipped.join(', ')})`);
    expect(failed).to.deep.equal([]);
    expect(checked.length).to.be.greaterThan(290);
  });
});
