// Every API the Kafka listener serves, by api key. One line per API; its
// handler lives in its own file beside this one, its wire table under
// src/protocol/kafka/apis/.

import type { KafkaApiHandler } from './api.js';
import { apiVersionsHandler } from './api-versions.js';
import { metadataHandler } from './metadata.js';
import { produceHandler } from './produce.js';
import { fetchHandler } from './fetch.js';
import { listOffsetsHandler } from './list-offsets.js';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch.js';

const handlers: KafkaApiHandler[] = [
  apiVersionsHandler(() => KAFKA_HANDLERS),
  metadataHandler,
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  offsetForLeaderEpochHandler,
];

export const KAFKA_HANDLERS: ReadonlyMap<number, KafkaApiHandler> = new Map(handlers.map((h) => [h.spec.apiKey, h]));
