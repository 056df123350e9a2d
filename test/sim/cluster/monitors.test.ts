// The on-the-fly monitors must be able to fail: a fake world (nodes with
// hand-set replicas and Raft views) is stepped through one bad history per
// invariant, and a clean one stays clean.
import { expect } from 'chai';
import type { SendOp, StoredRecord } from '../../chaos/history.js';
import type { NodeHandle, NodeState } from './api.js';
import { Monitors } from './monitors.js';
import type { RaftView, ReplicaView } from './probe.js';

interface FakeReplica {
  isLeader: boolean;
  leaderEpoch: number;
  hw: number;
  values: string[];
}

class FakeWorld {
  time = 0;
  readonly notes: string[] = [];
  readonly states = new Map<number, NodeState>([[1, 'up'], [2, 'up'], [3, 'up']]);
  readonly replicas = new Map<number, FakeReplica>();
  readonly raft = new Map<number, RaftView>();
  private listener: (() => void) | undefined;

  nodes(): NodeHandle[] {
    return [...this.states].map(([id, state]) => ({
      id, host: `n${id}`, roles: ['broker', 'controller'], state, server: undefined, brokerUrl: undefined, controllerUrl: undefined,
    }));
  }

  now(): number {
    return this.time;
  }

  note(line: string): void {
    this.notes.push(line);
  }

  onEvent(fn: () => void): () => void {
    this.listener = fn;
    return () => { this.listener = undefined; };
  }

  /** One event: time moves on, the monitors look. */
  step(ms = 100): void {
    this.time += ms;
    this.listener?.();
  }

  view(id: number): ReplicaView[] {
    const r = this.replicas.get(id);
    if (!r) return [];
    const records = (from: number, to: number): StoredRecord[] =>
      r.values.slice(from, Math.min(to, r.values.length)).map((value, i) => ({ offset: from + i, value, leaderEpoch: r.leaderEpoch }));
    return [{
      topic: 't', partition: 0, isLeader: r.isLeader, leaderId: -1, leaderEpoch: r.leaderEpoch, isr: [1, 2, 3],
      logStartOffset: 0, logEndOffset: r.values.length, highWatermark: r.hw, read: records,
    }];
  }
}

function setup(): { w: FakeWorld; m: Monitors } {
  const w = new FakeWorld();
  w.replicas.set(1, { isLeader: true, leaderEpoch: 1, hw: 2, values: ['a', 'b', 'c'] });
  w.replicas.set(2, { isLeader: false, leaderEpoch: 1, hw: 2, values: ['a', 'b', 'c'] });
  w.replicas.set(3, { isLeader: false, leaderEpoch: 1, hw: 1, values: ['a', 'b'] });
  const m = new Monitors(w, { replicasOf: (n) => w.view(n.id), raftOf: (n) => w.raft.get(n.id), minInsyncReplicas: 2 });
  m.start();
  return { w, m };
}

function types(m: Monitors): string[] {
  return m.anomalies.map((a) => a.type);
}

function ack(value: string, offset: number): SendOp {
  return { kind: 'send', invokeMs: 0, completeMs: 1, producer: 'p', topic: 't', partition: 0, seq: offset, value, outcome: { type: 'ok' }, offset };
}

describe('cluster simulation: monitors', () => {
  it('stay clean on a healthy history: HW forward, one leader per epoch, offsets kept, acks replicated', () => {
    const { w, m } = setup();
    w.step();
    w.replicas.get(3)!.values.push('c');
    w.replicas.get(1)!.hw = 3;
    w.step();
    m.onSend(ack('c', 2));
    // A new leader in a new epoch, and a follower that truncates an uncommitted suffix (above its HW).
    w.replicas.get(1)!.isLeader = false;
    Object.assign(w.replicas.get(2)!, { isLeader: true, leaderEpoch: 2, hw: 3 });
    w.replicas.get(3)!.values.push('x');
    w.step();
    w.replicas.get(3)!.values.pop();
    w.step();
    m.finalPass();
    expect(m.anomalies).to.deep.equal([]);
    expect(m.stats.offsetsLedgered).to.equal(3);
  });

  it('find a leader high watermark going back within one leadership, not across a restart', () => {
    const { w, m } = setup();
    w.step();
    w.replicas.get(1)!.hw = 1;
    w.step();
    expect(types(m)).to.deep.equal(['hw-regress']);
    const fresh = setup();
    fresh.w.step();
    fresh.w.states.set(1, 'down');
    fresh.w.step();
    fresh.w.states.set(1, 'up');
    fresh.w.replicas.get(1)!.hw = 1;
    fresh.w.step();
    expect(fresh.m.anomalies).to.deep.equal([]);
  });

  it('find a leader high watermark beyond the log end of an ISR member, unless that member crashed since', () => {
    const { w, m } = setup();
    w.step();
    w.replicas.get(1)!.hw = 3;
    w.step();
    expect(types(m)).to.deep.equal(['hw-above-isr']);
    expect(m.anomalies[0]!.detail).to.include('ISR member 3 ends at 2');
    const fresh = setup();
    fresh.w.step();
    fresh.w.states.set(3, 'down');
    fresh.w.step();
    fresh.w.states.set(3, 'up');
    fresh.w.replicas.get(1)!.hw = 3;
    fresh.w.step();
    expect(fresh.m.anomalies).to.deep.equal([]);
  });

  it('find two nodes leading one partition in one leader epoch', () => {
    const { w, m } = setup();
    w.step();
    w.replicas.get(2)!.isLeader = true;
    w.step();
    expect(types(m)).to.deep.equal(['two-leaders-epoch']);
  });

  it('find an offset below a high watermark that another replica holds with another value', () => {
    const { w, m } = setup();
    w.step();
    w.replicas.get(3)!.values[0] = 'z';
    w.step();
    m.finalPass();
    expect(types(m)).to.deep.equal(['offset-rewritten']);
    expect(m.anomalies[0]!.detail).to.include('t-0@0').and.include('"a"').and.include('"z"');
  });

  it('find an acknowledged write held by fewer than min.insync.replicas replicas', () => {
    const { w, m } = setup();
    w.replicas.get(1)!.values.push('d');
    m.onSend(ack('d', 3));
    expect(types(m)).to.deep.equal(['ack-under-replicated']);
    expect(m.anomalies[0]!.detail).to.include('only node(s) 1');
  });

  it('find two Raft leaders in one term, and a leader missing a committed entry', () => {
    const { w, m } = setup();
    const log = (terms: number[]) => ({
      firstIndex: () => 1, lastIndex: () => terms.length, termAt: (i: number) => (i === 0 ? 0 : terms[i - 1]), digestAt: (i: number) => `e${i}/${terms[i - 1]}`,
    });
    w.raft.set(1, { role: 'leader', term: 2, leader: 1, commit: 2, log: log([1, 2]) });
    w.raft.set(2, { role: 'follower', term: 2, leader: 1, commit: 2, log: log([1, 2]) });
    w.step();
    w.raft.set(3, { role: 'leader', term: 3, leader: 3, commit: 0, log: log([1]) });
    w.step();
    expect(types(m)).to.deep.equal(['raft-leader-completeness']);
    w.raft.set(2, { role: 'leader', term: 3, leader: 2, commit: 2, log: log([1, 2]) });
    w.step();
    expect(types(m)).to.include('raft-election-safety');
  });
});
