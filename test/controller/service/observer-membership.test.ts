// ObserverMembership against a fake quorum: one change at a time, driven by
// image changes, retried after a refusal, silent once stopped.
import { expect } from 'chai';
import { applyConfChange, makeMembership } from '../../../src/raft/membership.js';
import { EntryType, type ConfChange, type Membership } from '../../../src/raft/types.js';
import { encodeMetadataRecords } from '../../../src/metadata/codec.js';
import type { MetadataRecord } from '../../../src/metadata/records.js';
import { MetadataStateMachine } from '../../../src/metadata/state-machine.js';
import { ObserverMembership } from '../../../src/controller/service/observer-membership.js';
import { Errors, SluiceError } from '../../../src/util/errors.js';
import { SystemScheduler } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { waitFor } from '../../integration/harness.js';

const WAIT = { timeoutMs: 5_000, intervalMs: 2 };

class FakeQuorum {
  membershipNow: Membership = makeMembership([1, 2, 3]);
  readonly proposed: ConfChange[] = [];
  /** Changes in flight: settled by the test. */
  readonly inFlight: Array<{ change: ConfChange; resolve: () => void; reject: (e: Error) => void }> = [];

  proposeConfChange(change: ConfChange): Promise<{ index: number; term: number }> {
    this.proposed.push(change);
    return new Promise((resolve, reject) => {
      this.inFlight.push({
        change,
        resolve: () => {
          this.membershipNow = applyConfChange(this.membershipNow, change);
          resolve({ index: this.proposed.length, term: 1 });
        },
        reject,
      });
    });
  }

  membership(): Membership {
    return this.membershipNow;
  }

  settle(ok = true): void {
    const p = this.inFlight.shift();
    if (!p) throw new Error('nothing in flight');
    if (ok) p.resolve();
    else p.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'pending', { reason: 'configChangePending' }));
  }
}

function register(brokerId: number, withController = true): MetadataRecord {
  const endpoints = withController ? [{ name: 'CONTROLLER', url: `ws://127.0.0.1:${9000 + brokerId}` }] : [];
  return { type: 'registerBroker', v: 1, brokerId, incarnationId: `i${brokerId}`, brokerEpoch: 1, endpoints, rack: null, fenced: true };
}

describe('ObserverMembership (controller shell)', () => {
  let sm: MetadataStateMachine;
  let quorum: FakeQuorum;
  let observers: ObserverMembership;
  let index: number;
  const apply = (...records: MetadataRecord[]): void => {
    index++;
    sm.apply({ term: 1, index, type: EntryType.Normal, data: encodeMetadataRecords(records) });
  };

  beforeEach(() => {
    sm = new MetadataStateMachine();
    quorum = new FakeQuorum();
    index = 0;
    observers = new ObserverMembership({ quorum, metadata: sm, scheduler: SystemScheduler, logger: silentLogger, retryDelayMs: 5 });
  });

  afterEach(() => observers.stop());

  it('adds registered followers one at a time, then removes an unregistered one', async () => {
    apply(register(2), register(4), register(5, false), register(6));
    observers.start();
    expect(quorum.proposed).to.deep.equal([{ type: 'addObserver', node: 4 }]);
    apply(register(7)); // an image change while a change is in flight proposes nothing more
    await Promise.resolve();
    expect(quorum.proposed).to.have.length(1);
    quorum.settle();
    await waitFor('the second change', () => quorum.proposed.length === 2, WAIT);
    expect(quorum.proposed[1]).to.deep.equal({ type: 'addObserver', node: 6 });
    quorum.settle();
    await waitFor('the third change', () => quorum.proposed.length === 3, WAIT);
    quorum.settle();
    expect(quorum.membership().observers).to.deep.equal([4, 6, 7]);

    apply({ type: 'unregisterBroker', v: 1, brokerId: 6, brokerEpoch: 1 });
    await waitFor('the removal', () => quorum.proposed.length === 4, WAIT);
    expect(quorum.proposed[3]).to.deep.equal({ type: 'removeObserver', node: 6 });
    quorum.settle();
    await Promise.resolve();
    expect(quorum.proposed, 'in sync: nothing more').to.have.length(4);
    expect(quorum.membership()).to.deep.equal({ voters: [1, 2, 3], observers: [4, 7] });
  });

  it('retries a refused change', async () => {
    apply(register(4));
    observers.start();
    quorum.settle(false);
    await waitFor('the retry', () => quorum.proposed.length === 2, WAIT);
    expect(quorum.proposed[1]).to.deep.equal({ type: 'addObserver', node: 4 });
    quorum.settle();
    expect(quorum.membership().observers).to.deep.equal([4]);
  });

  it('does nothing before start or after stop; a new activation does not wait for a change left from the last one', async () => {
    apply(register(4));
    expect(quorum.proposed).to.have.length(0);
    observers.start();
    observers.stop();
    quorum.settle(false); // settles after stop: ignored
    apply(register(5)); // unsubscribed: no reconcile
    await new Promise((resolve) => setImmediate(resolve));
    expect(quorum.proposed).to.have.length(1);
    // A new activation starts over (the membership is what the quorum says),
    // even while a change of the previous activation is still unsettled.
    observers.start();
    expect(quorum.proposed).to.have.length(2);
    observers.stop();
    observers.start();
    expect(quorum.proposed).to.have.length(3);
  });
});
