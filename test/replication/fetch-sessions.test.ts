// The leader's fetch-session cache (replication/fetch-sessions.ts), pure:
// opening, continuing and refusing sessions, the partition index, the LRU
// bound, and the rule for what an answer must say.
import { expect } from 'chai';
import type { FetchRequest } from '../../src/protocol/apis/fetch.js';
import { FetchSessionCache, markSent, mustInclude, type FetchSession, type SessionPartition } from '../../src/replication/fetch-sessions.js';
import { Errors } from '../../src/util/errors.js';

function req(replicaId: number, sessionId: number, sessionEpoch: number, parts: Array<[string, number, number]>, forgotten: Array<[string, number]> = []): FetchRequest {
  const topics = new Map<string, Array<{ partition: number; fetchOffset: number; currentLeaderEpoch: number; partitionMaxBytes: number }>>();
  for (const [name, partition, fetchOffset] of parts) {
    if (!topics.has(name)) topics.set(name, []);
    topics.get(name)!.push({ partition, fetchOffset, currentLeaderEpoch: 0, partitionMaxBytes: 1 << 20 });
  }
  const gone = new Map<string, number[]>();
  for (const [name, partition] of forgotten) gone.set(name, [...(gone.get(name) ?? []), partition]);
  return {
    replicaId, brokerEpoch: 1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, sessionId, sessionEpoch,
    topics: [...topics].map(([name, partitions]) => ({ name, partitions })), forgotten: [...gone].map(([name, partitions]) => ({ name, partitions })),
  };
}

function session(r: ReturnType<FetchSessionCache['apply']>): FetchSession {
  if ('error' in r) throw new Error(r.message);
  return r.session;
}

const offsets = (s: FetchSession): Record<string, number> => Object.fromEntries([...s.partitions.values()].map((p) => [p.key, p.fetchOffset]));

describe('replication: fetch sessions (leader side)', () => {
  it('opens a session with every listed partition, then applies changes, additions and forgotten partitions', () => {
    const cache = new FetchSessionCache();
    const s = session(cache.apply(req(2, 0, 0, [['a', 0, 5], ['a', 1, 7], ['b', 0, 0]]), 0));
    expect(s.id).to.be.greaterThan(0);
    expect(s.nextEpoch).to.equal(1);
    expect(offsets(s)).to.deep.equal({ 'a-0': 5, 'a-1': 7, 'b-0': 0 });
    const again = session(cache.apply(req(2, s.id, 1, [['a', 0, 9], ['c', 3, 1]], [['b', 0]]), 1));
    expect(again).to.equal(s);
    expect(offsets(s)).to.deep.equal({ 'a-0': 9, 'a-1': 7, 'c-3': 1 });
    expect(s.nextEpoch).to.equal(2);
    expect([...cache.sessionsOf('a-1')]).to.deep.equal([s]);
    expect([...cache.sessionsOf('b-0')], 'a forgotten partition leaves the index').to.deep.equal([]);
  });

  it('refuses an unknown session, another replica\'s session and a wrong epoch (which also drops the session)', () => {
    const cache = new FetchSessionCache();
    const s = session(cache.apply(req(2, 0, 0, [['a', 0, 0]]), 0));
    const unknown = cache.apply(req(2, s.id + 1, 1, []), 0);
    expect('error' in unknown && unknown.error).to.equal(Errors.FETCH_SESSION_ID_NOT_FOUND);
    const stolen = cache.apply(req(3, s.id, 1, []), 0);
    expect('error' in stolen && stolen.error).to.equal(Errors.FETCH_SESSION_ID_NOT_FOUND);
    const stale = cache.apply(req(2, s.id, 5, []), 0);
    expect('error' in stale && stale.error).to.equal(Errors.INVALID_FETCH_SESSION_EPOCH);
    const gone = cache.apply(req(2, s.id, 1, []), 0);
    expect('error' in gone && gone.error, 'the session went with the wrong epoch').to.equal(Errors.FETCH_SESSION_ID_NOT_FOUND);
    expect([...cache.sessionsOf('a-0')]).to.deep.equal([]);
  });

  it('keeps one session per replica and at most sessionsMax, dropping the least recently used', () => {
    const cache = new FetchSessionCache(2);
    const a = session(cache.apply(req(1, 0, 0, [['t', 0, 0]]), 0));
    const b = session(cache.apply(req(2, 0, 0, [['t', 0, 0]]), 0));
    session(cache.apply(req(1, a.id, 1, []), 1)); // a is now the most recently used
    const c = session(cache.apply(req(3, 0, 0, [['t', 0, 0]]), 2));
    expect(cache.size).to.equal(2);
    expect('error' in cache.apply(req(2, b.id, 1, []), 3), 'b was the least recently used').to.equal(true);
    expect([...cache.sessionsOf('t-0')].map((x) => x.id).sort()).to.deep.equal([a.id, c.id].sort());
    const a2 = session(cache.apply(req(1, 0, 0, [['t', 1, 0]]), 4));
    expect(a2.id).to.not.equal(a.id);
    expect('error' in cache.apply(req(1, a.id, 2, []), 5), 'a replica\'s new session replaces its old one').to.equal(true);
  });

  it('rotates the order partitions are read in, so none always comes last', () => {
    const cache = new FetchSessionCache();
    const s = session(cache.apply(req(2, 0, 0, [['t', 0, 0], ['t', 1, 0], ['t', 2, 0]]), 0));
    const firsts = [0, 1, 2, 3].map(() => s.ordered()[0]!.partition);
    expect(firsts).to.deep.equal([0, 1, 2, 0]);
  });

  it('leaves a partition out of an answer only when there is nothing new to tell', () => {
    const sp: SessionPartition = { topic: 't', partition: 0, key: 't-0', fetchOffset: 10, currentLeaderEpoch: 0, partitionMaxBytes: 1, sentHighWatermark: -1, sentLogStartOffset: -1 };
    const quiet = { errorCode: 0, highWatermark: 10, logStartOffset: 0, recordBytes: 0 };
    expect(mustInclude(sp, quiet), 'the first answer always').to.equal(true);
    markSent(sp, quiet);
    expect(mustInclude(sp, quiet)).to.equal(false);
    expect(mustInclude(sp, { ...quiet, recordBytes: 1 }), 'records').to.equal(true);
    expect(mustInclude(sp, { ...quiet, highWatermark: 11 }), 'a new high watermark').to.equal(true);
    expect(mustInclude(sp, { ...quiet, logStartOffset: 3 }), 'a new log start').to.equal(true);
    expect(mustInclude(sp, { ...quiet, errorCode: 6 }), 'an error').to.equal(true);
  });
});
