// Sluice through its real clients (issue 19): the 'client' deployments'
// workloads on a real 3-node cluster, tiny sizes. The Producer loop of
// single-record send() calls acknowledges exactly the records asked for
// (1 and 2 producers, a partition each), Consumer.run() in a group reads
// every one of them back once per partition end, and the e2e run through
// Producer and a group member yields latencies. No timing is asserted.
import { expect } from 'chai';
import { sendWindowRecords, TUNED_CLIENT } from '../../bench/suite/sluice-client.js';
import { sluiceRf1Client, sluiceRf3ClientTuned } from '../../bench/suite/sluice.js';
import { isAlive } from '../../bench/suite/runner.js';

const RECORDS = 3_000;

describe('bench suite: Sluice through its Producer and Consumer.run()', function () {
  this.timeout(240_000);

  it('bounds the records a producer keeps outstanding by bytes, with a floor', () => {
    expect(sendWindowRecords(100)).to.equal(10_485);
    expect(sendWindowRecords(1024)).to.equal(1_024);
    expect(sendWindowRecords(64 * 1024)).to.equal(1_000);
    expect(sluiceRf3ClientTuned(TUNED_CLIENT).variant).to.include('lingerMs=10 batchBytes=262144');
  });

  it('produces with send() per record, reads back through a group, and measures e2e', async () => {
    const d = sluiceRf1Client();
    let pids: readonly number[] = [];
    try {
      await d.start();
      pids = d.serverPids();
      const one = await d.produce({ records: RECORDS, seconds: 30, valueBytes: 100, producers: 1 }, () => undefined);
      expect(one.records).to.equal(RECORDS);
      expect(one.bytes).to.equal(RECORDS * 100);
      expect((await d.consume({ records: one.records, seconds: 30, consumers: 1 }, () => undefined)).records, 'a one-member group reads exactly what was produced').to.equal(RECORDS);
      const two = await d.produce({ records: RECORDS, seconds: 30, valueBytes: 1024, producers: 2 }, () => undefined);
      expect(two.records).to.equal(RECORDS);
      const grouped = await d.consume({ records: two.records, seconds: 30, consumers: 2 }, () => undefined);
      expect(grouped.records).to.be.at.least(RECORDS); // a rebalance may deliver some twice (counted as work done)
      const l = await d.e2e({ ratePerS: 500, seconds: 1, warmupSeconds: 0.5, valueBytes: 100 }, () => undefined);
      expect(l.records).to.be.greaterThan(0);
      expect(l.p99Ms).to.be.at.least(l.p50Ms);
    } finally {
      await d.stop();
    }
    expect(pids.filter(isAlive)).to.deep.equal([]);
  });
});
