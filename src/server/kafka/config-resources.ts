// Configs as Kafka's config APIs show them (DescribeConfigs, CreateTopics v5+,
// AlterConfigs, IncrementalAlterConfigs): resource types, config sources and
// types by Kafka's numbers, and the mapping onto Sluice's resources.
//
// Sluice keeps broker settings cluster-wide (the controller's 'cluster'
// resource): Kafka's default broker resource (empty name) maps onto it, and
// describing one broker (its id as the name) shows those same cluster-wide
// values. Setting one broker's own value is refused (INVALID_REQUEST): there
// are no per-broker dynamic configs to put it in; deleting one broker's keys
// is answered at once (alter-configs.ts): there is nothing to delete.

import { brokerConfigDef, topicConfigDef, type ConfigDef } from '../../metadata/config-defs.js';
import type { MetadataImage } from '../../metadata/image.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors } from '../../util/errors.js';
import { itemError, type KafkaItemError } from './admin-items.js';

/** Kafka's ConfigResource.Type. */
export const ResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8 } as const;

/** Kafka's DescribeConfigsResponse.ConfigSource. */
export const ConfigSource = { DYNAMIC_TOPIC_CONFIG: 1, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, DEFAULT_CONFIG: 5 } as const;

/** Kafka's ConfigDef.Type numbering in DescribeConfigs v3+. */
const CONFIG_TYPE = { boolean: 1, string: 2, int: 3, long: 5, double: 6, list: 7 } as const;
const LIST_TYPE = 7;

/** Keys Kafka types as lists (APPEND/SUBTRACT apply to them only). */
export const LIST_CONFIGS: ReadonlySet<string> = new Set(['cleanup.policy', 'log.cleanup.policy', 'leader.replication.throttled.replicas', 'follower.replication.throttled.replicas']);

export type SluiceSource = 'topic' | 'cluster' | 'default';

export interface SluiceResource {
  readonly resourceType: 'topic' | 'cluster';
  readonly resourceName: string;
}

/** The Sluice resource a Kafka (type, name) names, or the error to answer. */
export function sluiceResource(image: MetadataImage, type: number, name: string, altering: boolean): SluiceResource | KafkaItemError {
  if (type === ResourceType.TOPIC) return { resourceType: 'topic', resourceName: name };
  if (type === ResourceType.BROKER) {
    if (name === '') return { resourceType: 'cluster', resourceName: '' };
    if (!/^\d+$/.test(name) || !image.brokers.has(Number(name))) return itemError(Errors.INVALID_REQUEST, `no broker ${name}`);
    if (altering) return itemError(Errors.INVALID_REQUEST, `Sluice keeps broker configs cluster-wide: alter the default broker resource (empty name), not broker ${name}`);
    return { resourceType: 'cluster', resourceName: '' };
  }
  if (type === ResourceType.BROKER_LOGGER) return itemError(Errors.INVALID_REQUEST, 'broker loggers are not configurable through the Kafka protocol in Sluice');
  return itemError(Errors.INVALID_REQUEST, `unsupported resource type ${type}`);
}

export function configDefOf(resourceType: 'topic' | 'cluster', name: string): ConfigDef | undefined {
  return resourceType === 'topic' ? topicConfigDef(name) : brokerConfigDef(name);
}

export function kafkaConfigType(resourceType: 'topic' | 'cluster', name: string): number {
  const d = configDefOf(resourceType, name);
  if (!d) return 0;
  if (LIST_CONFIGS.has(name)) return LIST_TYPE;
  return CONFIG_TYPE[d.type];
}

export function kafkaSource(source: SluiceSource): number {
  if (source === 'topic') return ConfigSource.DYNAMIC_TOPIC_CONFIG;
  if (source === 'cluster') return ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG;
  return ConfigSource.DEFAULT_CONFIG;
}

/**
 * The synonyms of a config in precedence order, as Kafka lists them: the
 * topic's own value, then the cluster-wide broker key, then the default (under
 * the broker key's name when the topic key has one).
 */
export function synonymsOf(image: MetadataImage, resource: SluiceResource, name: string): Struct[] {
  const out: Struct[] = [];
  const cluster = image.config('cluster', '');
  if (resource.resourceType === 'topic') {
    const own = image.config('topic', resource.resourceName).get(name);
    if (own !== undefined) out.push({ name, value: own, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    const d = topicConfigDef(name);
    if (!d) return out;
    const key = d.brokerKey ?? name;
    const set = d.brokerKey ? cluster.get(d.brokerKey) : undefined;
    if (set !== undefined) out.push({ name: key, value: set, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    out.push({ name: key, value: d.defaultValue, source: ConfigSource.DEFAULT_CONFIG });
    return out;
  }
  const d = brokerConfigDef(name);
  const set = cluster.get(name);
  if (set !== undefined) out.push({ name, value: set, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
  if (d) out.push({ name, value: d.defaultValue, source: ConfigSource.DEFAULT_CONFIG });
  return out;
}
