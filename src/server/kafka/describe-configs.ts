// DescribeConfigs on the Kafka listener: each resource is asked of the active
// controller (so a describe right after an alter sees it), then shown in
// Kafka's terms — source and type by Kafka's numbers, synonyms (v1+, when
// asked) from this broker's image, documentation (v3+, when asked).
// v0 (isDefault instead of a source) is below Kafka 4's range and not served.

import { describeConfigs } from '../../protocol/kafka/apis/describe-configs/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { DescribedConfig } from '../../controller/config-control.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler, KafkaRequestContext } from './api.js';
import { errorOf, NO_ERROR } from './admin-items.js';
import { kafkaConfigType, kafkaSource, sluiceResource, synonymsOf, type SluiceResource } from './config-resources.js';

interface Resource { readonly resourceType: number; readonly resourceName: string; readonly configurationKeys: string[] | null }

interface ControllerDescribe { readonly errorCode: number; readonly errorMessage: string | null; readonly configs?: DescribedConfig[] }

function entry(ctx: KafkaRequestContext, req: Struct, res: SluiceResource, c: DescribedConfig): Struct {
  return {
    name: c.name,
    value: c.value,
    readOnly: false,
    isDefault: c.source === 'default',
    configSource: kafkaSource(c.source),
    isSensitive: false,
    synonyms: req.includeSynonyms === true ? synonymsOf(ctx.deps.image(), res, c.name) : [],
    configType: kafkaConfigType(res.resourceType, c.name),
    documentation: req.includeDocumentation === true ? c.doc : null,
  };
}

async function describeOne(ctx: KafkaRequestContext, req: Struct, r: Resource): Promise<Struct> {
  const base = { resourceType: r.resourceType, resourceName: r.resourceName, configs: [] };
  const res = sluiceResource(ctx.deps.image(), r.resourceType, r.resourceName, false);
  if ('errorCode' in res) return { ...base, ...res };
  const answer = await ctx.deps.controller<ControllerDescribe>('describeConfigs', { resourceType: res.resourceType, resourceName: res.resourceName });
  if (answer.errorCode !== 0 || !answer.configs) {
    return { ...base, errorCode: answer.errorCode || Errors.UNKNOWN_SERVER_ERROR.code, errorMessage: answer.errorMessage };
  }
  const keys = r.configurationKeys === null ? null : new Set(r.configurationKeys);
  const configs = answer.configs.filter((c) => keys === null || keys.has(c.name)).map((c) => entry(ctx, req, res, c));
  return { ...base, ...NO_ERROR, configs };
}

export const describeConfigsHandler: KafkaApiHandler = {
  spec: describeConfigs,
  minVersion: 1,
  maxVersion: 4,
  async handle(req, ctx) {
    const resources = req.resources as Resource[];
    const results = await Promise.all(resources.map((r) => describeOne(ctx, req, r).catch((err: unknown) => ({
      resourceType: r.resourceType, resourceName: r.resourceName, configs: [], ...errorOf(err),
    }))));
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, errorCode, errorMessage) {
    const resources = req.resources as Resource[];
    return { results: resources.map((r) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })) };
  },
};
