// DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) on the
// Kafka listener. Describe is answered from this broker's metadata image
// (mechanisms and iteration counts only); Alter derives the keys from the
// client's salted password (security/sasl/scram-admin.ts) and is forwarded
// to the active controller, like the other admin APIs.

import { describeUserScramCredentials as describeSpec } from '../../protocol/kafka/apis/describe-user-scram-credentials/schema.js';
import { alterUserScramCredentials as alterSpec } from '../../protocol/kafka/apis/alter-user-scram-credentials/schema.js';
import { describeUserScramCredentials, type ScramAlterationResult } from '../../controller/scram-control.js';
import { derivedUpsertion, type SaltedUpsertion } from '../../security/sasl/scram-admin.js';
import type { KafkaApiHandler } from './api.js';
import { errorOf } from './admin-items.js';

export const describeUserScramCredentialsHandler: KafkaApiHandler = {
  spec: describeSpec,
  minVersion: 0,
  maxVersion: 0,
  handle(req, ctx) {
    const users = req.users as Array<{ name: string }> | null;
    const results = describeUserScramCredentials(ctx.deps.image(), users === null ? null : users.map((u) => u.name));
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, results };
  },
  errorResponse: (_req, errorCode, errorMessage) => ({ throttleTimeMs: 0, errorCode, errorMessage, results: [] }),
};

export const alterUserScramCredentialsHandler: KafkaApiHandler = {
  spec: alterSpec,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    const deletions = req.deletions as Array<{ name: string; mechanism: number }>;
    const upsertions = req.upsertions as SaltedUpsertion[];
    try {
      const answer = await ctx.deps.controller<{ results: ScramAlterationResult[] }>('alterUserScramCredentials', {
        deletions: deletions.map((d) => ({ name: d.name, mechanism: d.mechanism })),
        upsertions: upsertions.map(derivedUpsertion),
      });
      return { throttleTimeMs: 0, results: answer.results };
    } catch (err) {
      const e = errorOf(err);
      const users = [...new Set([...deletions, ...upsertions].map((x) => x.name))];
      return { throttleTimeMs: 0, results: users.map((user) => ({ user, ...e })) };
    }
  },
  errorResponse(req, errorCode, errorMessage) {
    const items = [...(req.deletions as Array<{ name: string }>), ...(req.upsertions as Array<{ name: string }>)];
    return { throttleTimeMs: 0, results: [...new Set(items.map((x) => x.name))].map((user) => ({ user, errorCode, errorMessage })) };
  },
};
