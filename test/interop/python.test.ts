// confluent-kafka for Python (librdkafka) against the Kafka listener (issue
// 14): its idempotent producer, a consumer group with the cooperative-sticky
// assignor going through an incremental rebalance, and AdminClient's
// create/delete topics. The program is test/interop/python/interop.py, run in
// the venv scripts/interop-tools.sh makes; the checks are the shared ones in
// client-scenarios.ts.

import { adminCreateDelete, cooperativeGroup, produceAndCheck } from './client-scenarios.js';
import { CLUSTER_UP_MS, NEEDS, createTopic, requireApis, startOrSkip, toolOrSkip, uniqueName, type KafkaTarget, type Tool } from './kafka-kit.js';

describe('interop: confluent-kafka (Python)', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let python: Tool;

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    python = toolOrSkip(this, 'python');
    target = await startOrSkip(this);
  });

  after(async () => {
    await target?.stop();
  });

  it('produces idempotently: every record acknowledged once, offsets without gaps', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read);
    const topic = uniqueName('python-produce');
    await createTopic(target!, topic, 3);
    await produceAndCheck(target!, python, topic, 200, 'python');
  });

  it('splits a cooperative-sticky group incrementally and commits what it read', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
    await cooperativeGroup(target!, python, 'python');
  });

  it('creates and deletes a topic with AdminClient', async function () {
    requireApis(this, target!, NEEDS.topics, 'CreateTopics', NEEDS.deleteTopics);
    await adminCreateDelete(target!, python, 'python');
  });
});
