import { expect } from 'chai';
import { configValueProblem, throttledReplicasInclude, topicConfigDef } from '../../src/metadata/config-defs.js';

describe('metadata/config-defs: throttled-replica lists', () => {
  const leader = topicConfigDef('leader.replication.throttled.replicas')!;

  it('accepts Kafka\'s forms (empty, *, partition:broker pairs) and refuses others', () => {
    for (const ok of ['', '*', '0:1', '0:1,1:2,3:3', '0:1, 1:2']) expect(configValueProblem(leader, ok), ok).to.equal(null);
    for (const bad of ['x', '0', '0:', ':1', '*,0:1', '0:1;1:2']) expect(configValueProblem(leader, bad), bad).to.match(/partition:broker/);
    expect(topicConfigDef('follower.replication.throttled.replicas')).to.not.equal(undefined);
  });

  it('names a replica when listed or when the list is *', () => {
    expect(throttledReplicasInclude('*', 4, 2)).to.equal(true);
    expect(throttledReplicasInclude('0:1,4:2', 4, 2)).to.equal(true);
    expect(throttledReplicasInclude('0:1,4:3', 4, 2)).to.equal(false);
    expect(throttledReplicasInclude('', 0, 1)).to.equal(false);
  });
});
