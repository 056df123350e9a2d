// History files of chaos runs: one JSON HistoryEntry per line, appended while
// the run goes (HistoryWriter), read back for the checker (readHistory), and a
// checker result put into a few lines for a human (summarize).
//
// A run may die mid-write (the harness is killed, the disk fills), so the
// reader drops a torn last line — one with no newline after it that does not
// parse — and reports every other bad line as an error with its line number:
// a bad line in the middle is not a crash artefact but a bug, and checking a
// history with a hole in it would hide anomalies.

import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { Errors, SluiceError } from '../../src/util/errors.js';
import type { CheckResult } from './checker.js';
import type { HistoryEntry } from './history.js';

/** Unwritten bytes a HistoryWriter may hold before record() throws: the disk has stopped keeping up. */
export const HISTORY_PENDING_BYTES_MAX = 64 * 1024 * 1024;
/** How many anomalies of one type summarize() prints. */
export const SUMMARY_EXAMPLES_MAX = 5;

/** Appends entries as JSON lines through a buffered stream (consecutive writes go out together). */
export class HistoryWriter {
  private readonly stream: WriteStream;
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;
  private written = 0;

  constructor(readonly path: string, private readonly pendingBytesMax = HISTORY_PENDING_BYTES_MAX) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', (err) => {
      this.failure ??= err;
    });
  }

  /** Entries recorded so far. */
  get entries(): number {
    return this.written;
  }

  /** Queues one entry; throws if the file failed, the writer is closed or too much is pending. */
  record(entry: HistoryEntry): void {
    this.throwIfFailed();
    if (this.closing) throw new SluiceError(Errors.INVALID_REQUEST, `history ${this.path} is closed`);
    if (this.stream.writableLength > this.pendingBytesMax) {
      throw new SluiceError(Errors.KAFKA_STORAGE_ERROR, `history ${this.path}: ${this.stream.writableLength} bytes not yet written (max ${this.pendingBytesMax})`);
    }
    this.stream.write(`${JSON.stringify(entry)}\n`);
    this.written++;
  }

  /** Writes out what is pending and closes the file; rejects if any write failed. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve, reject) => {
      // 'close' follows both a finished stream and a failed one (autoDestroy).
      const settle = (): void => (this.failure ? reject(this.storageError()) : resolve());
      if (this.stream.closed) return settle();
      this.stream.once('close', settle);
      this.stream.end();
    });
    return this.closing;
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.storageError();
  }

  private storageError(): SluiceError {
    return new SluiceError(Errors.KAFKA_STORAGE_ERROR, `history ${this.path}: ${this.failure?.message ?? 'write failed'}`);
  }
}

export interface ParsedHistory {
  readonly entries: HistoryEntry[];
  /** The torn last line that was dropped, or null. */
  readonly tornTail: string | null;
}

/** Reads a history file; a torn last line is dropped, any other bad line throws. */
export function readHistory(path: string): HistoryEntry[] {
  return parseHistory(readFileSync(path, 'utf8'), path).entries;
}

/** Parses history text (see readHistory); `source` names it in errors. */
export function parseHistory(text: string, source = 'history'): ParsedHistory {
  const lines = text.split('\n');
  const complete = text.endsWith('\n');
  // With a final newline the last split element is '' and every real line is whole.
  const last = lines.pop() ?? '';
  const entries: HistoryEntry[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const problem = entryProblem(line);
    if (typeof problem === 'string') throw badLine(source, i + 1, problem, line);
    entries.push(problem.entry);
  });
  if (complete || last.trim() === '') return { entries, tornTail: null };
  const tail = entryProblem(last);
  if (typeof tail === 'string') return { entries, tornTail: last };
  entries.push(tail.entry);
  return { entries, tornTail: null };
}

function badLine(source: string, lineNo: number, problem: string, line: string): SluiceError {
  const shown = line.length > 120 ? `${line.slice(0, 117)}...` : line;
  return new SluiceError(Errors.CORRUPT_MESSAGE, `${source} line ${lineNo}: ${problem}: ${shown}`, { source, line: lineNo });
}

/** Field types each kind must have (optional fields are not listed). */
const REQUIRED: Record<HistoryEntry['kind'], Record<string, 'string' | 'number' | 'object'>> = {
  send: { producer: 'string', topic: 'string', partition: 'number', seq: 'number', value: 'string', outcome: 'object' },
  read: { session: 'string', group: 'string', generation: 'number', topic: 'string', partition: 'number', records: 'object' },
  seek: { session: 'string', group: 'string', topic: 'string', partition: 'number', offset: 'number' },
  commit: { session: 'string', group: 'string', generation: 'number', topic: 'string', partition: 'number', offset: 'number', outcome: 'object' },
  assign: { session: 'string', group: 'string', generation: 'number', member: 'string', partitions: 'object' },
  admin: { op: 'string', topic: 'string', outcome: 'object' },
  fault: { fault: 'string', detail: 'string' },
};

/** The entry, or what is wrong with the line. */
function entryProblem(line: string): { entry: HistoryEntry } | string {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not an object';
  const o = v as Record<string, unknown>;
  const fields = REQUIRED[o.kind as HistoryEntry['kind']];
  if (typeof o.kind !== 'string' || !Object.hasOwn(REQUIRED, o.kind) || !fields) return `unknown kind ${JSON.stringify(o.kind)}`;
  for (const [name, type] of Object.entries({ invokeMs: 'number', completeMs: 'number', ...fields })) {
    if (typeof o[name] !== type || o[name] === null) return `${o.kind} entry lacks ${type} field ${name}`;
  }
  if ('outcome' in fields && !outcomeOk(o.outcome)) return `${o.kind} entry has a bad outcome`;
  if (o.kind === 'read' && !Array.isArray(o.records)) return 'read entry: records is not an array';
  return { entry: o as unknown as HistoryEntry };
}

function outcomeOk(v: unknown): boolean {
  const o = v as { type?: unknown; error?: unknown };
  if (o.type === 'ok') return true;
  return (o.type === 'fail' || o.type === 'unknown') && typeof o.error === 'string';
}

/** A few human lines: counts, then anomalies grouped by type with a few examples each. */
export function summarize(result: CheckResult): string[] {
  const s = result.stats;
  const lines = [
    `sends: ${s.sendsOk} ok (${s.acksChecked} checked at their offset, ${s.acksBelowLogStart} below log start, ` +
      `${s.acksWithoutOffset} without offset), ${s.sendsFailed} failed, ${s.sendsUnknown} unknown ` +
      `(${s.unknownPresent} present, ${s.sendsFailedIndefinite} indefinite errors); ${s.sendsToDeletedTopics} to deleted topics`,
    `reads: ${s.reads} polls, ${s.recordsRead} records, ${s.seeks} seeks; commits: ${s.commits}; assignments: ${s.assignments}`,
    `final: ${s.partitions} partitions, ${s.finalRecords} records, ${s.foreignValues} foreign values, ${s.digestsMissing} ISR digests missing`,
  ];
  if (result.anomalies.length === 0) return [...lines, 'anomalies: none'];
  const byType = new Map<string, string[]>();
  for (const a of result.anomalies) byType.set(a.type, [...(byType.get(a.type) ?? []), a.detail]);
  lines.push(`anomalies: ${result.anomalies.length} (${[...byType].map(([t, l]) => `${t} ${l.length}`).join(', ')})`);
  for (const [type, details] of byType) {
    lines.push(`  ${type} (${details.length}):`);
    for (const d of details.slice(0, SUMMARY_EXAMPLES_MAX)) lines.push(`    ${d}`);
    if (details.length > SUMMARY_EXAMPLES_MAX) lines.push(`    ... and ${details.length - SUMMARY_EXAMPLES_MAX} more`);
  }
  return lines;
}
