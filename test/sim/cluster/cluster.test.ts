import { strict as assert } from 'node:assert';
import { startCluster, type SimCluster } from './cluster.js';
import './sim-world.js';

describe('sim/cluster: real nodes on the simulated world', function () {
  this.timeout(120_000);
  let c: SimCluster | undefined;
  afterEach(async () => {
    await c?.stop();
    c = undefined;
  });

  it('boots three controllers and a broker-only node; a controller leads and every broker is unfenced', async () => {
    c = await startCluster({ seed: 1 });
    assert.ok(c.controllerLeader() !== undefined);
    assert.equal(c.nodes().filter((n) => n.state === 'up').length, 4);
  });
});
