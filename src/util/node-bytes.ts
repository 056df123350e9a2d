// Node's side of src/util/bytes.ts: codec output allocated as Buffers, so
// Node callers (the broker, Node client users) keep Buffer methods on what the
// record codec returns. Imported for its effect, with crc32c-native.ts, by
// src/node.ts.

import { setByteAllocator } from './bytes.js';


/** `b` as a Buffer over the same memory (itself when it is one already). */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

setByteAllocator((n) => Buffer.allocUnsafe(n), asBuffer);
