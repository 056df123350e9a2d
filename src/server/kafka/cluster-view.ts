// The cluster as Kafka clients see it: brokers by their Kafka endpoint (the
// KAFKA endpoint each broker registers, PLAINTEXT://host:port), topic ids as
// 16-byte UUIDs, and a controller id clients may send admin requests to.

import type { MetadataImage } from '../../metadata/image.js';
import { ZERO_UUID } from '../../protocol/kafka/schema.js';

/** The endpoint name a broker registers its Kafka listener under. */
export const KAFKA_ENDPOINT = 'KAFKA';

export interface KafkaBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

/** The registered form of a Kafka listener: SECURITY_PROTOCOL://host:port, as Kafka names its endpoints. */
export function kafkaEndpointUrl(host: string, port: number, protocol = 'PLAINTEXT'): string {
  return `${protocol}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function parseKafkaEndpoint(url: string): { host: string; port: number } | null {
  const m = /^[A-Z_]+:\/\/(\[[^\]]+\]|[^:/]+):(\d+)$/.exec(url);
  return m ? { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) } : null;
}

/** Unfenced brokers with a Kafka listener, by id. */
export function kafkaBrokers(image: MetadataImage): KafkaBroker[] {
  const out: KafkaBroker[] = [];
  for (const b of image.unfencedBrokers()) {
    const url = b.endpoints.find((e) => e.name === KAFKA_ENDPOINT)?.url;
    const ep = url ? parseKafkaEndpoint(url) : null;
    if (ep) out.push({ nodeId: b.brokerId, host: ep.host, port: ep.port, rack: b.rack });
  }
  return out.sort((a, b) => a.nodeId - b.nodeId);
}

/**
 * The controller id given to Kafka clients: the active controller when it is
 * a broker they can reach, else the lowest live broker — every broker
 * forwards admin requests to the active controller (KRaft brokers do the
 * same), and KafkaJS sends CreateTopics to whatever id this says.
 */
export function kafkaControllerId(image: MetadataImage, activeControllerId: number, brokers: readonly KafkaBroker[]): number {
  if (brokers.some((b) => b.nodeId === activeControllerId)) return activeControllerId;
  return brokers[0]?.nodeId ?? -1;
}

/**
 * Sluice's topic ids are 22 characters of base64url (the text form of Kafka's
 * UUIDs); on the wire Kafka wants the 16 bytes. The first 16 bytes of the
 * decoded text are the wire id: the mapping is fixed per topic, and the
 * reverse lookup goes through the image.
 */
export function kafkaTopicId(topicId: string): string {
  const hex = Buffer.from(topicId, 'base64url').subarray(0, 16).toString('hex');
  return hex.length === 32 ? hex : ZERO_UUID;
}

export function topicNameById(image: MetadataImage, uuidHex: string): string | null {
  for (const t of image.topicsByName.values()) if (kafkaTopicId(t.topicId) === uuidHex) return t.name;
  return null;
}

export const isInternalTopic = (name: string): boolean => name === '__consumer_offsets' || name === '__transaction_state';
