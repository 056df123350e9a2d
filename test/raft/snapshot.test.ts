import { expect } from 'chai';
import type { InstallSnapshotRequest, InstallSnapshotResponse, Message } from '../../src/raft/types.js';
import { Cluster, drain, enc, soloRaft } from './harness.js';

const chunksTo = (c: Cluster, to: number): InstallSnapshotRequest[] =>
  c.delivered.filter((m): m is InstallSnapshotRequest => m.type === 'installSnapshot' && m.to === to);

/** A cluster where nodes 3 (voter) and 4 (observer) missed entries the leader then compacted away. */
function laggingCluster(seed: number): { c: Cluster; snapIndex: number; snapBytes: number; values: string[] } {
  const c = new Cluster({ voters: [1, 2, 3], observers: [4], seed, config: { snapshotChunkBytes: 64 } });
  c.elect(1);
  c.isolate(3);
  c.isolate(4);
  const values = Array.from({ length: 10 }, (_, i) => `value-${i}`);
  for (const v of values) c.propose(1, v);
  c.settle();
  const snap = c.node(1).compact();
  for (const v of ['after-1', 'after-2']) {
    c.propose(1, v);
    values.push(v);
  }
  c.settle();
  expect(c.raft(1).firstIndex()).to.equal(snap.meta.index + 1);
  return { c, snapIndex: snap.meta.index, snapBytes: snap.data.byteLength, values };
}

describe('raft snapshots', () => {
  it('sends a compacted-away prefix as a snapshot in chunks to a lagging follower and observer', () => {
    const { c, snapIndex, snapBytes, values } = laggingCluster(21);
    const chunks = Math.ceil(snapBytes / 64);
    expect(chunks).to.be.at.least(3);
    c.heal();
    c.tickUntil(() => [3, 4].every((id) => c.node(id).values().length === values.length), 100, 'catch-up');
    for (const id of [3, 4]) {
      const sent = chunksTo(c, id);
      expect(sent.map((m) => m.offset), `node ${id}`).to.deep.equal(Array.from({ length: chunks }, (_, i) => i * 64));
      expect(sent.at(-1)!.done).to.equal(true);
      expect(sent.every((m) => m.chunk.byteLength <= 64)).to.equal(true);
      expect(c.node(id).snapshotsInstalled).to.equal(1);
      expect(c.node(id).values()).to.deep.equal(values);
      expect(c.raft(id).firstIndex()).to.equal(snapIndex + 1);
      expect(c.node(id).disk.snapshot?.meta.index).to.equal(snapIndex);
    }
    expect(c.raft(1).status().progress?.get(3)?.state).to.equal('replicate');
  });

  it('resends a lost chunk after an election timeout and resumes from the follower offset', () => {
    const { c, values } = laggingCluster(22);
    c.heal();
    let dropped = false;
    c.addFilter((m) => {
      if (dropped || m.type !== 'installSnapshot' || m.to !== 3 || m.offset !== 64) return false;
      dropped = true;
      return true;
    });
    c.tickUntil(() => c.node(3).values().length === values.length, 200, 'catch-up');
    expect(dropped).to.equal(true);
    const offsets = chunksTo(c, 3).map((m) => m.offset);
    expect(offsets.filter((o) => o === 64)).to.have.length(1); // the drop happened before delivery
    expect(offsets.filter((o) => o === 0)).to.have.length(1); // resumed, not restarted
    expect(c.node(3).snapshotsInstalled).to.equal(1);
  });

  it('a follower accepts chunks only in order and asks for a restart on an unknown snapshot', () => {
    const f = soloRaft(2, { voters: [1, 2], observers: [] });
    const meta = (index: number) => ({ index, term: 1, membership: { voters: [1, 2], observers: [] } });
    const chunk = (index: number, offset: number, done = false): Message => ({
      type: 'installSnapshot', from: 1, to: 2, term: 1, meta: meta(index), offset, chunk: enc('abcd'), done,
    });
    f.step(chunk(5, 0));
    f.step(chunk(5, 8)); // gap: wants 4
    f.step(chunk(6, 4)); // a different snapshot mid-way: restart
    f.step(chunk(5, 4));
    f.step(chunk(5, 8, true));
    const answers = drain(f).filter((m): m is InstallSnapshotResponse => m.type === 'installSnapshotResp');
    expect(answers.map((a) => [a.snapshotIndex, a.nextOffset, a.done])).to.deep.equal([
      [5, 4, false], [5, 4, false], [6, -1, false], [5, 8, false], [5, 12, true],
    ]);
    expect(f.status()).to.include({ commit: 5, snapshotIndex: 5, lastIndex: 5, applied: 5 });
  });

  it('does not install a snapshot at or below its commit index', () => {
    const f = soloRaft(2, { voters: [1, 2], observers: [] }, {
      entries: [1, 2, 3].map((i) => ({ index: i, term: 1, type: 0, data: enc('x') })), term: 1, commit: 3,
    });
    f.step({ type: 'installSnapshot', from: 1, to: 2, term: 1, meta: { index: 2, term: 1, membership: { voters: [1, 2], observers: [] } }, offset: 0, chunk: enc('old'), done: true });
    const rd = f.ready();
    expect(rd.snapshot).to.equal(undefined);
    expect(f.status()).to.include({ snapshotIndex: 0, lastIndex: 3 });
    expect(rd.messages[0]).to.include({ type: 'installSnapshotResp', done: true });
  });

  it('a restarted leader can still send the snapshot it loaded from disk', () => {
    const { c, values } = laggingCluster(23);
    c.crash(1);
    c.restart(1);
    c.heal();
    c.isolate(2); // node 1 must win with node 3, which needs the snapshot to catch up
    c.tickUntil(() => c.leader() !== undefined && c.node(3).values().length === values.length, 500, 'catch-up');
    expect(c.node(3).snapshotsInstalled).to.equal(1);
  });

  it('rejects compaction beyond the applied index or with a wrong membership', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 24 });
    c.elect(1);
    const index = c.node(1).appliedIndex();
    const membership = { voters: [1, 2, 3], observers: [] };
    expect(() => c.raft(1).compact({ meta: { index: index + 1, term: 1, membership }, data: enc('') })).to.throw(/applied/);
    expect(() => c.raft(1).compact({ meta: { index, term: 1, membership: { voters: [1], observers: [] } }, data: enc('') }))
      .to.throw(/membership/);
  });
});
