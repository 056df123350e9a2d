// A minimal pipelined RESP2 client for driving Redis at full speed from Node.
// Commands are encoded straight into one Buffer per pipeline. Replies are
// parsed without building objects: the parser reports each element (array
// header, bulk string as a byte range of the received chunk, integer, error)
// with its nesting depth to the ReplySink of the request it answers, and the
// sink keeps only what it needs (a count, an id copied into the next XACK, a
// timestamp). ioredis spends ~10 µs of client CPU per XADD in a pipeline on
// this class of machine — 5-10× what Redis itself spends — so the benchmark
// would measure ioredis; ioredis stays in use for set-up (PING, DEL, XGROUP).
//
// Invariants: replies answer requests in order (RESP on one connection), so
// a FIFO of waiters matches them; a request resolves once all `replies`
// top-level replies of its pipeline arrived, and rejects with the first error
// reply among them; a lost connection rejects every waiting request. Between
// chunks the parser keeps only the unparsed tail of one element, so parsing
// stays linear in the bytes received. Byte ranges handed to a sink are valid
// only during the call.

import net from 'node:net';
import { assert } from '../../src/util/assert.js';

export class RespError extends Error {
  override name = 'RespError';
}

/** Receives the elements of the replies to one request; depth 0 = a top-level reply. */
export class ReplySink {
  /** The first error reply, which fails the request. */
  failure: RespError | undefined;

  /** An array header; `n < 0` is a nil array. */
  array(_n: number, _depth: number): void {}
  /** A bulk string: bytes `buf[start, end)`; a nil bulk has `start < 0`. */
  bulk(_buf: Buffer, _start: number, _end: number, _depth: number): void {}
  integer(_n: number, _depth: number): void {}
  simple(_buf: Buffer, _start: number, _end: number, _depth: number): void {}
  error(message: string, _depth: number): void {
    this.failure ??= new RespError(message);
  }
}

const CR = 13;
const LF = 10;
const CONNECT_TIMEOUT_MS = 5_000;
const WAITERS_COMPACT_AT = 1024;

interface Waiter {
  left: number;
  readonly sink: ReplySink;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

/** One connection; `request()` writes a pipeline and resolves once its replies went through the sink. */
export class RespClient {
  private readonly waiters: Waiter[] = [];
  private waitersHead = 0;
  private closedError: Error | undefined;
  private readonly parser = new RespParser({
    sink: () => this.waiters[this.waitersHead]?.sink ?? ORPHAN_SINK,
    replyDone: () => this.replyDone(),
  });

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      try {
        this.parser.feed(chunk);
      } catch (err) {
        this.fail(err as Error);
      }
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('redis connection closed')));
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RespClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host });
      const timer = setTimeout(() => socket.destroy(new Error(`connect to ${host}:${port} timed out`)), CONNECT_TIMEOUT_MS);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeListener('error', reject);
        resolve(new RespClient(socket));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** Writes `commands` (already RESP-encoded) and resolves once their `replies` replies went through `sink`. */
  request(commands: Buffer, replies: number, sink: ReplySink = new ReplySink()): Promise<void> {
    assert(replies >= 1, 'a request expects at least one reply');
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      this.waiters.push({ left: replies, sink, resolve, reject });
      this.socket.write(commands);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private replyDone(): void {
    const w = this.waiters[this.waitersHead];
    if (!w) return this.fail(new Error('redis sent a reply nobody asked for'));
    if (--w.left > 0) return;
    this.waitersHead++;
    if (this.waitersHead >= WAITERS_COMPACT_AT) {
      this.waiters.splice(0, this.waitersHead);
      this.waitersHead = 0;
    }
    if (w.sink.failure) w.reject(w.sink.failure);
    else w.resolve();
  }

  private fail(err: Error): void {
    this.closedError ??= err;
    const pending = this.waiters.splice(this.waitersHead);
    this.waiters.length = 0;
    this.waitersHead = 0;
    for (const w of pending) w.reject(this.closedError);
    this.socket.destroy();
  }
}

/** Where replies nobody waits for go (they fail the connection at their end). */
const ORPHAN_SINK = new ReplySink();

/** Encodes one command as a RESP array of bulk strings, in one allocation. */
export function encodeCommand(args: ReadonlyArray<string | number | Buffer>): Buffer {
  const bulks = args.map((a) => (Buffer.isBuffer(a) ? a : Buffer.from(String(a))));
  let total = arrayHeaderBytes(bulks.length);
  for (const b of bulks) total += bulkBytes(b.length);
  const out = Buffer.allocUnsafe(total);
  let off = out.write(`*${bulks.length}\r\n`, 0, 'latin1');
  for (const b of bulks) off = writeBulk(out, off, b, 0, b.length);
  assert(off === total, 'encoded size mismatch');
  return out;
}

/** Encodes one command `prefix... value` (e.g. XADD key * field <value>) per value, all into one Buffer. */
export function encodeValueCommands(prefix: readonly string[], values: readonly Buffer[]): Buffer {
  // The prefix's array header counts prefix.length elements; each command has one more (its value).
  const fixedBody = encodeCommand(prefix).subarray(arrayHeaderBytes(prefix.length));
  const header = `*${prefix.length + 1}\r\n`;
  let total = 0;
  for (const v of values) total += header.length + fixedBody.length + bulkBytes(v.length);
  const out = Buffer.allocUnsafe(total);
  let off = 0;
  for (const v of values) {
    off += out.write(header, off, 'latin1');
    off += fixedBody.copy(out, off);
    off = writeBulk(out, off, v, 0, v.length);
  }
  assert(off === total, 'encoded size mismatch');
  return out;
}

export function arrayHeaderBytes(n: number): number {
  return 1 + String(n).length + 2;
}

export function bulkBytes(len: number): number {
  return 1 + String(len).length + 2 + len + 2;
}

/** Writes `src[start, end)` as a bulk string at `at`; returns the offset after it. */
export function writeBulk(out: Buffer, at: number, src: Buffer, start: number, end: number): number {
  let off = at + out.write(`$${end - start}\r\n`, at, 'latin1');
  off += src.copy(out, off, start, end);
  out[off++] = CR;
  out[off++] = LF;
  return off;
}

interface ParserTarget {
  /** The sink of the request the next reply answers. */
  sink(): ReplySink;
  /** A top-level reply is complete. */
  replyDone(): void;
}

/**
 * Incremental RESP2 parser: feed() chunks as they arrive. It keeps a stack of
 * elements left in each open array; an element closing the outermost array
 * (or a scalar at depth 0) completes a top-level reply.
 */
export class RespParser {
  private buf: Buffer = Buffer.alloc(0);
  private off = 0;
  private readonly stack: number[] = [];

  constructor(private readonly target: ParserTarget) {}

  feed(chunk: Buffer): void {
    this.buf = this.off < this.buf.length ? Buffer.concat([this.buf.subarray(this.off), chunk]) : chunk;
    this.off = 0;
    while (this.element()) { /* one element per turn */ }
  }

  /** Parses one element at `off` and reports it; false (and `off` unchanged) when it is not all here yet. */
  private element(): boolean {
    const buf = this.buf;
    // Header lines are a few bytes: a plain scan beats a native indexOf call per element.
    let eol = this.off;
    while (eol < buf.length && buf[eol] !== CR) eol++;
    if (eol + 1 >= buf.length) return false;
    const type = buf[this.off];
    const lineStart = this.off + 1;
    const depth = this.stack.length;
    const sink = this.target.sink();
    switch (type) {
      case 0x24: { // $ bulk string
        const n = parseIntAscii(buf, lineStart, eol);
        const start = eol + 2;
        if (n >= 0 && start + n + 2 > buf.length) return false;
        this.off = n >= 0 ? start + n + 2 : start;
        sink.bulk(buf, n >= 0 ? start : -1, n >= 0 ? start + n : -1, depth);
        break;
      }
      case 0x2a: { // * array
        const n = parseIntAscii(buf, lineStart, eol);
        this.off = eol + 2;
        sink.array(n, depth);
        if (n > 0) {
          this.stack.push(n);
          return true;
        }
        break;
      }
      case 0x3a: // : integer
        this.off = eol + 2;
        sink.integer(parseIntAscii(buf, lineStart, eol), depth);
        break;
      case 0x2b: // + simple string
        this.off = eol + 2;
        sink.simple(buf, lineStart, eol, depth);
        break;
      case 0x2d: // - error
        this.off = eol + 2;
        sink.error(buf.toString('utf8', lineStart, eol), depth);
        break;
      default:
        throw new RespError(`unexpected RESP type byte ${type}`);
    }
    this.closeElement();
    return true;
  }

  /** One element finished: count it against the open arrays, closing the full ones. */
  private closeElement(): void {
    for (;;) {
      const last = this.stack.length - 1;
      if (last < 0) return this.target.replyDone();
      const left = this.stack[last]! - 1;
      if (left > 0) {
        this.stack[last] = left;
        return;
      }
      this.stack.pop();
    }
  }
}

function parseIntAscii(buf: Buffer, from: number, to: number): number {
  let i = from;
  let sign = 1;
  if (buf[i] === 0x2d) {
    sign = -1;
    i++;
  }
  let n = 0;
  for (; i < to; i++) n = n * 10 + (buf[i]! - 0x30);
  return sign * n;
}
