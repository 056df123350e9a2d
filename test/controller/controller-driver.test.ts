// The controller driver on its own: events in, effects out, time from a
// ManualClock — no Raft node, no timers, no promises. Each case steps the
// driver through one rule of its header (roles, batching, the barrier after
// an unknown outcome, reactivation, the fencing schedule).
import { expect } from 'chai';
import { ControllerDriver, type AnyCommand, type ControllerEffect } from '../../src/controller/controller-driver.js';
import { brokerHeartbeat, registerBroker } from '../../src/controller/cluster-control.js';
import { imageWithRecords } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { decodeMetadataRecords } from '../../src/metadata/codec.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';

const CONFIG: MetadataRecord = { type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name: 'num.partitions', value: '3' };
const write: AnyCommand = () => ({ records: [CONFIG], response: 'written' });
const read: AnyCommand = (c) => ({ records: [], response: c.image.offset });

/** A driver over an image that commits what it is told to (apply()). */
function setup(opts: { fenceCheckIntervalMs?: number; batchCommandsMax?: number } = {}) {
  const clock = new ManualClock();
  let image = MetadataImage.EMPTY;
  let lastIndex = 0;
  const driver = new ControllerDriver({
    clusterId: 'c', clock, rng: new SeededRng(1), logger: silentLogger, reactivateDelayMs: 100,
    view: { image: () => image, lastIndex: () => lastIndex }, ...opts,
  });
  return {
    driver, clock,
    /** The effects since the last call, by kind. */
    take: (): ControllerEffect[] => driver.takeEffects(),
    /** Appends and applies `data` as the next entry; returns its index. */
    commit(data: Uint8Array): number {
      lastIndex++;
      if (data.length > 0) image = imageWithRecords(image, decodeMetadataRecords(data));
      return lastIndex;
    },
    get image() {
      return image;
    },
  };
}

function only<K extends ControllerEffect['kind']>(effects: ControllerEffect[], kind: K): Extract<ControllerEffect, { kind: K }>[] {
  return effects.filter((e): e is Extract<ControllerEffect, { kind: K }> => e.kind === kind);
}

/** Leader in `term`, read index done: active, with the bootstrap (cluster record) proposal in flight. */
function activate(t: ReturnType<typeof setup>, term = 1): Extract<ControllerEffect, { kind: 'propose' }> {
  t.driver.roleChanged('leader', term);
  const [readIndex] = only(t.take(), 'readIndex');
  t.driver.readDone(readIndex!.id, true);
  const effects = t.take();
  expect(only(effects, 'activated')).to.have.length(1);
  const [bootstrap] = only(effects, 'propose');
  return bootstrap!;
}

describe('ControllerDriver', () => {
  it('a standby answers NOT_CONTROLLER at once; a follower never reads', () => {
    const t = setup();
    t.driver.roleChanged('follower', 3);
    const id = t.driver.submit(write);
    expect(t.take()).to.deep.equal([{ kind: 'reply', id, outcome: { ok: false, refusal: { kind: 'notController' } } }]);
  });

  it('activates only after the read index, writes the cluster record, and answers a command once its entry is applied', () => {
    const t = setup();
    t.driver.roleChanged('leader', 1);
    expect(t.driver.isActive, 'not before the read index').to.equal(false);
    const bootstrap = activate(t, 1);
    expect(t.driver.isActive).to.equal(true);
    const id = t.driver.submit(write);
    expect(only(t.take(), 'propose'), 'one proposal in flight at a time').to.have.length(0);
    t.driver.proposalDone(bootstrap.id, { ok: true, index: t.commit(bootstrap.data), term: 1 });
    const [batch] = only(t.take(), 'propose');
    expect(t.image.cluster?.clusterId).to.equal('c');
    t.driver.proposalDone(batch!.id, { ok: true, index: t.commit(batch!.data), term: 1 });
    expect(only(t.take(), 'reply')).to.deep.equal([{ kind: 'reply', id, outcome: { ok: true, response: 'written' } }]);
  });

  it('batches what queued while a proposal was in flight into one entry; record-less commands answer at once', () => {
    const t = setup({ batchCommandsMax: 2 });
    const bootstrap = activate(t);
    const ids = [t.driver.submit(write), t.driver.submit(write), t.driver.submit(write)];
    t.driver.proposalDone(bootstrap.id, { ok: true, index: t.commit(bootstrap.data), term: 1 });
    const [first] = only(t.take(), 'propose');
    expect(decodeMetadataRecords(first!.data)).to.have.length(2);
    t.driver.proposalDone(first!.id, { ok: true, index: t.commit(first!.data), term: 1 });
    const effects = t.take();
    expect(only(effects, 'reply').map((r) => r.id)).to.deep.equal(ids.slice(0, 2));
    const [second] = only(effects, 'propose');
    t.driver.proposalDone(second!.id, { ok: true, index: t.commit(second!.data), term: 1 });
    t.take();
    const r = t.driver.submit(read);
    expect(only(t.take(), 'reply')).to.deep.equal([{ kind: 'reply', id: r, outcome: { ok: true, response: t.image.offset } }]);
  });

  it('after an unknown outcome proposes an empty barrier before the next batch, in the same term only', () => {
    const t = setup();
    const bootstrap = activate(t);
    t.driver.proposalDone(bootstrap.id, { ok: false, notController: false, cause: new Error('timed out') });
    t.take();
    t.driver.submit(write);
    const [barrier] = only(t.take(), 'propose');
    expect(barrier!.barrier).to.equal(true);
    expect(barrier!.data.length).to.equal(0);
    t.driver.proposalDone(barrier!.id, { ok: true, index: t.commit(barrier!.data), term: 1 });
    const [batch] = only(t.take(), 'propose');
    expect(batch!.barrier).to.equal(false);
  });

  it('a failed barrier steps down as controller and activates again after reactivateDelayMs while Raft still leads', () => {
    const t = setup();
    const bootstrap = activate(t);
    t.driver.proposalDone(bootstrap.id, { ok: false, notController: false, cause: new Error('timed out') });
    t.take();
    const id = t.driver.submit(write);
    const [barrier] = only(t.take(), 'propose');
    t.driver.proposalDone(barrier!.id, { ok: false, notController: false, cause: new Error('timed out') });
    const effects = t.take();
    expect(only(effects, 'reply')).to.deep.equal([{ kind: 'reply', id, outcome: { ok: false, refusal: { kind: 'notController' } } }]);
    expect(t.driver.isActive).to.equal(false);
    t.driver.roleChanged('leader', 1);
    expect(only(t.take(), 'readIndex'), 'the same role again changes nothing').to.have.length(0);
    expect(t.driver.nextWakeMs()).to.equal(t.clock.monotonicMs() + 100);
    t.clock.advance(100);
    t.driver.tick();
    expect(only(t.take(), 'readIndex')).to.have.length(1);
    expect(t.driver.counters.termsGivenUp).to.equal(1);
  });

  it('losing the lead answers the queued and the in-flight commands NOT_CONTROLLER, and forgets the proposal', () => {
    const t = setup();
    const bootstrap = activate(t);
    const queued = t.driver.submit(write);
    t.driver.roleChanged('follower', 2);
    const effects = t.take();
    expect(only(effects, 'deactivated')).to.deep.equal([{ kind: 'deactivated', term: 1 }]);
    expect(only(effects, 'reply').map((r) => [r.id, r.outcome])).to.deep.equal([[queued, { ok: false, refusal: { kind: 'notController' } }]]);
    expect(only(effects, 'internalDone').map((e) => e.label)).to.deep.equal(['bootstrap']);
    t.driver.proposalDone(bootstrap.id, { ok: true, index: 1, term: 1 });
    expect(t.take(), 'a late outcome of a forgotten proposal').to.deep.equal([]);
  });

  it('fences a broker whose session expired, on the fencing schedule, never right after activation', () => {
    const t = setup({ fenceCheckIntervalMs: 50 });
    const bootstrap = activate(t);
    t.driver.proposalDone(bootstrap.id, { ok: true, index: t.commit(bootstrap.data), term: 1 });
    t.take();
    t.driver.submit((c) => registerBroker(c, { brokerId: 1, incarnationId: 'i1', clusterId: 'c', endpoints: [], rack: null }));
    const [reg] = only(t.take(), 'propose');
    t.driver.proposalDone(reg!.id, { ok: true, index: t.commit(reg!.data), term: 1 });
    t.take();
    // Registered brokers start fenced; unfence by hand so a session can expire.
    const unfence: AnyCommand = (c) => ({ records: [{ type: 'brokerRegistrationChange', v: 1, brokerId: 1, brokerEpoch: c.image.brokers.get(1)!.brokerEpoch, fenced: false }], response: null });
    t.driver.submit(unfence);
    const [u] = only(t.take(), 'propose');
    t.driver.proposalDone(u!.id, { ok: true, index: t.commit(u!.data), term: 1 });
    t.take();
    t.clock.advance(50);
    t.driver.tick();
    expect(only(t.take(), 'propose'), 'the session is still fresh').to.have.length(0);
    t.clock.advance(60_000);
    t.driver.tick();
    const [fence] = only(t.take(), 'propose');
    expect(decodeMetadataRecords(fence!.data).some((r) => r.type === 'brokerRegistrationChange' && r.fenced === true)).to.equal(true);
  });

  it('fences a silent broker its peer reports the moment its silence reaches the suspect timeout, not at the next periodic check', () => {
    const t = setup({ fenceCheckIntervalMs: 60_000 });
    const bootstrap = activate(t);
    t.driver.proposalDone(bootstrap.id, { ok: true, index: t.commit(bootstrap.data), term: 1 });
    t.take();
    const epochs = new Map<number, number>();
    for (const id of [1, 2]) {
      t.driver.submit((c) => registerBroker(c, { brokerId: id, incarnationId: `i${id}`, clusterId: 'c', endpoints: [], rack: null }));
      const [reg] = only(t.take(), 'propose');
      t.driver.proposalDone(reg!.id, { ok: true, index: t.commit(reg!.data), term: 1 });
      t.take();
      epochs.set(id, t.image.brokers.get(id)!.brokerEpoch);
    }
    // Heartbeats from caught-up brokers unfence them (the real command).
    const beat = (id: number, unreachableBrokers: number[] = []): void => {
      t.driver.submit((c) => brokerHeartbeat(c, { brokerId: id, brokerEpoch: epochs.get(id)!, currentMetadataOffset: 1_000, wantShutdown: false, unreachableBrokers }));
      for (const p of only(t.take(), 'propose')) t.driver.proposalDone(p.id, { ok: true, index: t.commit(p.data), term: 1 });
      t.take();
    };
    beat(1);
    beat(2);
    expect([...t.image.brokers.values()].every((b) => !b.fenced)).to.equal(true);
    t.clock.advance(400);
    beat(1);
    t.clock.advance(300);
    const periodic = t.driver.nextWakeMs()!;
    expect(periodic, 'nothing is reported: the next wake is a periodic one (the rebalance, here)').to.be.at.least(t.clock.monotonicMs() + 29_000);
    beat(2, [1]);
    const due = t.driver.brokerHeartbeats.lastContact(1)! + 1000; // broker.suspect.timeout.ms's default
    expect(t.driver.nextWakeMs(), 'the driver wakes when broker 1 becomes corroborated dead').to.equal(due);
    expect(due).to.be.below(periodic);
    t.clock.advance(due - 1 - t.clock.monotonicMs());
    beat(2, [1]);
    t.driver.tick();
    expect(only(t.take(), 'propose'), 'a moment before the suspect timeout').to.have.length(0);
    t.clock.advance(1);
    t.driver.tick();
    const [fence] = only(t.take(), 'propose');
    const records = decodeMetadataRecords(fence!.data);
    expect(records.filter((r) => r.type === 'brokerRegistrationChange').map((r) => [r.brokerId, r.fenced])).to.deep.equal([[1, true]]);
    expect(t.driver.counters.corroboratedFences).to.equal(1);
    expect(t.driver.brokerHeartbeats.isAlive(1), 'well within its session').to.equal(true);
  });

  it('a new active controller fences nobody early until it has heard reports itself and the suspect timeout passed', () => {
    const t = setup({ fenceCheckIntervalMs: 60_000 });
    const bootstrap = activate(t);
    t.driver.proposalDone(bootstrap.id, { ok: true, index: t.commit(bootstrap.data), term: 1 });
    t.take();
    t.driver.submit((c) => registerBroker(c, { brokerId: 1, incarnationId: 'i1', clusterId: 'c', endpoints: [], rack: null }));
    const [reg] = only(t.take(), 'propose');
    t.driver.proposalDone(reg!.id, { ok: true, index: t.commit(reg!.data), term: 1 });
    t.take();
    t.driver.submit((c) => brokerHeartbeat(c, { brokerId: 1, brokerEpoch: c.image.brokers.get(1)!.brokerEpoch, currentMetadataOffset: 1_000, wantShutdown: false, unreachableBrokers: [2] }));
    for (const p of only(t.take(), 'propose')) t.driver.proposalDone(p.id, { ok: true, index: t.commit(p.data), term: 1 });
    t.take();
    t.driver.roleChanged('follower', 2);
    t.take();
    t.clock.advance(5_000);
    t.driver.roleChanged('leader', 3);
    const [readIndex] = only(t.take(), 'readIndex');
    t.driver.readDone(readIndex!.id, true);
    t.take();
    expect(t.driver.brokerHeartbeats.reportersOf(2), 'the old term\'s reports are gone').to.deep.equal([]);
    expect(t.driver.nextWakeMs(), 'only the periodic deadlines').to.be.at.least(t.clock.monotonicMs() + 30_000);
  });

  it('a command that throws fails only its caller', () => {
    const t = setup();
    const bootstrap = activate(t);
    t.driver.proposalDone(bootstrap.id, { ok: true, index: t.commit(bootstrap.data), term: 1 });
    t.take();
    const bad = t.driver.submit(() => {
      throw new Error('bug');
    });
    const good = t.driver.submit(read);
    const replies = only(t.take(), 'reply');
    expect(replies.map((r) => [r.id, r.outcome.ok])).to.deep.equal([[bad, false], [good, true]]);
  });
});
