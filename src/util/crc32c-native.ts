// Installs @node-rs/crc32 (hardware CRC32C instructions) as the crc32c
// implementation. Node-only; imported for its effect by the Node entry, the
// CLI and the broker's CRC-heavy modules (storage, raft-node).

import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { setCrc32cImplementation } from './crc32c.js';

setCrc32cImplementation((buf, initial = 0) => nativeCrc32c(buf as Buffer, initial) >>> 0, 'native');
