// The deployments the suite knows, in run order: Sluice's three, then the
// peers' (NATS JetStream R1 and R3, Redis Streams with AOF everysec and
// without AOF). Each entry says whether it can run here and how to create it.
//
// The peers' modules (bench/peers/nats.ts, bench/peers/redis.ts) are loaded
// when first asked for, not imported statically: a peer whose module is
// missing or fails to load is then just unavailable, with the load error as
// its reason, and Sluice's figures are still measured.
import { sluiceRf1, sluiceRf3, sluiceRf3Fsync } from './sluice.js';
import type { DeploymentKey, SystemFilter } from './results.js';
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
  return [
    sluice('sluice-rf1', 'Sluice RF=1 acks=1', sluiceRf1),
    sluice('sluice-rf3', 'Sluice RF=3 acks=all', sluiceRf3),
    sluice('sluice-rf3-fsync', 'Sluice RF=3 acks=all fsync', sluiceRf3Fsync),
    peer('nats-r1', 'nats', 'NATS JetStream R1', nats, (m) => m.natsAvailability(), (m) => m.natsR1()),
    peer('nats-r3', 'nats', 'NATS JetStream R3', nats, (m) => m.natsAvailability(), (m) => m.natsR3()),
    peer('redis-aof', 'redis', 'Redis Streams AOF everysec', redis, (m) => m.redisAvailability(), (m) => m.redisAof()),
    peer('redis-noaof', 'redis', 'Redis Streams no AOF', redis, (m) => m.redisAvailability(), (m) => m.redisNoAof()),
  ];
}
