// Shared helpers for the Raft disk tests: temp directories, deterministic
// entries, and a logger that records warnings so tests can see them.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EntryType, type Entry, type Snapshot } from '../../src/raft/types.js';
import type { Logger } from '../../src/util/logger.js';
import type { Rng } from '../../src/util/rng.js';

export function makeTempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-raft-disk-'));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** An entry whose data is derived from (index, term), `dataBytes` long. */
export function entry(index: number, term: number, dataBytes = 8, type = EntryType.Normal): Entry {
  const data = new Uint8Array(dataBytes);
  for (let i = 0; i < dataBytes; i++) data[i] = (index * 31 + term * 7 + i) & 0xff;
  return { index, term, type, data };
}

export function entries(from: number, to: number, term: number, dataBytes = 8): Entry[] {
  const out: Entry[] = [];
  for (let i = from; i <= to; i++) out.push(entry(i, term, dataBytes));
  return out;
}

/** An entry with random length and bytes. */
export function randomEntry(rng: Rng, index: number, term: number, dataBytesMax = 64): Entry {
  const data = new Uint8Array(rng.int(dataBytesMax + 1));
  for (let i = 0; i < data.length; i++) data[i] = rng.int(256);
  return { index, term, type: rng.int(3) as EntryType, data };
}

export function snapshot(index: number, term: number, dataBytes = 32): Snapshot {
  const data = new Uint8Array(dataBytes);
  for (let i = 0; i < dataBytes; i++) data[i] = (index + i) & 0xff;
  return { meta: { index, term, membership: { voters: [1, 2, 3], observers: [4] } }, data };
}

/** Entry fields as plain values, so chai's deep equality ignores Buffer vs Uint8Array. */
export function plain(list: readonly Entry[]): { index: number; term: number; type: EntryType; data: number[] }[] {
  return list.map((e) => ({ index: e.index, term: e.term, type: e.type, data: Array.from(e.data) }));
}

export function segmentFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort();
}

export interface LogLine {
  level: string;
  obj: object | string;
  msg?: string;
}

/** A Logger that keeps every line (for asserting that a warning was logged). */
export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];
  trace(obj: object | string, msg?: string): void {
    this.lines.push({ level: 'trace', obj, msg });
  }
  debug(obj: object | string, msg?: string): void {
    this.lines.push({ level: 'debug', obj, msg });
  }
  info(obj: object | string, msg?: string): void {
    this.lines.push({ level: 'info', obj, msg });
  }
  warn(obj: object | string, msg?: string): void {
    this.lines.push({ level: 'warn', obj, msg });
  }
  error(obj: object | string, msg?: string): void {
    this.lines.push({ level: 'error', obj, msg });
  }
  child(): Logger {
    return this;
  }
  warnings(): LogLine[] {
    return this.lines.filter((l) => l.level === 'warn');
  }
}
