// Writes the transaction APIs' golden frames from txn-samples.ts (run once, by
// hand: node dist/test/protocol/kafka/make-txn-fixtures.js; the frames are
// then reviewed against Kafka's message definitions and committed).

import { writeGolden } from './golden.js';
import { TXN_SAMPLES } from './txn-samples.js';

for (const s of TXN_SAMPLES) {
  for (const v of s.versions) {
    writeGolden(s.spec, s.dir, v, 'request', s.request, `${s.spec.name} v${v} request (body, after the request header)`);
    writeGolden(s.spec, s.dir, v, 'response', s.response, `${s.spec.name} v${v} response (body, after the response header)`);
  }
}
