// What a Node.js process (the Node client entry, the CLI, the broker) sets up
// on top of the portable modules, imported for its effects: hardware CRC32C
// (@node-rs/crc32), every Kafka compression codec (node:zlib, lz4-napi,
// snappy, zstd-wasm), and Buffer as the bytes the record codec allocates.
// The browser entry (src/browser.ts) sets up its own instead.

import './util/crc32c-native.js';
import './util/node-bytes.js';
import './record/node-codecs.js';
