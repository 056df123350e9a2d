import { expect } from 'chai';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { ProposalTracker, ReadTracker } from '../../src/raft-node/pending.js';

const overwritten = () => new SluiceError(Errors.NOT_CONTROLLER, 'overwritten');

/** Watches a promise from the moment it exists; `state()` reads its outcome after pending callbacks ran. */
function watch<T>(p: Promise<T>): { state: () => Promise<string> } {
  let state = 'pending';
  p.then((v) => { state = `ok:${JSON.stringify(v)}`; }, (e: Error) => { state = `err:${isSluiceError(e) ? e.errorName : e.message}`; });
  return { state: async () => { await new Promise((resolve) => setImmediate(resolve)); return state; } };
}

const outcome = (w: { state: () => Promise<string> }): Promise<string> => w.state();

describe('pending proposals and reads', () => {
  it('resolves a proposal applied with its term and rejects one applied with another', async () => {
    const t = new ProposalTracker();
    const a = watch(t.add(5, 2, 1000));
    const b = watch(t.add(6, 2, 1000));
    t.onApplied(5, 2, overwritten);
    t.onApplied(6, 3, overwritten);
    expect(await outcome(a)).to.equal('ok:{"index":5,"term":2}');
    expect(await outcome(b)).to.equal('err:NOT_CONTROLLER');
    expect(t.size).to.equal(0);
  });

  it('rejects proposals truncated away, keeps those still in the log', async () => {
    const t = new ProposalTracker();
    const a = watch(t.add(5, 2, 1000));
    const b = watch(t.add(6, 2, 1000));
    const c = watch(t.add(7, 2, 1000));
    const log = new Map([[5, 2], [6, 3]]);
    t.onTruncation(6, (i) => log.get(i), overwritten);
    expect(await outcome(a)).to.equal('pending');
    expect(await outcome(b)).to.equal('err:NOT_CONTROLLER');
    expect(await outcome(c)).to.equal('err:NOT_CONTROLLER');
  });

  it('expires in deadline order and reports unknown outcomes', async () => {
    const t = new ProposalTracker();
    const a = watch(t.add(1, 1, 100));
    const b = watch(t.add(2, 1, 200));
    t.expire(150);
    expect(await outcome(a)).to.equal('err:REQUEST_TIMED_OUT');
    expect(await outcome(b)).to.equal('pending');
    t.onSnapshotInstalled(5);
    expect(await outcome(b)).to.equal('err:REQUEST_TIMED_OUT');
  });

  it('never leaves a promise hanging when an index is reused', async () => {
    const t = new ProposalTracker();
    const a = watch(t.add(3, 1, 100));
    const b = watch(t.add(3, 2, 100));
    expect(await outcome(a)).to.equal('err:NOT_CONTROLLER');
    t.onApplied(3, 2, overwritten);
    expect(await outcome(b)).to.equal('ok:{"index":3,"term":2}');
  });

  it('serves a read only after confirmation and apply', async () => {
    const r = new ReadTracker();
    const { id, done: p } = r.add(1000);
    const done = watch(p);
    expect(await outcome(done)).to.equal('pending');
    r.onReadState(id, 10, 8);
    expect(await outcome(done)).to.equal('pending');
    r.onApplied(9);
    expect(await outcome(done)).to.equal('pending');
    r.onApplied(10);
    expect(await outcome(done)).to.equal('ok:10');
    expect(r.size).to.equal(0);
  });

  it('rejects unconfirmed reads when leadership is lost but keeps confirmed ones', async () => {
    const r = new ReadTracker();
    const x = r.add(1000);
    const y = r.add(1000);
    const xDone = watch(x.done);
    const yDone = watch(y.done);
    r.onReadState(x.id, 4, 0);
    r.onLostLeadership(new SluiceError(Errors.NOT_CONTROLLER));
    expect(await outcome(yDone)).to.equal('err:NOT_CONTROLLER');
    expect(await outcome(xDone)).to.equal('pending');
    r.expire(2000);
    expect(await outcome(xDone)).to.equal('err:REQUEST_TIMED_OUT');
  });
});
