import { expect } from 'chai';
import { DEFAULT_LOG_CONFIG, NEVER, logConfigFrom, logManagerConfigFrom, validateLogConfig } from '../../src/storage/log-config.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';

describe('log config', () => {
  it("has Kafka's defaults", () => {
    expect(DEFAULT_LOG_CONFIG).to.deep.include({
      segmentBytes: 1073741824,
      segmentMs: 604800000,
      segmentIndexBytes: 10485760,
      indexIntervalBytes: 4096,
      retentionMs: 604800000,
      retentionBytes: -1,
      maxMessageBytes: 1048588,
      flushMessages: NEVER,
      flushMs: NEVER,
    });
  });

  it('reads topic-level and broker-level names, the topic-level one winning', () => {
    const c = logConfigFrom({ 'log.segment.bytes': '2048', 'retention.ms': 5, 'log.retention.ms': '9', 'cleanup.policy': 'delete' });
    expect(c.segmentBytes).to.equal(2048);
    expect(c.retentionMs).to.equal(5);
    expect(logConfigFrom({ 'flush.messages': '9223372036854775807' }).flushMessages).to.equal(NEVER);
  });

  it('rejects values out of range or not integers', () => {
    for (const props of [{ 'segment.bytes': '10' }, { 'segment.bytes': String(2 ** 31) }, { 'retention.ms': '-2' }, { 'flush.messages': '0' }, { 'segment.ms': 'soon' }, { 'segment.ms': '' }]) {
      expect(() => logConfigFrom(props), JSON.stringify(props)).to.throw().that.satisfies((e: unknown) => isSluiceError(e, Errors.INVALID_CONFIG));
    }
    expect(() => validateLogConfig({ ...DEFAULT_LOG_CONFIG, indexIntervalBytes: 1.5 })).to.throw();
  });

  it('reads log manager intervals', () => {
    expect(logManagerConfigFrom({ 'log.retention.check.interval.ms': '1000' }).retentionCheckIntervalMs).to.equal(1000);
    expect(logManagerConfigFrom({}).highWatermarkCheckpointIntervalMs).to.equal(5000);
  });
});
