// How `sluice consume` prints a record: pure, one line per record.
//
// - value: the value as UTF-8 ("null" for a null value, as Kafka's console
//   consumer prints it).
// - key-value: key, separator (a TAB unless --key-separator), value.
// - json: one JSON object per line with topic, partition, offset, timestamp,
//   key, value (UTF-8 strings or null) and headers (a list of { key, value },
//   since a header name may repeat).

import type { ConsumerMessage } from '../client/consumer.js';
import { utf8Decode } from '../util/bytes.js';

export const FORMATS = ['value', 'key-value', 'json'] as const;
export type OutputFormat = (typeof FORMATS)[number];

export const KEY_VALUE_SEPARATOR_DEFAULT = '\t';

function text(b: Uint8Array | null): string | null {
  return b === null ? null : utf8Decode(b);
}

export function formatRecord(m: ConsumerMessage, format: OutputFormat, separator = KEY_VALUE_SEPARATOR_DEFAULT): string {
  switch (format) {
    case 'value':
      return text(m.value) ?? 'null';
    case 'key-value':
      return `${text(m.key) ?? 'null'}${separator}${text(m.value) ?? 'null'}`;
    case 'json':
      return JSON.stringify({
        topic: m.topic, partition: m.partition, offset: m.offset, timestamp: m.timestamp,
        key: text(m.key), value: text(m.value), headers: m.headers.map((h) => ({ key: h.key, value: text(h.value) })),
      });
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}
