// Adding and removing controllers (KIP-853) against a fake Raft node and a
// ManualScheduler: the steps in order, one change at a time, the refusals,
// and the hand-over when the active controller removes itself.
import { expect } from 'chai';
import { ControllerMembership, type MembershipQuorum } from '../../../src/controller/service/controller-membership.js';
import type { CommandContext, CommandResult } from '../../../src/controller/context.js';
import { BrokerHeartbeats } from '../../../src/controller/decisions/broker-heartbeats.js';
import { imageFromRecords, imageWithRecords } from '../../../src/metadata/delta.js';
import { validateMetadataRecords } from '../../../src/metadata/codec.js';
import { MetadataImage } from '../../../src/metadata/image.js';
import { applyConfChange, makeMembership } from '../../../src/raft/membership.js';
import type { ConfChange, Membership } from '../../../src/raft/types.js';
import { ManualScheduler } from '../../../src/util/clock.js';
import { Errors, SluiceError, isSluiceError } from '../../../src/util/errors.js';
import { silentLogger } from '../../../src/util/logger.js';
import { SeededRng } from '../../../src/util/rng.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class FakeQuorum implements MembershipQuorum {
  m: Membership = makeMembership([1, 2, 3], []);
  commit = 10;
  match = new Map<number, number>([[2, 10], [3, 10]]);
  proposed: ConfChange[] = [];
  transferredTo: number | undefined;
  proposeConfChange(change: ConfChange): Promise<{ index: number; term: number }> {
    this.proposed.push(change);
    this.m = applyConfChange(this.m, change);
    return Promise.resolve({ index: ++this.commit, term: 1 });
  }
  membership(): Membership {
    return this.m;
  }
  raftStatus() {
    return { id: 1, commit: this.commit, progress: new Map([...this.match].map(([id, match]) => [id, { match, recentActive: true }])) };
  }
  transferLeadership(to: number): boolean {
    this.transferredTo = to;
    return true;
  }
}

function setup() {
  const scheduler = new ManualScheduler();
  const quorum = new FakeQuorum();
  let image = MetadataImage.EMPTY;
  const submit = <R>(command: (ctx: CommandContext) => CommandResult<R>): Promise<R> => {
    try {
      const r = command({ image, nextOffset: 1, clock: scheduler.clock, rng: new SeededRng(1), heartbeats: new BrokerHeartbeats(scheduler.clock, 1000), logger: silentLogger });
      image = imageWithRecords(image, r.records);
      return Promise.resolve(r.response);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const membership = new ControllerMembership({
    quorum, submit, image: () => image, clock: scheduler.clock, scheduler, logger: silentLogger, changeTimeoutMs: 5_000, pollIntervalMs: 100,
    notController: (message) => new SluiceError(Errors.NOT_CONTROLLER, message),
  });
  return { scheduler, quorum, membership, image: () => image };
}

describe('ControllerMembership (add-controller / remove-controller)', () => {
  it('adds a node: endpoint committed, then (once it is an observer and caught up) promoted; one change at a time', async () => {
    const t = setup();
    const add = t.membership.addController(4, 'ws://127.0.0.1:7004');
    await flush();
    expect(t.image().controllerEndpoints.get(4)).to.equal('ws://127.0.0.1:7004');
    const second = await t.membership.addController(5, 'ws://127.0.0.1:7005').catch((e: unknown) => e);
    expect(isSluiceError(second, Errors.REQUEST_TIMED_OUT)).to.equal(true);
    expect((second as Error).message).to.match(/in progress \(adding node 4\)/);
    // The observer membership adds it (here: by hand), and it lags behind the commit index.
    t.quorum.m = applyConfChange(t.quorum.m, { type: 'addObserver', node: 4 });
    t.quorum.match.set(4, 3);
    t.scheduler.advance(500);
    await flush();
    expect(t.quorum.proposed, 'not promoted while behind').to.deep.equal([]);
    t.quorum.match.set(4, t.quorum.commit);
    t.scheduler.advance(100);
    await flush();
    t.scheduler.advance(100);
    expect(await add).to.deep.equal({ nodeId: 4, voters: [1, 2, 3, 4], observers: [] });
    expect(t.quorum.proposed).to.deep.equal([{ type: 'promoteObserver', node: 4 }]);
  });

  it('gives up with a clear error when the node never shows up', async () => {
    const t = setup();
    const add = t.membership.addController(4, 'ws://127.0.0.1:7004').catch((e: unknown) => e);
    for (let i = 0; i < 60; i++) {
      t.scheduler.advance(100);
      await flush();
    }
    const err = await add;
    expect(isSluiceError(err, Errors.REQUEST_TIMED_OUT)).to.equal(true);
    expect((err as Error).message).to.match(/node 4 did not become an observer \(is it running at ws:\/\/127\.0\.0\.1:7004\?\)/);
  });

  it('refuses a voter, a bad listener, and the last voter; removes a voter and its endpoint', async () => {
    const t = setup();
    expect(((await t.membership.addController(2, 'ws://h:1').catch((e: unknown) => e)) as Error).message).to.match(/already a controller/);
    expect(((await t.membership.addController(4, 'tcp://h:1').catch((e: unknown) => e)) as Error).message).to.match(/not usable/);
    expect(((await t.membership.removeController(7).catch((e: unknown) => e)) as Error).message).to.match(/not a controller/);
    expect(await t.membership.removeController(3)).to.deep.equal({ nodeId: 3, voters: [1, 2], observers: [] });
    t.quorum.m = makeMembership([2], []);
    expect(((await t.membership.removeController(2).catch((e: unknown) => e)) as Error).message).to.match(/last controller/);
  });

  it('controller endpoints survive a metadata snapshot and are removed by a null url', () => {
    const withEp = imageWithRecords(MetadataImage.EMPTY, [{ type: 'controllerEndpoint', v: 1, nodeId: 4, url: 'ws://h:4' }]);
    const restored = imageFromRecords(validateMetadataRecords(withEp.toRecords()), withEp.offset);
    expect([...restored.controllerEndpoints]).to.deep.equal([[4, 'ws://h:4']]);
    expect(imageWithRecords(restored, [{ type: 'controllerEndpoint', v: 1, nodeId: 4, url: null }]).controllerEndpoints.size).to.equal(0);
  });

  it('the active controller removing itself hands leadership to the most caught-up voter and answers NOT_CONTROLLER', async () => {
    const t = setup();
    t.quorum.match.set(2, 8);
    const err = await t.membership.removeController(1).catch((e: unknown) => e);
    expect(isSluiceError(err, Errors.NOT_CONTROLLER)).to.equal(true);
    expect(t.quorum.transferredTo).to.equal(3);
    expect(t.quorum.proposed).to.deep.equal([]);
  });
});
