// Server-side assignment (KIP-848 in spirit): with a server-* protocol the
// coordinator computes the assignment when the generation starts, names no
// leader, and answers each SyncGroup without waiting for any other member —
// so a member that freezes mid-rebalance (a browser tab) stalls nobody.

import { expect } from 'chai';
import { computeServerAssignment, serverAssignor } from '../../src/groups/server-assignment.js';
import { decodeAssignment, encodeSubscription } from '../../src/groups/consumer-protocol.js';
import { GroupDriver } from './membership-harness.js';

const COUNTS = new Map([['t', 4]]);
const subscription = (topics: string[]) => encodeSubscription({ topics, userData: null, ownedPartitions: [], generationId: -1 });
const serverProtocols = () => [{ name: 'server-range', metadata: subscription(['t']) }];
const partitionsOf = (bytes: Uint8Array) => decodeAssignment(bytes).partitions.flatMap((tp) => tp.partitions.map((p) => `${tp.topic}-${p}`));

describe('groups: server-side assignment', () => {
  it('knows the eager server-* assignors only', () => {
    expect(serverAssignor('server-range')?.name).to.equal('range');
    expect(serverAssignor('server-roundrobin')?.name).to.equal('roundrobin');
    expect(serverAssignor('range')).to.equal(null);
    expect(serverAssignor('server-cooperative-sticky')).to.equal(null);
    expect(computeServerAssignment('range', 1, [], () => 4)).to.equal(null);
  });

  it('assigns every partition once, and nothing to a member whose subscription does not decode', () => {
    const out = computeServerAssignment('server-range', 1, [
      { memberId: 'a', groupInstanceId: null, metadata: subscription(['t']) },
      { memberId: 'b', groupInstanceId: null, metadata: subscription(['t', 'missing']) },
      { memberId: 'c', groupInstanceId: null, metadata: new Uint8Array([1, 2, 3]) },
    ], (t) => COUNTS.get(t))!;
    expect([...partitionsOf(out.get('a')!), ...partitionsOf(out.get('b')!)].sort()).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    expect(partitionsOf(out.get('c')!)).to.deep.equal([]);
  });

  it('names no leader and answers a SyncGroup while another member never syncs', () => {
    const d = new GroupDriver('g', { serverAssign: (protocol, generation, members) => computeServerAssignment(protocol, generation, members, (t) => COUNTS.get(t)) });
    const a = d.joinNew({ protocols: serverProtocols() });
    expect(d.joinAnswer(a.token).leader).to.equal(''); // generation 1: a alone, and not its leader
    d.persistLast();
    const b = d.joinNew({ protocols: serverProtocols() }); // parked until a rejoins
    const ja = d.joinAnswer(d.join(a.memberId, { protocols: serverProtocols() }));
    const jb = d.joinAnswer(b.token);
    for (const j of [ja, jb]) {
      expect(j.errorCode).to.equal(0);
      expect(j.generationId).to.equal(2);
      expect(j.leader).to.equal('');
      expect(j.members).to.deep.equal([]);
    }
    d.persistLast(); // the coordinator's own assignment is written
    const sb = d.syncAnswer(d.sync(b.memberId, jb.generationId)); // a (the first to join) never syncs
    expect(sb.errorCode).to.equal(0);
    const sa = d.syncAnswer(d.sync(a.memberId, ja.generationId));
    expect([...partitionsOf(sa.assignment), ...partitionsOf(sb.assignment)].sort()).to.deep.equal(['t-0', 't-1', 't-2', 't-3']);
    expect(partitionsOf(sb.assignment)).to.have.length(2);
  });
});
