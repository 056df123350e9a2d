// The quorum client against real listeners whose request handlers are
// scripted: leader following, the retry rule, and ambiguity on lost
// connections.
import { expect } from 'chai';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import { DEFAULT_TRANSPORT_LIMITS } from '../../src/raft-node/quorum-config.js';
import { QuorumClient } from '../../src/raft-node/quorum-client.js';
import { RaftTransport } from '../../src/raft-node/transport.js';
import type { ClientRequest } from '../../src/raft-node/wire.js';
import { freePorts, waitFor } from '../integration/harness.js';

type Handler = (req: ClientRequest) => Promise<unknown>;

async function listener(id: number, port: number, handler: Handler): Promise<RaftTransport> {
  const t = new RaftTransport({
    nodeId: id, clusterId: 'c', listen: { host: '127.0.0.1', port, url: `ws://127.0.0.1:${port}` },
    peers: new Map(), limits: DEFAULT_TRANSPORT_LIMITS, rng: new SeededRng(id), logger: silentLogger,
  });
  await t.listen();
  t.start({ onRaftMessage: () => undefined, onClientRequest: handler });
  return t;
}

describe('QuorumClient', function () {
  this.timeout(30_000);
  const open: RaftTransport[] = [];
  let client: QuorumClient | undefined;

  afterEach(async () => {
    client?.close();
    await Promise.all(open.splice(0).map((t) => t.close()));
  });

  it('follows the leader hint and pipelines many proposals', async () => {
    const [p1 = 0, p2 = 0] = await freePorts(2);
    const leaderUrl = `ws://127.0.0.1:${p2}`;
    let nextIndex = 1;
    const seenAtLeader: number[] = [];
    open.push(await listener(1, p1, async () => { throw new SluiceError(Errors.NOT_CONTROLLER, 'not me', { leader: 2, leaderEndpoint: leaderUrl }); }));
    open.push(await listener(2, p2, async (req) => {
      seenAtLeader.push(req.id);
      return { index: nextIndex++, term: 1 };
    }));
    client = new QuorumClient({ endpoints: [`ws://127.0.0.1:${p1}`], clusterId: 'c', rng: new SeededRng(1) });
    const acks = await Promise.all(Array.from({ length: 300 }, (_, i) => client?.propose(Buffer.from([i]))));
    expect(acks.every((a) => a?.nodeId === 2)).to.equal(true);
    expect(new Set(acks.map((a) => a?.index)).size).to.equal(300);
    expect(client.leaderEndpoint).to.equal(leaderUrl);
    expect(seenAtLeader).to.have.length(300);
  });

  it('rejects with an ambiguous error when the connection drops after sending', async () => {
    const [port = 0] = await freePorts(1);
    let received = 0;
    const t = await listener(1, port, () => {
      received++;
      return new Promise(() => undefined); // never answers
    });
    open.push(t);
    client = new QuorumClient({ endpoints: [`ws://127.0.0.1:${port}`], rng: new SeededRng(2) });
    const attempt = client.propose(Buffer.from('x')).then(() => undefined, (e: unknown) => e);
    await waitFor('the request to arrive', () => received === 1, { timeoutMs: 5_000 });
    await t.close();
    const err = await attempt;
    expect(isSluiceError(err, Errors.REQUEST_TIMED_OUT), String(err)).to.equal(true);
    expect((err as SluiceError).details.ambiguous).to.equal(true);
    expect(received, 'an ambiguous proposal is never re-sent').to.equal(1);
  });

  it('gives up the leader search after its deadline when nobody answers', async () => {
    const [port = 0] = await freePorts(1);
    client = new QuorumClient({ endpoints: [`ws://127.0.0.1:${port}`], limits: { leaderSearchTimeoutMs: 300, connectTimeoutMs: 200 }, rng: new SeededRng(3) });
    const err = await client.propose(Buffer.from('x')).then(() => undefined, (e: unknown) => e);
    expect(isSluiceError(err, Errors.LEADER_NOT_AVAILABLE), String(err)).to.equal(true);
  });
});
