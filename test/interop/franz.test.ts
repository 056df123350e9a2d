// franz-go against the Kafka listener (issue 14): its idempotent producer,
// a consumer group with the cooperative-sticky balancer going through an
// incremental rebalance, and kadm's create/delete topic. The program is
// test/interop/franz (built by scripts/interop-tools.sh); the checks are the
// shared ones in client-scenarios.ts.

import { adminCreateDelete, cooperativeGroup, produceAndCheck } from './client-scenarios.js';
import { CLUSTER_UP_MS, NEEDS, createTopic, requireApis, startOrSkip, toolOrSkip, uniqueName, type KafkaTarget, type Tool } from './kafka-kit.js';

describe('interop: franz-go', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let franz: Tool;

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    franz = toolOrSkip(this, 'franz');
    target = await startOrSkip(this);
  });

  after(async () => {
    await target?.stop();
  });

  it('produces idempotently: every record acknowledged once, offsets without gaps', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read);
    const topic = uniqueName('franz-produce');
    await createTopic(target!, topic, 3);
    await produceAndCheck(target!, franz, topic, 200, 'franz');
  });

  it('splits a cooperative-sticky group incrementally and commits what it read', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
    await cooperativeGroup(target!, franz, 'franz');
  });

  it('creates and deletes a topic with kadm', async function () {
    requireApis(this, target!, NEEDS.topics, 'CreateTopics', NEEDS.deleteTopics);
    await adminCreateDelete(target!, franz, 'franz');
  });
});
