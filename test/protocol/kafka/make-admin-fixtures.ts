// Writes the admin APIs' golden frames from admin-samples.ts (run once, by
// hand: node dist/test/protocol/kafka/make-admin-fixtures.js; the frames are
// then reviewed against Kafka's message definitions and committed).

import { writeGolden } from './golden.js';
import { ADMIN_SAMPLES } from './admin-samples.js';

for (const s of ADMIN_SAMPLES) {
  for (const v of s.versions) {
    writeGolden(s.spec, s.dir, v, 'request', s.request, `${s.spec.name} v${v} request (body, after the request header)`);
    writeGolden(s.spec, s.dir, v, 'response', s.response, `${s.spec.name} v${v} response (body, after the response header)`);
  }
}
