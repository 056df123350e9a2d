// RaftNode.proposeConfChange on a real disk, and the core's behaviour for a
// node that starts outside the voters (an observer-to-be): it never campaigns.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import { Raft } from '../../src/raft/raft.js';
import { DEFAULT_RAFT_CONFIG, type Message } from '../../src/raft/types.js';
import { LogDigestStateMachine } from '../../src/raft-node/log-digest-state-machine.js';
import { RaftNode } from '../../src/raft-node/node.js';
import { nodeLimits } from '../../src/raft-node/quorum-config.js';
import { waitFor } from '../integration/harness.js';

const WAIT = { timeoutMs: 10_000, intervalMs: 5 };

describe('RaftNode membership changes', function () {
  this.timeout(30_000);
  let dir: string;
  let node: RaftNode | undefined;
  const sent: Message[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-confchange-'));
    sent.length = 0;
  });

  afterEach(async () => {
    await node?.stop({ transferLeadership: false });
    node = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function start(id: number, voters: number[]): RaftNode {
    node = RaftNode.start({
      id, voters, raftDir: dir, stateMachine: new LogDigestStateMachine(),
      transport: { send: (msgs) => { sent.push(...msgs); }, close: async () => undefined },
      limits: nodeLimits({ tickMs: 10 }), rng: new SeededRng(id), logger: silentLogger,
      endpoints: new Map(voters.map((v) => [v, `ws://node-${v}`])),
    });
    return node;
  }

  it('resolves once the change is applied; refuses a second one while the first is uncommitted', async () => {
    const n = start(1, [1]);
    await waitFor('leadership', () => n.status().role === 'leader' && n.status().commit > 0, WAIT);
    const first = n.proposeConfChange({ type: 'addObserver', node: 4 });
    const second = await n.proposeConfChange({ type: 'addObserver', node: 5 }).catch((e: unknown) => e);
    expect(isSluiceError(second, Errors.REQUEST_TIMED_OUT), String(second)).to.equal(true);
    expect((second as { details: Record<string, unknown> }).details.reason).to.equal('configChangePending');
    const done = await first;
    expect(n.status().applied).to.be.at.least(done.index);
    expect(n.membership()).to.deep.equal({ voters: [1], observers: [4] });
    expect(n.status().observers).to.deep.equal([4]);
    // Now the next change may go.
    await n.proposeConfChange({ type: 'addObserver', node: 5 });
    await n.proposeConfChange({ type: 'removeObserver', node: 4 });
    expect(n.membership()).to.deep.equal({ voters: [1], observers: [5] });
  });

  it('rejects a change that does not apply with INVALID_REQUEST', async () => {
    const n = start(1, [1]);
    await waitFor('leadership', () => n.status().role === 'leader' && n.status().commit > 0, WAIT);
    for (const change of [
      { type: 'removeObserver', node: 9 }, { type: 'addObserver', node: 1 }, { type: 'removeVoter', node: 1 },
    ] as const) {
      const err = await n.proposeConfChange(change).catch((e: unknown) => e);
      expect(isSluiceError(err, Errors.INVALID_REQUEST), `${change.type} ${change.node}: ${String(err)}`).to.equal(true);
    }
  });

  it('a node outside the voters is an observer: no campaign, proposals refused with NOT_CONTROLLER', async () => {
    const n = start(4, [1, 2, 3]);
    expect(n.status().role).to.equal('observer');
    const err = await n.proposeConfChange({ type: 'addObserver', node: 5 }).catch((e: unknown) => e);
    expect(isSluiceError(err, Errors.NOT_CONTROLLER)).to.equal(true);
  });

  it('the core never lets a node outside the voters campaign, however long it waits', () => {
    const raft = new Raft({ ...DEFAULT_RAFT_CONFIG, id: 4 }, {
      hardState: { term: 0, vote: 0, commit: 0 }, entries: [], bootstrapMembership: { voters: [1, 2, 3], observers: [] }, applied: 0,
    }, new SeededRng(4));
    const messages: Message[] = [];
    for (let i = 0; i < 20 * DEFAULT_RAFT_CONFIG.electionTimeoutTicks; i++) {
      raft.tick();
      raft.campaign(); // even asked to
      if (raft.hasReady()) {
        const rd = raft.ready();
        messages.push(...rd.messages);
        raft.advance(rd);
      }
    }
    expect(messages).to.deep.equal([]);
    expect(raft.status()).to.include({ role: 'observer', term: 0 });
  });
});
