// The pure part of `sluice produce`: stdin bytes → lines → records, and the
// tally printed at the end. No I/O here, so it is tested on bytes.
//
// - A line ends at '\n'; a '\r' before it is dropped (files from Windows).
//   A last line without '\n' is a record too; the empty input has none.
// - Bytes are decoded as UTF-8 across chunk boundaries (a character split
//   between two reads is not mangled).
// - With a key separator, the key is the part before its first occurrence
//   and the value the rest; a line without it is a record with no key (Kafka's
//   console producer refuses such a line; here one odd line does not abort a
//   stream already half sent).
// - A line may not grow past lineBytesMax while it is being read, so one
//   endless line cannot take unbounded memory.

import { StringDecoder } from 'node:string_decoder';
import { Errors, SluiceError } from '../util/errors.js';
import type { ProducerMessage } from '../client/producer.js';

/** A line longer than this is refused (the producer's default largest request is 1 MiB). */
export const LINE_BYTES_MAX = 1024 * 1024;

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private linesSeen = 0;

  constructor(private readonly lineBytesMax = LINE_BYTES_MAX) {}

  /** The complete lines this chunk ends; the rest waits for the next chunk. */
  push(chunk: Buffer | string): string[] {
    const text = this.partial + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    if (Buffer.byteLength(this.partial) > this.lineBytesMax) {
      throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `line ${this.linesSeen + parts.length + 1} is longer than ${this.lineBytesMax} bytes`);
    }
    this.linesSeen += parts.length;
    return parts.map(stripCr);
  }

  /** The last line, if the input did not end with a newline. */
  end(): string[] {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (rest.length === 0) return [];
    this.linesSeen++;
    return [stripCr(rest)];
  }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** `k=v,k2=v2` → { k: 'v', k2: 'v2' }; throws an Error (a usage problem) on a malformed pair. */
export function parseHeaders(spec: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of spec.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--headers takes k=v,k2=v2,...; got "${pair}"`);
    headers[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return headers;
}

export interface RecordShape {
  readonly keySeparator?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly partition?: number | undefined;
}

/** One stdin line as the record to send. */
export function lineToMessage(line: string, shape: RecordShape): ProducerMessage {
  let key: string | null = null;
  let value = line;
  if (shape.keySeparator !== undefined) {
    const at = line.indexOf(shape.keySeparator);
    if (at >= 0) {
      key = line.slice(0, at);
      value = line.slice(at + shape.keySeparator.length);
    }
  }
  return {
    key,
    value,
    ...(shape.headers ? { headers: shape.headers } : {}),
    ...(shape.partition !== undefined ? { partition: shape.partition } : {}),
  };
}

/** Records acknowledged, per partition. */
export class ProduceTally {
  private readonly perPartition = new Map<number, number>();
  total = 0;
  /** Transactions committed (--transactional-id); null when not transactional. */
  transactions: number | null = null;

  add(partition: number): void {
    this.perPartition.set(partition, (this.perPartition.get(partition) ?? 0) + 1);
    this.total++;
  }

  /** Partition → count, by partition number. */
  byPartition(): Array<{ partition: number; records: number }> {
    return [...this.perPartition].sort((a, b) => a[0] - b[0]).map(([partition, records]) => ({ partition, records }));
  }

  summary(topic: string): string {
    const parts = this.byPartition().map((p) => `${p.partition}: ${p.records}`).join(', ');
    const txns = this.transactions === null ? '' : ` in ${this.transactions} committed transaction(s)`;
    return `sent ${this.total} record(s) to ${topic}${parts ? ` (per partition ${parts})` : ''}${txns}`;
  }
}
