// Config commands and queries (pure): incremental alter of topic, broker and
// cluster configs, validated against the one table of known keys
// (metadata/config-defs.ts), and describe with each key's effective value and
// where it came from. Broker-level settings are stored cluster-wide
// (resource 'cluster', name ''): Sluice has no per-broker dynamic configs yet.

import { brokerConfigDef, BROKER_CONFIGS, configValueProblem, topicConfigDef, TOPIC_CONFIGS } from '../metadata/config-defs.js';
import type { MetadataImage } from '../metadata/image.js';
import type { MetadataRecord } from '../metadata/records.js';
import { Errors, type ErrorInfo } from '../util/errors.js';
import { clusterConfigs, type CommandContext, type CommandResult } from './context.js';
import type { DescribedConfig, ResourceResult } from '../protocol/apis/admin-results.js';

// The answers' shapes are the wire's (the client reads them too).
export type { DescribedConfig, ResourceResult };

export interface AlterConfigsResource {
  readonly resourceType: 'topic' | 'cluster';
  /** Topic name, or '' for the cluster. */
  readonly resourceName: string;
  readonly set: Readonly<Record<string, string>>;
  readonly delete: readonly string[];
}

function check(image: MetadataImage, r: AlterConfigsResource): { error: ErrorInfo; message: string } | null {
  if (r.resourceType === 'topic' && !image.topic(r.resourceName)) {
    return { error: Errors.UNKNOWN_TOPIC_OR_PARTITION, message: `topic ${r.resourceName} does not exist` };
  }
  if (r.resourceType !== 'topic' && r.resourceType !== 'cluster') return { error: Errors.INVALID_REQUEST, message: `unknown resource type ${String(r.resourceType)}` };
  const lookup = r.resourceType === 'topic' ? topicConfigDef : brokerConfigDef;
  for (const name of [...Object.keys(r.set), ...r.delete]) {
    if (!lookup(name)) return { error: Errors.INVALID_CONFIG, message: `unknown ${r.resourceType} config ${name}` };
  }
  for (const [name, value] of Object.entries(r.set)) {
    const problem = configValueProblem(lookup(name)!, String(value));
    if (problem) return { error: Errors.INVALID_CONFIG, message: problem };
  }
  return null;
}

export function alterConfigs(ctx: CommandContext, resources: readonly AlterConfigsResource[], validateOnly = false): CommandResult<ResourceResult[]> {
  const records: MetadataRecord[] = [];
  const response = resources.map((r): ResourceResult => {
    const problem = check(ctx.image, r);
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    if (problem) return { ...base, errorCode: problem.error.code, errorMessage: `${problem.error.name}: ${problem.message}` };
    if (!validateOnly) {
      for (const [name, value] of Object.entries(r.set)) {
        records.push({ type: 'config', v: 1, resourceType: r.resourceType, resourceName: r.resourceName, name, value: String(value) });
      }
      for (const name of r.delete) records.push({ type: 'config', v: 1, resourceType: r.resourceType, resourceName: r.resourceName, name, value: null });
    }
    return { ...base, errorCode: 0, errorMessage: null };
  });
  return { records, response };
}

export function describeConfigs(image: MetadataImage, resourceType: 'topic' | 'cluster', resourceName: string): DescribedConfig[] | null {
  const cluster = clusterConfigs(image);
  if (resourceType === 'cluster') {
    const defs = [...BROKER_CONFIGS, ...TOPIC_CONFIGS.filter((d) => d.brokerKey).map((d) => ({ ...d, name: d.brokerKey! }))];
    return defs.map((d) => ({ name: d.name, value: cluster.get(d.name) ?? d.defaultValue, source: cluster.has(d.name) ? 'cluster' : 'default', doc: d.doc }));
  }
  if (!image.topic(resourceName)) return null;
  const own = image.config('topic', resourceName);
  return TOPIC_CONFIGS.map((d) => {
    if (own.has(d.name)) return { name: d.name, value: own.get(d.name)!, source: 'topic', doc: d.doc };
    const inherited = d.brokerKey ? cluster.get(d.brokerKey) : undefined;
    return inherited !== undefined
      ? { name: d.name, value: inherited, source: 'cluster', doc: d.doc }
      : { name: d.name, value: d.defaultValue, source: 'default', doc: d.doc };
  });
}

// ---------------------------------------------------------------- producer ids

export const PRODUCER_ID_BLOCK_SIZE = 1000;

export type ProducerIdBlock = { readonly error: ErrorInfo } | { readonly error: null; readonly firstProducerId: number; readonly size: number };

/** Hands a broker the next block of producer ids (for InitProducerId). */
export function allocateProducerIds(ctx: CommandContext, brokerId: number, brokerEpoch: number): CommandResult<ProducerIdBlock> {
  const reg = ctx.image.brokers.get(brokerId);
  if (!reg || reg.brokerEpoch !== brokerEpoch) return { records: [], response: { error: Errors.STALE_BROKER_EPOCH } };
  const first = ctx.image.nextProducerId;
  return {
    records: [{ type: 'producerIds', v: 1, brokerId, brokerEpoch, nextProducerId: first + PRODUCER_ID_BLOCK_SIZE }],
    response: { error: null, firstProducerId: first, size: PRODUCER_ID_BLOCK_SIZE },
  };
}
