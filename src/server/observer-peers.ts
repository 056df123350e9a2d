// Keeps a voter's Raft transport peers in sync with the metadata image: every
// registered broker that follows the metadata log (a METADATA_ENDPOINT
// endpoint, see src/raft-node/observers.ts), other than a voter or this node,
// is a transport peer at that endpoint's url. Any voter may become leader and
// must then be able to send the log to every observer, and accept the
// observers' answers (the transport refuses hellos from unknown node ids).
//
// Run it on controller (voter) nodes only: an observer needs no links beyond
// the voters it was given from --controller-quorum.
//
// Invariants: it only ever removes peers it added itself, so the static voter
// links are never touched; a changed url re-points the peer (addPeer replaces
// the link). It is driven by image publications, which happen inside the
// Raft ready loop: addPeer/removePeer only create or close sockets, they do
// not step the Raft core.

import type { Logger } from '../util/logger.js';
import type { NodeId } from '../raft/types.js';
import type { MetadataImage } from '../metadata/image.js';
import type { MetadataStateMachine } from '../metadata/state-machine.js';
import { metadataFollowers } from '../raft-node/observers.js';

/** The part of RaftTransport this module drives. */
export interface PeerDirectory {
  addPeer(peerId: NodeId, url: string): void;
  removePeer(peerId: NodeId): void;
}

export interface ObserverPeersOptions {
  readonly metadata: MetadataStateMachine;
  readonly transport: PeerDirectory;
  /** This node's id (never added as its own peer). */
  readonly nodeId: NodeId;
  /** The voters of --controller-quorum: the transport's static peers, never added or removed here. */
  readonly voters: readonly NodeId[];
  readonly logger: Logger;
}

/** Syncs now and on every image that changes brokers; returns the unsubscribe function. */
export function syncObserverPeers(opts: ObserverPeersOptions): () => void {
  const added = new Map<NodeId, string>();
  const sync = (image: MetadataImage): void => {
    const wanted = metadataFollowers(image.brokers.values(), opts.voters, opts.nodeId);
    // Controllers added at runtime (sluice cluster add-controller) are in no --controller-quorum.
    for (const [id, url] of image.controllerEndpoints) if (id !== opts.nodeId && !opts.voters.includes(id)) wanted.set(id, url);
    for (const [id, url] of wanted) {
      if (added.get(id) === url) continue;
      opts.transport.addPeer(id, url);
      added.set(id, url);
      opts.logger.debug({ peer: id, url }, 'observer peer added');
    }
    for (const id of [...added.keys()]) {
      if (wanted.has(id)) continue;
      opts.transport.removePeer(id);
      added.delete(id);
      opts.logger.debug({ peer: id }, 'observer peer removed');
    }
  };
  sync(opts.metadata.image);
  return opts.metadata.subscribe((image, changes) => {
    if (changes === null || changes.brokers.size > 0 || changes.controllerEndpoints) sync(image);
  });
}
