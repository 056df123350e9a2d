// A minimal Kafka-protocol client for tests: one TCP connection, requests
// encoded from the API tables, responses decoded by them, matched in order by
// correlation id. It is deliberately raw (no retries, no metadata cache) so
// tests can send exactly the bytes they mean, malformed ones included.

import net from 'node:net';
import { Reader } from '../../../src/protocol/kafka/codec/reader.js';
import { Writer } from '../../../src/protocol/kafka/codec/writer.js';
import { writeRequestHeader } from '../../../src/protocol/kafka/header.js';
import { decodeMessage, encodeMessage, type Struct } from '../../../src/protocol/kafka/message.js';
import { inVersions, type KafkaApiSpec } from '../../../src/protocol/kafka/schema.js';

const RESPONSE_TIMEOUT_MS = 15_000;

interface Waiter {
  readonly correlationId: number;
  readonly resolve: (frame: Buffer) => void;
  readonly reject: (err: Error) => void;
}

export class RawKafkaClient {
  private nextCorrelationId = 1;
  private readonly waiters: Waiter[] = [];
  private pending: Buffer = Buffer.alloc(0);
  private closedError: Error | null = null;

  private constructor(private readonly socket: net.Socket, readonly clientId: string | null) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err: Error): void => {
      this.closedError = err;
      for (const w of this.waiters.splice(0)) w.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed by the broker')));
  }

  static connect(host: string, port: number, clientId: string | null = 'raw-test'): Promise<RawKafkaClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port }, () => {
        socket.off('error', reject);
        resolve(new RawKafkaClient(socket, clientId));
      });
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.closedError !== null;
  }

  private onData(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 4) {
      const size = this.pending.readInt32BE(0);
      if (this.pending.length < 4 + size) return;
      const frame = this.pending.subarray(4, 4 + size);
      this.pending = this.pending.subarray(4 + size);
      const w = this.waiters.shift();
      if (!w) continue;
      const id = frame.readInt32BE(0);
      if (id !== w.correlationId) w.reject(new Error(`correlation id ${id}, expected ${w.correlationId}`));
      else w.resolve(frame);
    }
  }

  /** Sends raw bytes (a whole frame, size prefix included, or garbage). */
  writeRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Encodes a request frame without sending it (for tests that corrupt it). */
  encode(spec: KafkaApiSpec, version: number, body: Struct, correlationId = this.nextCorrelationId++): Buffer {
    const w = new Writer();
    w.int32(0);
    writeRequestHeader(w, { apiKey: spec.apiKey, apiVersion: version, correlationId, clientId: this.clientId }, inVersions(spec.request.flexible, version));
    encodeMessage(spec.request, version, body, w);
    const frame = w.toBuffer();
    frame.writeInt32BE(frame.length - 4, 0);
    return frame;
  }

  /** Sends a request and resolves with the decoded response body. */
  async request(spec: KafkaApiSpec, version: number, body: Struct): Promise<Struct> {
    const frame = await this.requestFrame(spec, version, body);
    const r = new Reader(frame, 4);
    // Response header v1 (flexible, except ApiVersions) carries tagged fields after the correlation id.
    if (inVersions(spec.response.flexible, version) && spec.apiKey !== 18) {
      const n = r.uvarint();
      for (let i = 0; i < n; i++) { r.uvarint(); r.skip(r.uvarint(), 'header tag'); }
    }
    return decodeMessage(spec.response, version, r);
  }

  /** Sends a request and resolves with the raw response frame (correlation id first). */
  requestFrame(spec: KafkaApiSpec, version: number, body: Struct): Promise<Buffer> {
    if (this.closedError) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId++;
    const frame = this.encode(spec, version, body, correlationId);
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${spec.name} v${version}: no response in ${RESPONSE_TIMEOUT_MS} ms`)), RESPONSE_TIMEOUT_MS);
      this.waiters.push({
        correlationId,
        resolve: (f) => { clearTimeout(timer); resolve(f); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.socket.write(frame);
    });
  }

  /** Sends a request that gets no response (Produce acks=0). */
  send(spec: KafkaApiSpec, version: number, body: Struct): void {
    this.socket.write(this.encode(spec, version, body));
  }

  close(): void {
    this.socket.destroy();
  }
}
