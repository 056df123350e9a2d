// syncObserverPeers: a voter's transport peers follow the registered brokers
// that follow the metadata log, driven by the metadata state machine.
import { expect } from 'chai';
import { EntryType } from '../../src/raft/types.js';
import { encodeMetadataRecords } from '../../src/metadata/codec.js';
import type { Endpoint, MetadataRecord } from '../../src/metadata/records.js';
import { MetadataStateMachine } from '../../src/metadata/state-machine.js';
import { syncObserverPeers, type PeerDirectory } from '../../src/server/observer-peers.js';
import { silentLogger } from '../../src/util/logger.js';

class RecordingPeers implements PeerDirectory {
  readonly calls: string[] = [];
  readonly peers = new Map<number, string>();
  addPeer(id: number, url: string): void {
    this.calls.push(`add ${id} ${url}`);
    this.peers.set(id, url);
  }
  removePeer(id: number): void {
    this.calls.push(`remove ${id}`);
    this.peers.delete(id);
  }
}

function register(brokerId: number, endpoints: Endpoint[], brokerEpoch = 1): MetadataRecord {
  return { type: 'registerBroker', v: 1, brokerId, incarnationId: `i${brokerId}-${brokerEpoch}`, brokerEpoch, endpoints, rack: null, fenced: true };
}

const controller = (url: string): Endpoint[] => [{ name: 'CLIENT', url: 'ws://x:1' }, { name: 'CONTROLLER', url }];

describe('syncObserverPeers', () => {
  let sm: MetadataStateMachine;
  let index: number;
  const apply = (...records: MetadataRecord[]): void => {
    index++;
    sm.apply({ term: 1, index, type: EntryType.Normal, data: encodeMetadataRecords(records) });
  };

  beforeEach(() => {
    sm = new MetadataStateMachine();
    index = 0;
  });

  it('adds followers (not voters, not self, only with a CONTROLLER endpoint), re-points and removes them', () => {
    const peers = new RecordingPeers();
    const stop = syncObserverPeers({ metadata: sm, transport: peers, nodeId: 1, voters: [1, 2, 3], logger: silentLogger });
    apply(
      register(1, controller('ws://n1:9093')), // self
      register(2, controller('ws://n2:9093')), // a voter
      register(4, controller('ws://n4:9093')),
      register(5, [{ name: 'CLIENT', url: 'ws://n5:9092' }]),
    );
    expect(peers.calls).to.deep.equal(['add 4 ws://n4:9093']);
    apply({ type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name: 'num.partitions', value: '3' });
    expect(peers.calls, 'no broker change, no calls').to.have.length(1);
    apply(register(4, controller('ws://n4:9193'), 2));
    expect(peers.calls.at(-1), 'new incarnation, new listener').to.equal('add 4 ws://n4:9193');
    apply(register(6, controller('ws://n6:9093')));
    apply({ type: 'unregisterBroker', v: 1, brokerId: 4, brokerEpoch: 2 });
    expect(peers.calls.slice(2)).to.deep.equal(['add 6 ws://n6:9093', 'remove 4']);
    expect([...peers.peers]).to.deep.equal([[6, 'ws://n6:9093']]);
    stop();
    apply({ type: 'unregisterBroker', v: 1, brokerId: 6, brokerEpoch: 1 });
    expect(peers.calls, 'unsubscribed').to.have.length(4);
  });

  it('syncs the current image at once, and again after a snapshot restore', () => {
    apply(register(4, controller('ws://n4:9093')));
    const snapshot = { meta: { index: 1, term: 1, membership: { voters: [1], observers: [] } }, data: sm.snapshot() };
    apply(register(7, controller('ws://n7:9093')));
    const peers = new RecordingPeers();
    syncObserverPeers({ metadata: sm, transport: peers, nodeId: 1, voters: [1], logger: silentLogger });
    expect([...peers.peers.keys()]).to.deep.equal([4, 7]);
    sm.restore(snapshot); // back to the image of index 1: broker 7 is gone
    expect([...peers.peers.keys()]).to.deep.equal([4]);
    expect(peers.calls.at(-1)).to.equal('remove 7');
  });
});
