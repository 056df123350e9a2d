// Model-based property test: random sequences of append / read / truncate /
// roll / reopen (clean or crash) / timestamp lookups run against a
// PartitionLog and against a plain list of batches; after every step the log
// must hold exactly the model's bytes. Seeded, so a failure replays.

import { expect } from 'chai';
import fc from 'fast-check';
import type { LogConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualClock } from '../../src/util/clock.js';
import { batchesIn, makeBatch, readAllBytes, removeDir, tempDir } from './log-test-helpers.js';

type Command =
  | { kind: 'append'; records: number; valueBytes: number; timestamp: number; newEpoch: boolean }
  | { kind: 'read'; at: number; maxBytes: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'roll' }
  | { kind: 'reopen'; clean: boolean; useRecoveryPoint: boolean }
  | { kind: 'timestamp'; timestamp: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), records: fc.integer({ min: 1, max: 5 }), valueBytes: fc.integer({ min: 0, max: 90 }), timestamp: fc.integer({ min: 0, max: 2000 }), newEpoch: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), maxBytes: fc.integer({ min: 1, max: 600 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('roll' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const), clean: fc.boolean(), useRecoveryPoint: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('timestamp' as const), timestamp: fc.integer({ min: 0, max: 2100 }) }) },
);

const CONFIG: Partial<LogConfig> = { segmentBytes: 600, indexIntervalBytes: 120 };
/** Checked after every step (cheap, and catches stale time indexes and max timestamps). */
const PROBE_TIMESTAMPS = [0, 400, 800, 1200, 1600, 1990];

interface ModelBatch {
  bytes: Buffer;
  base: number;
  last: number;
  maxTimestamp: number;
  epoch: number;
}

class Model {
  batches: ModelBatch[] = [];
  epoch = 0;
  get end(): number {
    return this.batches.length === 0 ? 0 : this.batches[this.batches.length - 1]!.last + 1;
  }
  offsetForTimestamp(timestamp: number): number | null {
    return this.batches.find((b) => b.maxTimestamp >= timestamp)?.base ?? null;
  }
  epochEntries(): { epoch: number; startOffset: number }[] {
    const out: { epoch: number; startOffset: number }[] = [];
    for (const b of this.batches) if (out.length === 0 || b.epoch > out[out.length - 1]!.epoch) out.push({ epoch: b.epoch, startOffset: b.base });
    return out;
  }
}

function runCommands(commands: Command[]): void {
  const dir = tempDir('sluice-prop-');
  const clock = new ManualClock();
  const open = (recoveryPoint = 0): PartitionLog => PartitionLog.open({ dir, clock, config: CONFIG, recoveryPoint });
  let log = open();
  const model = new Model();
  try {
    for (const [step, cmd] of commands.entries()) {
      log = apply(log, model, cmd, open);
      const where = `step ${step} ${JSON.stringify(cmd)}`;
      expect(log.logEndOffset, where).to.equal(model.end);
      expect(readAllBytes(log, 250).equals(Buffer.concat(model.batches.map((b) => b.bytes))), where).to.equal(true);
      expect(log.epochEntries(), where).to.deep.equal(model.epochEntries());
      for (const t of PROBE_TIMESTAMPS) expect(log.offsetForTimestamp(t), `${where}: offsetForTimestamp(${t})`).to.equal(model.offsetForTimestamp(t));
    }
  } finally {
    if (!log.isClosed) log.closeForDelete();
    removeDir(dir);
  }
}

function apply(log: PartitionLog, model: Model, cmd: Command, open: (rp?: number) => PartitionLog): PartitionLog {
  switch (cmd.kind) {
    case 'append': {
      if (cmd.newEpoch) model.epoch++;
      const batch = makeBatch({ records: cmd.records, valueBytes: cmd.valueBytes, timestamp: cmd.timestamp, fill: model.batches.length });
      const info = log.append(batch, { leaderEpoch: model.epoch });
      const facts = batchesIn(batch)[0]!;
      expect(info.baseOffset).to.equal(model.end);
      model.batches.push({ bytes: Buffer.from(batch), base: facts.baseOffset, last: facts.lastOffset, maxTimestamp: facts.maxTimestamp, epoch: model.epoch });
      return log;
    }
    case 'read': {
      const offset = Math.min(model.end, Math.floor(cmd.at * (model.end + 1)));
      const got = log.read(offset, cmd.maxBytes);
      const expected = expectedRead(model, offset, cmd.maxBytes);
      const n = batchesIn(got.records).length;
      const where = `read(${offset}, ${cmd.maxBytes})`;
      expect(n > 0, where).to.equal(expected.length > 0);
      expect(got.records.equals(Buffer.concat(expected.slice(0, n).map((b) => b.bytes))), where).to.equal(true);
      // A read serves one segment, so it may stop early only where the next segment begins.
      if (n < expected.length) expect(log.segmentInfos().map((s) => s.baseOffset), where).to.include(expected[n]!.base);
      return log;
    }
    case 'truncate': {
      const offset = Math.floor(cmd.at * (model.end + 1));
      model.batches = model.batches.filter((b) => b.last < offset);
      expect(log.truncateTo(offset)).to.equal(model.end);
      return log;
    }
    case 'roll':
      log.roll();
      return log;
    case 'reopen': {
      const recoveryPoint = cmd.useRecoveryPoint ? log.recoveryPoint : 0;
      if (cmd.clean) log.close();
      else log.closeForDelete();
      return open(recoveryPoint);
    }
    case 'timestamp':
      expect(log.offsetForTimestamp(cmd.timestamp), `offsetForTimestamp(${cmd.timestamp})`).to.equal(model.offsetForTimestamp(cmd.timestamp));
      return log;
  }
}

/** Whole batches from the one holding `offset`, as many as fit in maxBytes but at least one. */
function expectedRead(model: Model, offset: number, maxBytes: number): ModelBatch[] {
  const from = model.batches.findIndex((b) => b.last >= offset);
  if (from < 0) return [];
  const out = [model.batches[from]!];
  let size = out[0]!.bytes.length;
  for (let i = from + 1; i < model.batches.length && size + model.batches[i]!.bytes.length <= maxBytes; i++) {
    out.push(model.batches[i]!);
    size += model.batches[i]!.bytes.length;
  }
  return out;
}

describe('PartitionLog against an in-memory model (property)', () => {
  it('agrees on every step of random append/read/truncate/roll/reopen sequences', () => {
    fc.assert(fc.property(fc.array(commandArb, { minLength: 1, maxLength: 40 }), (commands) => runCommands(commands)), {
      seed: 20_240_611,
      numRuns: 100,
    });
  });
});
