// The deployments the suite knows, in run order: Sluice's three raw-protocol
// ones, Sluice through its real clients (Producer defaults and tuned,
// RF=1, and Kafka's Java client on the Kafka listener), then the peers'
// (NATS JetStream R1 and R3, Redis Streams with AOF everysec and without
// AOF, Apache Kafka R1, R3, R3 with the tuned producer, R3 with
// log.flush.interval.messages=1). Each entry says whether it can run here
// and how to create it.
//
// The peers' modules (bench/peers/nats.ts, redis.ts, kafka.ts) are loaded
// when first asked for, not imported statically: a peer whose module is
// missing or fails to load is then just unavailable, with the load error as
// its reason, and Sluice's figures are still measured.
import { sluiceRf1, sluiceRf1Client, sluiceRf3, sluiceRf3Client, sluiceRf3ClientTuned, sluiceRf3Fsync, sluiceRf3KafkaClient } from './sluice.js';
import { KAFKA_DEFAULTS_CLIENT, TUNED_CLIENT } from './sluice-client.js';
import { DEPLOYMENT_LABELS, type DeploymentKey, type SystemFilter } from './results.js';
import type { Availability, Deployment } from './types.js';

export interface DeploymentEntry {
  readonly key: DeploymentKey;
  readonly filter: SystemFilter;
  /** How the reports name it. */
  readonly label: string;
  availability(): Promise<Availability>;
  create(): Promise<Deployment>;
}

type Factory = () => Deployment;

interface NatsModule {
  natsAvailability(): Availability | Promise<Availability>;
  natsR1: Factory;
  natsR3: Factory;
}

interface KafkaModule {
  kafkaAvailability(): Availability | Promise<Availability>;
  kafkaR1: Factory;
  kafkaR3: Factory;
  kafkaR3Tuned: Factory;
  kafkaR3Fsync: Factory;
}

interface RedisModule {
  redisAvailability(): Availability | Promise<Availability>;
  redisAof: Factory;
  redisNoAof: Factory;
}

const always = async (): Promise<Availability> => ({ available: true });

function sluice(key: DeploymentKey, label: string, make: Factory): DeploymentEntry {
  return { key, filter: 'sluice', label, availability: always, create: async () => make() };
}

/** Loads a peer module once; a module that cannot be loaded or lacks a name becomes a reason. */
function peerLoader<M>(file: string, names: ReadonlyArray<keyof M & string>): () => Promise<M | string> {
  let loaded: Promise<M | string> | undefined;
  return () => {
    loaded ??= (async () => {
      try {
        const mod = (await import(new URL(`../peers/${file}`, import.meta.url).href)) as Record<string, unknown>;
        const missing = names.filter((n) => typeof mod[n] !== 'function');
        return missing.length > 0 ? `bench/peers/${file} does not export ${missing.join(', ')}` : (mod as M);
      } catch (err) {
        return `bench/peers/${file} could not be loaded: ${(err as Error).message.split('\n')[0]}`;
      }
    })();
    return loaded;
  };
}

function peer<M>(
  key: DeploymentKey, filter: SystemFilter, label: string, load: () => Promise<M | string>,
  available: (m: M) => Availability | Promise<Availability>, make: (m: M) => Deployment,
): DeploymentEntry {
  return {
    key, filter, label,
    availability: async () => {
      const m = await load();
      if (typeof m === 'string') return { available: false, reason: m };
      try {
        return await available(m);
      } catch (err) {
        return { available: false, reason: `availability check failed: ${(err as Error).message}` };
      }
    },
    create: async () => {
      const m = await load();
      if (typeof m === 'string') throw new Error(m);
      return make(m);
    },
  };
}

/** Every deployment, in run order. */
export function catalogue(): DeploymentEntry[] {
  const nats = peerLoader<NatsModule>('nats.js', ['natsAvailability', 'natsR1', 'natsR3']);
  const redis = peerLoader<RedisModule>('redis.js', ['redisAvailability', 'redisAof', 'redisNoAof']);
  const kafka = peerLoader<KafkaModule>('kafka.js', ['kafkaAvailability', 'kafkaR1', 'kafkaR3', 'kafkaR3Tuned', 'kafkaR3Fsync']);
  const kafkaPeer = (key: DeploymentKey, make: (m: KafkaModule) => Deployment): DeploymentEntry =>
    peer(key, 'kafka', DEPLOYMENT_LABELS[key], kafka, (m) => m.kafkaAvailability(), make);
  // Sluice on its Kafka listener needs the same Java driver as the Kafka peer.
  const sluiceKafkaClient: DeploymentEntry = {
    key: 'sluice-rf3-kafka-client', filter: 'sluice', label: DEPLOYMENT_LABELS['sluice-rf3-kafka-client'],
    availability: async () => {
      const m = await kafka();
      return typeof m === 'string' ? { available: false, reason: m } : await m.kafkaAvailability();
    },
    create: async () => sluiceRf3KafkaClient(),
  };
  return [
    sluice('sluice-rf1', DEPLOYMENT_LABELS['sluice-rf1'], sluiceRf1),
    sluice('sluice-rf3', DEPLOYMENT_LABELS['sluice-rf3'], sluiceRf3),
    sluice('sluice-rf3-fsync', DEPLOYMENT_LABELS['sluice-rf3-fsync'], sluiceRf3Fsync),
    sluice('sluice-rf3-client', DEPLOYMENT_LABELS['sluice-rf3-client'], sluiceRf3Client),
    sluice('sluice-rf3-client-tuned', DEPLOYMENT_LABELS['sluice-rf3-client-tuned'], () => sluiceRf3ClientTuned(TUNED_CLIENT)),
    sluice('sluice-rf3-client-kafka-batch', DEPLOYMENT_LABELS['sluice-rf3-client-kafka-batch'], () => sluiceRf3ClientTuned(KAFKA_DEFAULTS_CLIENT)),
    sluice('sluice-rf1-client', DEPLOYMENT_LABELS['sluice-rf1-client'], sluiceRf1Client),
    sluiceKafkaClient,
    peer('nats-r1', 'nats', 'NATS JetStream R1', nats, (m) => m.natsAvailability(), (m) => m.natsR1()),
    peer('nats-r3', 'nats', 'NATS JetStream R3', nats, (m) => m.natsAvailability(), (m) => m.natsR3()),
    peer('redis-aof', 'redis', 'Redis Streams AOF everysec', redis, (m) => m.redisAvailability(), (m) => m.redisAof()),
    peer('redis-noaof', 'redis', 'Redis Streams no AOF', redis, (m) => m.redisAvailability(), (m) => m.redisNoAof()),
    kafkaPeer('kafka-r1', (m) => m.kafkaR1()),
    kafkaPeer('kafka-r3', (m) => m.kafkaR3()),
    kafkaPeer('kafka-r3-tuned', (m) => m.kafkaR3Tuned()),
    kafkaPeer('kafka-r3-fsync', (m) => m.kafkaR3Fsync()),
  ];
}
