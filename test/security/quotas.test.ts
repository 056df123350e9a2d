// Client quotas without sockets: the quota manager on a manual clock (rates,
// windows, Kafka's throttle formula, entity precedence), the controller's
// alter/describe commands with Kafka's error codes, and quotas through the
// metadata delta, snapshot records and codec.

import { expect } from 'chai';
import { ManualClock } from '../../src/util/clock.js';
import { MetadataDelta, imageFromRecords } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { decodeMetadataRecords, encodeMetadataRecords } from '../../src/metadata/codec.js';
import { QuotaManager, candidateEntities } from '../../src/security/quota-manager.js';
import { alterClientQuotas, describeClientQuotas, MATCH_DEFAULT, MATCH_EXACT, MATCH_SPECIFIED, type AlterQuotaEntry } from '../../src/controller/quota-control.js';
import { BrokerHeartbeats } from '../../src/controller/decisions/broker-heartbeats.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';
import type { CommandContext } from '../../src/controller/context.js';
import { Errors } from '../../src/util/errors.js';

const user = (name: string | null) => ({ entityType: 'user', entityName: name });
const client = (name: string | null) => ({ entityType: 'client-id', entityName: name });
const set = (key: string, value: number) => ({ key, value, remove: false });

class Quotas {
  image = MetadataImage.EMPTY;
  private offset = 0;
  readonly clock = new ManualClock();

  ctx(): CommandContext {
    return { image: this.image, nextOffset: this.offset + 1, clock: this.clock, rng: new SeededRng(1), heartbeats: new BrokerHeartbeats(this.clock, 9000), logger: silentLogger };
  }

  alter(entries: AlterQuotaEntry[], validateOnly = false): Array<{ errorCode: number; errorMessage: string | null }> {
    const { records, response } = alterClientQuotas(this.ctx(), entries, validateOnly);
    if (records.length > 0) {
      const delta = new MetadataDelta(this.image);
      delta.replayBatch(records, ++this.offset);
      this.image = delta.apply();
    }
    return response;
  }
}

describe('client quotas: the quota manager', () => {
  function manager(entries: AlterQuotaEntry[], windows = { windowNum: 11, windowSizeMs: 1000 }): { m: QuotaManager; clock: ManualClock } {
    const q = new Quotas();
    for (const r of q.alter(entries)) expect(r.errorCode).to.equal(0);
    const clock = new ManualClock();
    const m = new QuotaManager(clock, windows);
    m.setQuotas(q.image.clientQuotas);
    return { m, clock };
  }

  it('measures a rate over at least windowNum - 1 windows and throttles by Kafka\'s formula', () => {
    const { m, clock } = manager([{ entity: [user(null)], ops: [set('producer_byte_rate', 1000)] }]);
    const alice = { user: 'alice', clientId: 'p' };
    // 10,000 bytes in the first instant: rate = 10000 / 10 s = 1000 B/s, exactly the bound.
    expect(m.record('produce', alice, 10_000)).to.equal(0);
    // One more byte: rate 1000.1 → throttle (0.1 / 1000) × 10 s = 1 ms.
    expect(m.record('produce', alice, 1)).to.equal(1);
    // 5,000 more: rate 1500.1 → (500.1 / 1000) × 10000 ms = 5001 ms.
    expect(m.record('produce', alice, 5000)).to.equal(5001);
    // The span only grows past (windowNum - 1) windows: 5 s later it is 10.001 s, still over.
    clock.advance(5001);
    expect(m.record('produce', alice, 0)).to.equal(Math.round(((15_001 / 10.001 - 1000) / 1000) * 10_001));
    // Once the burst's sample is older than windowNum windows it no longer counts.
    clock.advance(6000);
    expect(m.record('produce', alice, 0)).to.equal(0);
  });

  it('forgets samples older than windowNum windows', () => {
    const { m, clock } = manager([{ entity: [user(null)], ops: [set('producer_byte_rate', 100)] }], { windowNum: 3, windowSizeMs: 1000 });
    const c = { user: 'u', clientId: '' };
    expect(m.record('produce', c, 1000)).to.be.greaterThan(0);
    clock.advance(3000);
    // The burst's sample (started 3 s ago) is gone: only the new value counts, over the minimum 2 windows.
    expect(m.record('produce', c, 200)).to.equal(0);
    expect(m.record('produce', c, 1)).to.equal(Math.round(((201 / 2 - 100) / 100) * 2000));
  });

  it('caps request_percentage throttles at one window', () => {
    const { m } = manager([{ entity: [client('busy')], ops: [set('request_percentage', 1)] }]);
    // 100 percent-seconds at once over a 10 s span = 10 %, ten times the bound: uncapped 90 s.
    expect(m.record('request', { user: 'ANONYMOUS', clientId: 'busy' }, 100)).to.equal(1000);
  });

  it('picks the first entity in Kafka\'s precedence that sets the key, per key', () => {
    const { m } = manager([
      { entity: [client(null)], ops: [set('producer_byte_rate', 8)] },
      { entity: [client('c')], ops: [set('producer_byte_rate', 7)] },
      { entity: [user(null)], ops: [set('producer_byte_rate', 6)] },
      { entity: [user(null), client(null)], ops: [set('producer_byte_rate', 5)] },
      { entity: [user(null), client('c')], ops: [set('producer_byte_rate', 4)] },
      { entity: [user('u')], ops: [set('producer_byte_rate', 3), set('consumer_byte_rate', 30)] },
      { entity: [user('u'), client(null)], ops: [set('producer_byte_rate', 2)] },
      { entity: [user('u'), client('c')], ops: [set('producer_byte_rate', 1)] },
    ]);
    expect(m.match('produce', { user: 'u', clientId: 'c' })!.bound).to.equal(1);
    expect(m.match('produce', { user: 'u', clientId: 'x' })!.bound).to.equal(2);
    expect(m.match('produce', { user: 'v', clientId: 'c' })!.bound).to.equal(4);
    expect(m.match('produce', { user: 'v', clientId: 'x' })!.bound).to.equal(5);
    // consumer_byte_rate is only set on user=u: that applies whatever the client id, and no one else has one.
    expect(m.match('fetch', { user: 'u', clientId: 'c' })!.bound).to.equal(30);
    expect(m.match('fetch', { user: 'v', clientId: 'c' })).to.equal(null);
    expect(candidateEntities({ user: 'u', clientId: 'c' })).to.have.length(8);
  });

  it('shares one rate among the clients of a user quota, and gives each user its own under the default', () => {
    const { m } = manager([
      { entity: [user('alice')], ops: [set('producer_byte_rate', 100)] },
      { entity: [user(null)], ops: [set('producer_byte_rate', 100)] },
    ]);
    expect(m.record('produce', { user: 'alice', clientId: 'a1' }, 1000)).to.equal(0);
    // alice's second client id shares her bucket: over at once.
    expect(m.record('produce', { user: 'alice', clientId: 'a2' }, 500)).to.be.greaterThan(0);
    // bob falls under user=<default> but is measured on his own.
    expect(m.record('produce', { user: 'bob', clientId: 'a1' }, 1000)).to.equal(0);
    expect(m.match('produce', { user: 'bob', clientId: 'x' })!.metric).to.deep.equal({ user: 'bob', clientId: '' });
    const stats = m.stats();
    expect(stats.find((s) => s.user === 'alice')!.throttledCount).to.equal(1);
    expect(stats.find((s) => s.user === 'bob')!.throttledCount).to.equal(0);
  });

  it('measures nothing without a quota', () => {
    const { m } = manager([]);
    expect(m.enabled).to.equal(false);
    expect(m.record('produce', { user: 'x', clientId: 'y' }, 1e12)).to.equal(0);
    expect(m.stats()).to.deep.equal([]);
  });
});

describe('client quotas: alter and describe', () => {
  it('sets, replaces and removes keys; removing the last drops the entity', () => {
    const q = new Quotas();
    expect(q.alter([{ entity: [user('alice')], ops: [set('producer_byte_rate', 1024), set('request_percentage', 50.5)] }])[0]!.errorCode).to.equal(0);
    q.alter([{ entity: [user('alice')], ops: [set('producer_byte_rate', 2048), { key: 'request_percentage', value: 0, remove: true }] }]);
    const d = describeClientQuotas(q.image, [{ entityType: 'user', matchType: MATCH_EXACT, match: 'alice' }], false);
    expect(d.entries).to.deep.equal([{ entity: [{ entityType: 'user', entityName: 'alice' }], values: [{ key: 'producer_byte_rate', value: 2048 }] }]);
    q.alter([{ entity: [user('alice')], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }]);
    expect(q.image.clientQuotas.size).to.equal(0);
  });

  it('validateOnly changes nothing', () => {
    const q = new Quotas();
    expect(q.alter([{ entity: [client('c')], ops: [set('consumer_byte_rate', 10)] }], true)[0]!.errorCode).to.equal(0);
    expect(q.image.clientQuotas.size).to.equal(0);
  });

  it('refuses bad entries with INVALID_REQUEST, each on its own', () => {
    const q = new Quotas();
    const res = q.alter([
      { entity: [user('ok')], ops: [set('producer_byte_rate', 1)] },
      { entity: [user('a')], ops: [set('producer_bytes_rate', 1)] },
      { entity: [user('a')], ops: [set('producer_byte_rate', -5)] },
      { entity: [user('a')], ops: [set('producer_byte_rate', 1.5)] },
      { entity: [{ entityType: 'group', entityName: 'g' }], ops: [set('producer_byte_rate', 1)] },
      { entity: [], ops: [set('producer_byte_rate', 1)] },
      { entity: [user('a'), user('b')], ops: [set('producer_byte_rate', 1)] },
    ]);
    expect(res.map((r) => r.errorCode)).to.deep.equal([0, ...Array(6).fill(Errors.INVALID_REQUEST.code)]);
    expect(res[1]!.errorMessage).to.contain('invalid configuration key producer_bytes_rate');
    expect(res[4]!.errorMessage).to.contain('unhandled client quota entity type: group');
    expect([...q.image.clientQuotas.values()].map((e) => e.entity)).to.deep.equal([{ user: 'ok' }]);
  });

  it('filters with exact, default and specified matches, strict or not', () => {
    const q = new Quotas();
    q.alter([
      { entity: [user('alice')], ops: [set('producer_byte_rate', 1)] },
      { entity: [user(null)], ops: [set('producer_byte_rate', 2)] },
      { entity: [user('alice'), client('app')], ops: [set('producer_byte_rate', 3)] },
      { entity: [client(null)], ops: [set('producer_byte_rate', 4)] },
    ]);
    const values = (d: ReturnType<typeof describeClientQuotas>) => d.entries!.map((e) => e.values[0]!.value).sort();
    expect(values(describeClientQuotas(q.image, [], false))).to.deep.equal([1, 2, 3, 4]);
    expect(values(describeClientQuotas(q.image, [{ entityType: 'user', matchType: MATCH_EXACT, match: 'alice' }], false))).to.deep.equal([1, 3]);
    expect(values(describeClientQuotas(q.image, [{ entityType: 'user', matchType: MATCH_EXACT, match: 'alice' }], true))).to.deep.equal([1]);
    expect(values(describeClientQuotas(q.image, [{ entityType: 'user', matchType: MATCH_DEFAULT, match: null }], false))).to.deep.equal([2]);
    expect(values(describeClientQuotas(q.image, [{ entityType: 'client-id', matchType: MATCH_SPECIFIED, match: null }], false))).to.deep.equal([3]);
    expect(describeClientQuotas(q.image, [{ entityType: 'topic', matchType: MATCH_SPECIFIED, match: null }], false).errorCode).to.equal(Errors.UNSUPPORTED_VERSION.code);
    expect(describeClientQuotas(q.image, [{ entityType: 'user', matchType: MATCH_EXACT, match: null }], false).errorCode).to.equal(Errors.INVALID_REQUEST.code);
    expect(describeClientQuotas(q.image, [{ entityType: 'user', matchType: 7, match: null }], false).errorCode).to.equal(Errors.INVALID_REQUEST.code);
  });

  it('survives a snapshot and the codec', () => {
    const q = new Quotas();
    q.alter([
      { entity: [user(null), client('c')], ops: [set('consumer_byte_rate', 5e6)] },
      { entity: [user('<default>')], ops: [set('request_percentage', 12.5)] },
    ]);
    const records: MetadataRecord[] = decodeMetadataRecords(encodeMetadataRecords(q.image.toRecords()));
    const again = imageFromRecords(records, q.image.offset);
    const flat = (img: MetadataImage) => [...img.clientQuotas.entries()].sort().map(([k, e]) => [k, e.entity, [...e.values]]);
    expect(flat(again)).to.deep.equal(flat(q.image));
    // A user literally named "<default>" is not the default.
    expect(again.clientQuotas.size).to.equal(2);
    expect(() => decodeMetadataRecords(encodeMetadataRecords([{ type: 'clientQuota', v: 1, entity: [{ entityType: 'ip', entityName: null }], key: 'k', value: 1, remove: false } as unknown as MetadataRecord]))).to.throw(/not a valid quotaEntity/);
  });
});

describe('client quotas: CLI flags and metrics', () => {
  it('reads the entity from --user/--client-id or kafka-configs-style flags, and refuses contradictions', async () => {
    const { entityOf, parseQuotaValues } = await import('../../src/cli/commands/quotas.js');
    const none = { userDefault: false, clientIdDefault: false, entityDefault: false };
    expect(entityOf({ ...none, user: 'alice', clientIdDefault: true })).to.deep.equal([{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }]);
    expect(entityOf({ ...none, entityType: 'clients', entityName: 'app' })).to.deep.equal([{ entityType: 'client-id', entityName: 'app' }]);
    expect(entityOf({ ...none, entityType: 'users', entityDefault: true, clientId: 'c' })).to.deep.equal([{ entityType: 'user', entityName: null }, { entityType: 'client-id', entityName: 'c' }]);
    expect(() => entityOf({ ...none, entityType: 'topics', entityName: 'x' })).to.throw(/users or clients/);
    expect(() => entityOf({ ...none, user: 'a', entityType: 'users', entityName: 'b' })).to.throw(/named twice/);
    expect(() => entityOf({ ...none, user: 'a', userDefault: true })).to.throw(/not both/);
    expect(parseQuotaValues(['producer_byte_rate=10,consumer_byte_rate=20', 'request_percentage=2.5'])).to.deep.equal({ producer_byte_rate: 10, consumer_byte_rate: 20, request_percentage: 2.5 });
    expect(() => parseQuotaValues(['producer_byte_rate=lots'])).to.throw(/must be a number/);
  });

  it('counts throttle time per quota, user and client id in the node metrics', async () => {
    const { NodeMetrics } = await import('../../src/server/metrics.js');
    const m = new NodeMetrics({ defaultMetrics: false });
    m.onThrottle('produce', 'alice', '', 120);
    m.onThrottle('produce', 'alice', '', 30);
    const text = await m.text();
    expect(text).to.contain('sluice_client_quota_throttle_time_ms_total{quota="produce",user="alice",client_id=""} 150');
    expect(text).to.contain('sluice_client_quota_throttled_requests_total{quota="produce",user="alice",client_id=""} 2');
  });
});
