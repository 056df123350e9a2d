// A consumer in its own process, for tests that SIGKILL a group member: it
// subscribes to one topic from the beginning and prints one JSON line per
// group join and per processed record (after processing, so a record is
// printed before its offset can be committed). Config: argv[2] as JSON
// { bootstrap, groupId, topic, options }. SIGTERM closes it cleanly.

import { Client } from '../../src/client/client.js';
import { Consumer, type ConsumerOptions } from '../../src/client/consumer.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';

interface ChildConfig {
  readonly bootstrap: string[];
  readonly groupId: string;
  readonly topic: string;
  readonly options: ConsumerOptions;
}

function out(obj: object): void {
  // Pipes are synchronous on Linux: the line is out before the handler resolves.
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
  const client = new Client({
    bootstrap: cfg.bootstrap, clientId: 'consumer-child', webSocketFactory: nodeWebSocketFactory,
    connectTimeoutMs: 2_000, retry: { retries: 30, initialRetryTimeMs: 50, maxRetryTimeMs: 1_000 },
  });
  const consumer = new Consumer(client, { ...cfg.options, groupId: cfg.groupId });
  consumer.on('group.join', (e) => out({ ev: 'join', generationId: e.generationId, assignment: e.assignment }));
  consumer.on('crash', (e) => out({ ev: 'crash', error: e.error.message }));
  await consumer.subscribe({ topics: [cfg.topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      out({ ev: 'rec', topic, p: partition, o: message.offset, v: message.value?.toString('utf8') ?? '' });
    },
  });
  out({ ev: 'ready' });
  process.once('SIGTERM', () => {
    void consumer.close().finally(() => {
      client.close();
      process.exit(0);
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`consumer-child failed: ${String(err)}\n`);
  process.exit(1);
});
