// Unit tests of the simulation's own pieces — scheduler, network, disk and
// state machine — so a simulation failure can be trusted to be the core's.
import { expect } from 'chai';
import { EntryType, type Entry, type Membership, type Message } from '../../src/raft/types.js';
import { SeededRng } from '../../src/util/rng.js';
import { EventQueue } from './event-queue.js';
import { SimDisk } from './sim-disk.js';
import { SimNetwork, decodeMessage, encodeMessage } from './sim-network.js';
import { SimStateMachine, applyConfChange } from './sim-state-machine.js';
import { Trace } from './trace.js';

const text = new TextEncoder();

function entry(index: number, term: number, cmd = `c${index}`): Entry {
  return { index, term, type: EntryType.Normal, data: text.encode(cmd) };
}

describe('sim: event queue', () => {
  it('runs events by time, FIFO among equal times', () => {
    const q = new EventQueue();
    const order: string[] = [];
    q.schedule(5, 'a', () => order.push('a5'));
    q.schedule(1, 'b', () => order.push('b1'));
    q.schedule(5, 'c', () => order.push('c5'));
    q.schedule(0, 'd', () => order.push('d0'));
    q.schedule(1, 'e', () => order.push('e1'));
    for (let ev = q.pop(); ev; ev = q.pop()) ev.run();
    expect(order).to.deep.equal(['d0', 'b1', 'e1', 'a5', 'c5']);
    expect(q.now()).to.equal(5);
  });

  it('keeps order on a large random load and never goes back in time', () => {
    const q = new EventQueue();
    const rng = new SeededRng(3);
    for (let i = 0; i < 2000; i++) q.schedule(rng.int(100), 'x', () => {});
    let last = { t: -1, seq: -1 };
    for (let ev = q.pop(); ev; ev = q.pop()) {
      expect(ev.timeMs > last.t || (ev.timeMs === last.t && ev.seq > last.seq)).to.equal(true);
      last = { t: ev.timeMs, seq: ev.seq };
    }
    expect(() => q.scheduleAt(q.now() - 1, 'past', () => {})).to.throw();
  });
});

describe('sim: network', () => {
  it('drops, duplicates and delays at the configured rates', () => {
    const net = new SimNetwork(new SeededRng(9), {
      dropRate: 0.2, duplicateRate: 0.1, delayMinMs: 1, delayMaxMs: 5, tailRate: 0.05, tailMaxMs: 100,
    });
    let dropped = 0;
    let dups = 0;
    let tails = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const plan = net.plan(1, 2);
      if (plan.length === 0) dropped++;
      if (plan.length === 2) dups++;
      for (const d of plan) {
        expect(d).to.be.within(1, 100);
        if (d > 5) tails++;
      }
    }
    expect(dropped / n).to.be.within(0.18, 0.22);
    expect(dups / (n - dropped)).to.be.within(0.08, 0.12);
    expect(tails).to.be.greaterThan(0);
  });

  it('cuts links one way or both, and heals', () => {
    const net = new SimNetwork(new SeededRng(1));
    net.cut(1, 2);
    expect(net.plan(1, 2)).to.deep.equal([]);
    expect(net.plan(2, 1)).to.have.length(1);
    net.partition([1, 2], [3]);
    expect(net.isCut(3, 1) && net.isCut(2, 3) && net.isCut(1, 3)).to.equal(true);
    net.heal();
    expect(net.isCut(1, 2) || net.isCut(1, 3)).to.equal(false);
    net.isolate(2, [1, 2, 3]);
    expect(net.isCut(2, 1) && net.isCut(3, 2) && !net.isCut(1, 3)).to.equal(true);
  });

  it('keeps each link in order in FIFO mode, and reorders otherwise', () => {
    const faults = { dropRate: 0, duplicateRate: 0, delayMinMs: 1, delayMaxMs: 50, tailRate: 0, tailMaxMs: 50 };
    const arrivals = (fifo: boolean): number[] => {
      const net = new SimNetwork(new SeededRng(5), { ...faults, fifo });
      return Array.from({ length: 50 }, (_, t) => t + (net.plan(1, 2, t)[0] as number));
    };
    const sorted = (xs: number[]): boolean => xs.every((x, i) => i === 0 || x >= (xs[i - 1] as number));
    expect(sorted(arrivals(true))).to.equal(true);
    expect(sorted(arrivals(false))).to.equal(false);
  });

  it('serializes messages so nodes share no references and bytes survive', () => {
    const m: Message = {
      type: 'append', from: 1, to: 2, term: 3, prevLogIndex: 4, prevLogTerm: 2, commit: 4,
      entries: [entry(5, 3, 'hello'), { index: 6, term: 3, type: EntryType.NoOp, data: new Uint8Array(0) }],
    };
    const a = decodeMessage(encodeMessage(m));
    const b = decodeMessage(encodeMessage(m));
    expect(a).to.not.equal(b);
    if (a.type !== 'append') throw new Error('type lost');
    expect(a.entries[0]?.data).to.be.instanceOf(Uint8Array);
    expect(new TextDecoder().decode(a.entries[0]?.data)).to.equal('hello');
    expect(a.entries[1]?.data.length).to.equal(0);
    expect({ ...a, entries: [] }).to.deep.equal({ ...m, entries: [] });
  });
});

describe('sim: disk', () => {
  it('makes writes durable only on fsync; a crash loses the buffer', () => {
    const d = new SimDisk();
    d.write({ kind: 'entries', entries: [entry(1, 1), entry(2, 1)] });
    d.write({ kind: 'hardState', hardState: { term: 1, vote: 1, commit: 0 } });
    expect(d.lastIndex()).to.equal(0);
    d.fsync();
    expect(d.lastIndex()).to.equal(2);
    expect(d.hardState.term).to.equal(1);
    d.write({ kind: 'entries', entries: [entry(3, 1)] });
    d.crash(undefined);
    expect(d.lastIndex()).to.equal(2);
    expect(d.pendingWrites).to.equal(0);
  });

  it('replaces a conflicting suffix and refuses gaps', () => {
    const d = new SimDisk();
    d.write({ kind: 'entries', entries: [entry(1, 1), entry(2, 1), entry(3, 1)] });
    d.fsync();
    d.write({ kind: 'entries', entries: [entry(2, 2, 'x')] });
    d.fsync();
    expect(d.lastIndex()).to.equal(2);
    expect(d.termAt(2)).to.equal(2);
    d.write({ kind: 'entries', entries: [entry(5, 2)] });
    expect(() => d.fsync()).to.throw(/gap/);
  });

  it('a torn flush keeps a prefix of the buffered writes, in order', () => {
    const rng = new SeededRng(11);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const d = new SimDisk();
      d.write({ kind: 'entries', entries: [entry(1, 1), entry(2, 1), entry(3, 1)] });
      d.write({ kind: 'hardState', hardState: { term: 1, vote: 2, commit: 1 } });
      d.crash(rng);
      const state = `${d.lastIndex()}/${d.hardState.term}`;
      seen.add(state);
      if (d.hardState.term === 1) expect(d.lastIndex()).to.equal(3);
    }
    expect([...seen].sort()).to.deep.equal(['0/0', '1/0', '2/0', '3/0', '3/1']);
  });

  it('a received snapshot replaces the log; a compaction keeps the suffix', () => {
    const m = { voters: [1], observers: [] };
    const d = new SimDisk();
    d.write({ kind: 'entries', entries: [entry(1, 1), entry(2, 1), entry(3, 2)] });
    d.fsync();
    d.compact({ meta: { index: 2, term: 1, membership: m }, data: new Uint8Array(0) });
    expect([d.snapshotIndex(), d.lastIndex(), d.termAt(2), d.termAt(3), d.termAt(1)]).to.deep.equal([2, 3, 1, 2, undefined]);
    d.write({ kind: 'snapshot', snapshot: { meta: { index: 7, term: 3, membership: m }, data: new Uint8Array(0) } });
    d.fsync();
    expect([d.snapshotIndex(), d.lastIndex()]).to.deep.equal([7, 7]);
  });
});

describe('sim: state machine', () => {
  const decode = (): never => {
    throw new Error('no config entries here');
  };

  it('round-trips its state through a bounded snapshot image', () => {
    const sm = new SimStateMachine({ voters: [1, 2, 3], observers: [] }, decode);
    sm.apply(entry(1, 1));
    sm.apply({ index: 2, term: 1, type: EntryType.NoOp, data: new Uint8Array(0) });
    sm.apply(entry(3, 2, 'x'));
    expect(() => sm.apply(entry(5, 2))).to.throw(/applied 5 after 3/);
    const snap = sm.snapshot();
    expect(snap.meta).to.deep.include({ index: 3, term: 2 });
    const other = new SimStateMachine({ voters: [9], observers: [] }, decode);
    const img = other.restore(snap);
    expect([other.lastIndex(), other.lastTerm(), other.chain]).to.deep.equal([3, 2, sm.chain]);
    expect(other.membership).to.deep.equal({ voters: [1, 2, 3], observers: [] });
    expect(img.tail.map((r) => r.digest)).to.deep.equal(['cmd:c1', 'noop', 'cmd:x']);
    expect(other.recordAt(3)?.digest).to.equal('cmd:x');
    // The image stays small however much was applied.
    for (let i = 4; i <= 2000; i++) sm.apply(entry(i, 2));
    expect(sm.snapshot().data.length).to.be.lessThan(400);
  });

  it('chains its history: any difference changes the chain', () => {
    const a = new SimStateMachine({ voters: [1], observers: [] }, decode);
    const b = new SimStateMachine({ voters: [1], observers: [] }, decode);
    const c = new SimStateMachine({ voters: [1], observers: [] }, decode);
    for (let i = 1; i <= 10; i++) {
      a.apply(entry(i, 1));
      b.apply(entry(i, 1));
      c.apply(entry(i, i === 4 ? 2 : 1));
    }
    expect(a.chain).to.equal(b.chain);
    expect(c.chain).to.not.equal(a.chain);
  });

  it('tracks membership changes one at a time', () => {
    let m: Membership = { voters: [1, 2, 3], observers: [] };
    m = applyConfChange(m, { type: 'addObserver', node: 4 });
    m = applyConfChange(m, { type: 'promoteObserver', node: 4 });
    m = applyConfChange(m, { type: 'removeVoter', node: 1 });
    expect(m).to.deep.equal({ voters: [2, 3, 4], observers: [] });
    expect(applyConfChange(m, { type: 'addObserver', node: 2 })).to.deep.equal(m);
  });
});

describe('sim: trace', () => {
  it('keeps the last N lines, renders lazily, and everything when full', () => {
    const t = new Trace(3);
    let rendered = 0;
    for (let i = 0; i < 10; i++) t.add(i, () => `line ${i} ${++rendered}`);
    expect(rendered).to.equal(0);
    expect(t.tail().map((l) => l.trim())).to.deep.equal(['7ms line 7 1', '8ms line 8 2', '9ms line 9 3']);
    const full = new Trace(2, true);
    for (let i = 0; i < 5; i++) full.add(i, `x${i}`);
    expect(full.lines()).to.have.length(5);
  });
});
