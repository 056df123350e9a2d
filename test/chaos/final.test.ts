// The convergence evidence of a chaos run: a replica's digest covers its log
// bytes below the high watermark exactly — equal logs give equal digests, a
// changed byte below the high watermark or a shorter log changes it, and what
// lies at or above the high watermark does not count.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { replicaDigest } from './final.js';
import { asBuffer } from '../../src/util/node-bytes.js';

function batch(values: readonly string[]): Buffer {
  return asBuffer(encodeRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v), timestamp: 1_700_000_000_000 })) }));
}

/** A replica log holding `values` as batches of two records, appended in leader epoch 3. */
function replica(dir: string, values: readonly string[]): void {
  const log = PartitionLog.open({ dir });
  for (let i = 0; i < values.length; i += 2) log.append(batch(values.slice(i, i + 2)), { leaderEpoch: 3 });
  log.close();
}

describe('chaos final state: replica digests', () => {
  let root: string;
  const values = ['a', 'b', 'c', 'd', 'e', 'f'];

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chaos-final-'));
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('are equal for equal logs and ignore what lies at or above the high watermark', () => {
    replica(path.join(root, 'r1'), values);
    replica(path.join(root, 'r2'), [...values.slice(0, 4), 'x', 'y']);
    expect(replicaDigest(path.join(root, 'r1'), 0, 4)).to.equal(replicaDigest(path.join(root, 'r2'), 0, 4));
    expect(replicaDigest(path.join(root, 'r1'), 0, 6)).to.not.equal(replicaDigest(path.join(root, 'r2'), 0, 6));
  });

  it('change when a byte below the high watermark differs', () => {
    replica(path.join(root, 'r1'), values);
    replica(path.join(root, 'r2'), values);
    const segment = path.join(root, 'r2', fs.readdirSync(path.join(root, 'r2')).find((f) => f.endsWith('.log'))!);
    const bytes = fs.readFileSync(segment);
    const last = bytes.length - 1; // inside the last batch, below a high watermark of 6
    bytes.writeUInt8(bytes.readUInt8(last) ^ 0x01, last);
    fs.writeFileSync(segment, bytes);
    expect(replicaDigest(path.join(root, 'r1'), 0, 6)).to.not.equal(replicaDigest(path.join(root, 'r2'), 0, 6));
  });

  it('change when a replica holds less than the high watermark, and are null for a replica without the partition', () => {
    replica(path.join(root, 'r1'), values);
    replica(path.join(root, 'r2'), values.slice(0, 4));
    expect(replicaDigest(path.join(root, 'r1'), 0, 6)).to.not.equal(replicaDigest(path.join(root, 'r2'), 0, 6));
    expect(replicaDigest(path.join(root, 'missing'), 0, 6)).to.equal(null);
  });
});
