// AlterConfigs and IncrementalAlterConfigs on the Kafka listener: both become
// the controller's alterConfigs (keys to set, keys to delete) per resource.
//
// AlterConfigs (the legacy API) replaces a resource's whole dynamic config:
// keys it does not name are deleted (as read from this broker's image), and a
// null value deletes its key. IncrementalAlterConfigs changes only the keys it
// names: SET, DELETE, and APPEND/SUBTRACT on list-typed keys (cleanup.policy),
// computed against the key's current value; APPEND/SUBTRACT on any other key
// is INVALID_CONFIG, as in Kafka. A resource named twice, or a key named twice
// in one resource, is INVALID_REQUEST.

import { alterConfigs } from '../../protocol/kafka/apis/alter-configs/schema.js';
import { incrementalAlterConfigs } from '../../protocol/kafka/apis/incremental-alter-configs/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { ResourceResult } from '../../controller/config-control.js';
import { effectiveBrokerConfig, effectiveTopicConfig } from '../../metadata/config-defs.js';
import type { MetadataImage } from '../../metadata/image.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiSpec } from '../../protocol/kafka/schema.js';
import type { KafkaApiHandler, KafkaRequestContext } from './api.js';
import { duplicated, duplicateError, errorOf, itemError, NO_ERROR, type KafkaItemError } from './admin-items.js';
import { configDefOf, LIST_CONFIGS, ResourceType, sluiceResource, type SluiceResource } from './config-resources.js';

interface AlterableConfig { readonly name: string; readonly value: string | null; readonly configOperation: number }
interface Resource { readonly resourceType: number; readonly resourceName: string; readonly configs: AlterableConfig[] }

/** What the controller is asked to do to one resource. */
interface Change { readonly set: Record<string, string>; readonly delete: string[] }

const OP_SET = 0;
const OP_DELETE = 1;
const OP_APPEND = 2;
const OP_SUBTRACT = 3;

function currentValue(image: MetadataImage, r: SluiceResource, name: string): string {
  const cluster = image.config('cluster', '');
  if (!configDefOf(r.resourceType, name)) return '';
  return r.resourceType === 'topic' ? effectiveTopicConfig(name, image.config('topic', r.resourceName), cluster) : effectiveBrokerConfig(name, cluster);
}

function listOf(value: string): string[] {
  return value.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
}

/** The legacy API: the named keys are the resource's whole dynamic config. */
function replaceAll(image: MetadataImage, r: SluiceResource, configs: readonly AlterableConfig[]): Change {
  const set: Record<string, string> = {};
  const del = new Set<string>(image.config(r.resourceType, r.resourceName).keys());
  for (const c of configs) {
    if (c.value === null) continue;
    set[c.name] = c.value;
    del.delete(c.name);
  }
  return { set, delete: [...del] };
}

function incremental(image: MetadataImage, r: SluiceResource, configs: readonly AlterableConfig[]): Change | KafkaItemError {
  const set: Record<string, string> = {};
  const del: string[] = [];
  for (const c of configs) {
    if (c.configOperation === OP_DELETE) { del.push(c.name); continue; }
    if (c.configOperation < OP_SET || c.configOperation > OP_SUBTRACT) return itemError(Errors.INVALID_REQUEST, `unknown config operation ${c.configOperation} for ${c.name}`);
    if (c.value === null) return itemError(Errors.INVALID_REQUEST, `null value for ${c.name}`);
    if (c.configOperation === OP_SET) { set[c.name] = c.value; continue; }
    if (!LIST_CONFIGS.has(c.name)) return itemError(Errors.INVALID_CONFIG, `${c.name} is not a list: APPEND and SUBTRACT apply to list configs only`);
    const now = listOf(currentValue(image, r, c.name));
    const items = listOf(c.value);
    const next = c.configOperation === OP_APPEND ? [...now, ...items.filter((v) => !now.includes(v))] : now.filter((v) => !items.includes(v));
    set[c.name] = next.join(',');
  }
  return { set, delete: del };
}

type Plan = (image: MetadataImage, r: SluiceResource, configs: readonly AlterableConfig[]) => Change | KafkaItemError;

async function alterAll(req: Struct, ctx: KafkaRequestContext, plan: Plan): Promise<Struct> {
  const resources = req.resources as Resource[];
  const image = ctx.deps.image();
  const twice = duplicated(resources.map((r) => `${r.resourceType}:${r.resourceName}`));
  const results: Struct[] = resources.map((r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, ...NO_ERROR }));
  const asked: Array<{ index: number; resource: SluiceResource; change: Change }> = [];
  resources.forEach((r, index) => {
    const fail = (e: KafkaItemError): void => { Object.assign(results[index]!, e); };
    if (twice.has(`${r.resourceType}:${r.resourceName}`)) return fail(duplicateError(`resource ${r.resourceName}`));
    // One broker's own dynamic configs: Sluice has none, so deleting some (what
    // kafka-reassign-partitions --verify does to clear throttles on every
    // broker) or replacing them with nothing already holds.
    if (r.resourceType === ResourceType.BROKER && /^\d+$/.test(r.resourceName) && image.brokers.has(Number(r.resourceName))
      && r.configs.every((c) => c.configOperation === OP_DELETE)) return;
    const resource = sluiceResource(image, r.resourceType, r.resourceName, true);
    if ('errorCode' in resource) return fail(resource);
    const keys = duplicated(r.configs.map((c) => c.name));
    if (keys.size > 0) return fail(duplicateError(`config ${[...keys].join(', ')}`));
    const change = plan(image, resource, r.configs);
    if ('errorCode' in change) return fail(change);
    asked.push({ index, resource, change });
  });
  if (asked.length > 0) {
    try {
      const answer = await ctx.deps.controller<{ resources: ResourceResult[] }>('alterConfigs', {
        resources: asked.map((a) => ({ ...a.resource, set: a.change.set, delete: a.change.delete })),
        validateOnly: req.validateOnly === true,
      });
      answer.resources.forEach((res, i) => Object.assign(results[asked[i]!.index]!, { errorCode: res.errorCode, errorMessage: res.errorMessage }));
    } catch (err) {
      for (const a of asked) Object.assign(results[a.index]!, errorOf(err));
    }
  }
  return { throttleTimeMs: 0, responses: results };
}

function handler(spec: KafkaApiSpec, maxVersion: number, plan: Plan): KafkaApiHandler {
  return {
    spec,
    minVersion: 0,
    maxVersion,
    handle: (req, ctx) => alterAll(req, ctx, plan),
    errorResponse(req, errorCode, errorMessage) {
      return { responses: (req.resources as Resource[]).map((r) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName })) };
    },
  };
}

export const alterConfigsHandler = handler(alterConfigs, 2, replaceAll);
export const incrementalAlterConfigsHandler = handler(incrementalAlterConfigs, 1, incremental);
