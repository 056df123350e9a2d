// What the consume benchmarks time: a fresh group's Consumer.run() reading a
// topic from the beginning until `records` records have been delivered.

import type { Client } from '../src/index.js';

export async function consumeAll(client: Client, topic: string, records: number, groupPrefix: string): Promise<void> {
  const consumer = client.consumer({ groupId: `${groupPrefix}-${Date.now()}` });
  let seen = 0;
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer.on('crash', ({ error }) => reject(error));
      consumer.run({
        eachBatch: async ({ batch }) => {
          seen += batch.messages.length;
          if (seen >= records) resolve();
        },
      }).catch(reject);
    });
  } finally {
    await consumer.close();
  }
}
