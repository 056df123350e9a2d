// The driver against real disks (temp dirs) and an in-memory network that
// still passes every message through the wire codec. Timers are real but
// short (tickMs 10); every wait is on a condition with a timeout.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Errors, isSluiceError, type SluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import type { Entry, Message } from '../../src/raft/types.js';
import { RaftDisk } from '../../src/raft-node/raft-disk.js';
import { LogDigestStateMachine, digestStep } from '../../src/raft-node/log-digest-state-machine.js';
import { RaftNode, type MessageSender } from '../../src/raft-node/node.js';
import { nodeLimits, type RaftNodeLimits } from '../../src/raft-node/quorum-config.js';
import { decodeFrame, encodeFrame } from '../../src/raft-node/wire.js';
import { waitFor } from '../integration/harness.js';

const WAIT = { timeoutMs: 10_000, intervalMs: 5 };

/** Delivers messages between in-process nodes on later event-loop turns; nodes can be cut off. */
class Network {
  readonly nodes = new Map<number, RaftNode>();
  readonly down = new Set<number>();

  sender(from: number): MessageSender {
    return {
      send: (msgs: readonly Message[]) => {
        if (msgs.length === 0 || this.down.has(from)) return;
        const decoded = decodeFrame(encodeFrame({ k: 'raft', msgs }));
        if (!decoded.ok || decoded.frame.k !== 'raft') throw new Error('wire codec broke a raft frame');
        for (const m of decoded.frame.msgs) {
          setImmediate(() => {
            if (!this.down.has(m.to)) this.nodes.get(m.to)?.receive(m);
          });
        }
      },
      close: async () => undefined,
    };
  }
}

interface TestNode {
  node: RaftNode;
  sm: LogDigestStateMachine;
}

class Cluster {
  readonly net = new Network();
  readonly members = new Map<number, TestNode>();
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-'));

  constructor(readonly voters: number[], readonly limits: RaftNodeLimits) {}

  start(id: number, sm = new LogDigestStateMachine()): TestNode {
    const node = RaftNode.start({
      id, voters: this.voters, raftDir: path.join(this.root, `n${id}`), stateMachine: sm,
      transport: this.net.sender(id), limits: this.limits, rng: new SeededRng(1000 + id), logger: silentLogger,
      endpoints: new Map(this.voters.map((v) => [v, `ws://node-${v}`])),
    });
    this.net.nodes.set(id, node);
    this.net.down.delete(id);
    const t = { node, sm };
    this.members.set(id, t);
    return t;
  }

  get(id: number): TestNode {
    const t = this.members.get(id);
    if (!t) throw new Error(`node ${id} not running`);
    return t;
  }

  async stop(id: number, transferLeadership = false): Promise<void> {
    const t = this.get(id);
    this.members.delete(id);
    await t.node.stop({ transferLeadership });
    this.net.down.add(id);
    this.net.nodes.delete(id);
  }

  async leader(notId = 0): Promise<TestNode> {
    const id = await waitFor('a leader', () => {
      for (const [id, t] of this.members) if (id !== notId && t.node.status().role === 'leader') return id;
      return undefined;
    }, WAIT);
    return this.get(id);
  }

  async converged(): Promise<void> {
    await waitFor('all nodes applied the same entries', () => {
      const all = [...this.members.values()].map((t) => t.sm.current);
      const first = all[0];
      return first !== undefined && first.appliedIndex > 0
        && all.every((s) => s.appliedIndex === first.appliedIndex && s.digest === first.digest);
    }, WAIT);
  }

  async cleanup(): Promise<void> {
    await Promise.all([...this.members.keys()].map((id) => this.stop(id)));
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

function limits(overrides: Partial<RaftNodeLimits> = {}): RaftNodeLimits {
  return nodeLimits({ tickMs: 10, electionTimeoutTicks: 10, transferTimeoutMs: 2_000, ...overrides });
}

async function proposeAll(node: RaftNode, count: number, tag: string): Promise<{ index: number; data: Buffer }[]> {
  const datas = Array.from({ length: count }, (_, i) => Buffer.from(`${tag}-${i}`));
  const acks = await Promise.all(datas.map((d) => node.propose(d)));
  return acks.map((a, i) => ({ index: a.index, data: datas[i] ?? Buffer.alloc(0) }));
}

function expectedDigest(acked: { index: number; data: Buffer }[]): number {
  return [...acked].sort((a, b) => a.index - b.index).reduce((d, e) => digestStep(d, e.index, e.data), 0);
}

describe('RaftNode driver', function () {
  this.timeout(60_000);
  let cluster: Cluster | undefined;

  afterEach(async () => {
    await cluster?.cleanup();
    cluster = undefined;
  });

  it('elects a leader, replicates, and applies the same sequence everywhere', async () => {
    cluster = new Cluster([1, 2, 3], limits());
    for (const id of [1, 2, 3]) cluster.start(id);
    const leader = await cluster.leader();
    const acked = await proposeAll(leader.node, 200, 'a');
    await cluster.converged();
    for (const t of cluster.members.values()) {
      expect(t.sm.current.appliedCount).to.equal(200);
      expect(t.sm.current.digest).to.equal(expectedDigest(acked));
    }
  });

  it('rejects proposals and reads on a follower with the leader as a hint', async () => {
    cluster = new Cluster([1, 2, 3], limits());
    for (const id of [1, 2, 3]) cluster.start(id);
    const leader = await cluster.leader();
    await proposeAll(leader.node, 1, 'x');
    await cluster.converged();
    const follower = [...cluster.members.values()].find((t) => t !== leader);
    if (!follower) throw new Error('no follower');
    const leaderId = leader.node.status().nodeId;
    for (const attempt of [follower.node.propose(Buffer.from('no')), follower.node.readIndex()]) {
      const err = await (attempt as Promise<unknown>).then(() => undefined, (e: unknown) => e as SluiceError);
      expect(isSluiceError(err, Errors.NOT_CONTROLLER), String(err)).to.equal(true);
      expect(err?.details).to.deep.equal({ leader: leaderId, leaderEndpoint: `ws://node-${leaderId}` });
    }
  });

  it('group-commits: many proposals in one turn share a few fsyncs', async () => {
    cluster = new Cluster([1], limits());
    const { node } = cluster.start(1);
    await cluster.leader();
    const original = RaftDisk.prototype.sync;
    let syncs = 0;
    RaftDisk.prototype.sync = function (this: RaftDisk) {
      syncs++;
      original.call(this);
    };
    try {
      await proposeAll(node, 1000, 'g');
    } finally {
      RaftDisk.prototype.sync = original;
    }
    expect(syncs).to.be.at.least(1).and.at.most(5);
  });

  it('serves linearizable reads at or after every acknowledged write', async () => {
    cluster = new Cluster([1, 2, 3], limits());
    for (const id of [1, 2, 3]) cluster.start(id);
    const leader = await cluster.leader();
    const acked = await proposeAll(leader.node, 50, 'r');
    const readIndex = await leader.node.readIndex();
    expect(readIndex).to.be.at.least(Math.max(...acked.map((a) => a.index)));
    expect(leader.sm.appliedIndex).to.be.at.least(readIndex);
  });

  it('restarts a node from its disk and catches it up without re-applying anything', async () => {
    cluster = new Cluster([1, 2, 3], limits());
    for (const id of [1, 2, 3]) cluster.start(id);
    let leader = await cluster.leader();
    const acked = await proposeAll(leader.node, 100, 'before');
    await cluster.converged();
    const followerId = [1, 2, 3].find((id) => cluster?.get(id) !== leader) ?? 0;
    await cluster.stop(followerId);
    leader = await cluster.leader();
    acked.push(...await proposeAll(leader.node, 100, 'during'));
    cluster.start(followerId);
    acked.push(...await proposeAll((await cluster.leader()).node, 10, 'after'));
    await cluster.converged();
    // The LogDigestStateMachine asserts in-order application, so a re-applied entry would have failed the node.
    expect(cluster.get(followerId).sm.current.appliedCount).to.equal(210);
    expect(cluster.get(followerId).sm.current.digest).to.equal(expectedDigest(acked));
  });

  it('snapshots, compacts, and brings a lagging node back by snapshot install', async () => {
    cluster = new Cluster([1, 2, 3], limits({ snapshotIntervalEntries: 40 }));
    for (const id of [1, 2, 3]) cluster.start(id);
    let leader = await cluster.leader();
    const lagging = [1, 2, 3].find((id) => cluster?.get(id) !== leader) ?? 0;
    await cluster.stop(lagging);
    leader = await cluster.leader();
    const acked = await proposeAll(leader.node, 300, 's');
    expect(leader.node.status().snapshotIndex).to.be.greaterThan(200);
    expect(leader.node.raftStatus().lastIndex - leader.node.status().snapshotIndex).to.be.below(80);
    cluster.start(lagging);
    await cluster.converged();
    const caughtUp = cluster.get(lagging);
    expect(caughtUp.node.status().snapshotIndex).to.be.greaterThan(0);
    expect(caughtUp.sm.current.appliedCount).to.equal(300);
    expect(caughtUp.sm.current.digest).to.equal(expectedDigest(acked));
    // And it comes back from its own snapshot + log after a restart.
    await cluster.stop(lagging);
    const again = cluster.start(lagging);
    await waitFor('restart from snapshot', () => again.sm.current.appliedCount === 300, WAIT);
  });

  it('hands leadership to a follower when the leader stops', async () => {
    cluster = new Cluster([1, 2, 3], limits({ electionTimeoutTicks: 50 }));
    for (const id of [1, 2, 3]) cluster.start(id);
    const leader = await cluster.leader();
    await proposeAll(leader.node, 10, 't');
    const { nodeId, term } = leader.node.status();
    await cluster.stop(nodeId, true);
    // With a 500-1000 ms election timeout, a leader this soon can only come from the transfer.
    const successor = [...cluster.members.values()].find((t) => t.node.status().role === 'leader');
    expect(successor, 'a follower took over during stop()').to.not.equal(undefined);
    expect(successor?.node.status().term).to.be.greaterThan(term);
  });

  it('bounds pending proposals with a retriable error', async () => {
    cluster = new Cluster([1], limits({ proposalsPendingMax: 10 }));
    const { node } = cluster.start(1);
    await cluster.leader();
    const attempts = Array.from({ length: 25 }, (_, i) => node.propose(Buffer.from(`p${i}`)).then(() => 'ok', (e: SluiceError) => e));
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r === 'ok')).to.have.length(10);
    for (const r of results.filter((x) => x !== 'ok')) {
      expect(isSluiceError(r, Errors.REQUEST_TIMED_OUT) && r.retriable).to.equal(true);
    }
  });

  it('stops and reports a fatal error when applying fails', async () => {
    class FailingStateMachine extends LogDigestStateMachine {
      override apply(entry: Entry): void {
        if (entry.index === 5) throw new Error('boom');
        super.apply(entry);
      }
    }
    cluster = new Cluster([1], limits());
    const { node } = cluster.start(1, new FailingStateMachine());
    const fatal = new Promise<Error>((resolve) => node.once('fatal', resolve));
    await cluster.leader();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => node.propose(Buffer.from(`f${i}`)).then(() => 'ok', () => 'rejected')));
    expect((await fatal).message).to.equal('boom');
    expect(results).to.include('rejected');
    expect(node.isStopped).to.equal(true);
  });
});
