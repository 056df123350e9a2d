// Server side of the quorum's client requests (until the controller issue
// replaces them with the real controller APIs):
//   propose {data}  → { index, term } once applied on this node (the leader);
//                     NOT_CONTROLLER with a leader hint elsewhere
//   status          → the node's Raft status plus the state machine summary
//   read            → a linearizable read: ReadIndex, wait for apply, then the
//                     state machine summary (served by the leader only)
//   controller      → {api, body}: a controller API call (controller/service/controller-api.ts)
// Requests change nothing themselves: a proposal takes effect only when its
// entry is committed and applied.

import { Errors, SluiceError } from '../util/errors.js';
import type { RaftNode, RaftNodeStatus } from './node.js';
import type { Proposed } from './pending.js';
import type { StateMachine } from './state-machine.js';
import type { ClientRequest } from './wire.js';
import type { ClientCaller } from './transport.js';

/** The leader's view of one voter or observer (Raft progress). */
export interface PeerProgress {
  readonly nodeId: number;
  /** The highest log index known to be on that node. */
  readonly match: number;
  /** Heard from within the current check-quorum window (about an election timeout). */
  readonly recentActive: boolean;
}

export interface StatusResult extends RaftNodeStatus {
  readonly stateMachine: Record<string, unknown>;
  /** On the leader only: each other member's progress. */
  readonly progress?: readonly PeerProgress[];
}

export interface ReadResult {
  readonly readIndex: number;
  readonly stateMachine: Record<string, unknown>;
}

export type ClientResult = Proposed | StatusResult | ReadResult | unknown;

/** Serves op 'controller' calls; absent on a node that runs no controller. */
export type ControllerCallHandler = (api: string, body: Record<string, unknown>, caller?: ClientCaller) => Promise<unknown>;

export function createClientService(node: RaftNode, sm: StateMachine, controller?: ControllerCallHandler): (req: ClientRequest, caller?: ClientCaller) => Promise<ClientResult> {
  // Not async: a proposal's promise is returned as is, without extra
  // promise hops per request on the leader's hot path.
  return (req, caller) => {
    switch (req.op) {
      case 'propose':
        // With a controller, only controller commands may write the metadata
        // log: a raw entry would not decode and would stop every node.
        if (controller) return Promise.reject(new SluiceError(Errors.INVALID_REQUEST, 'raw proposals are accepted only by a --raft-only node'));
        if (!req.data) return Promise.reject(new SluiceError(Errors.INVALID_REQUEST, 'propose needs data'));
        return node.propose(req.data);
      case 'status': {
        const status = node.status();
        const progress = node.raftStatus().progress;
        const peers = progress ? [...progress].filter(([id]) => id !== status.nodeId).map(([nodeId, p]) => ({ nodeId, match: p.match, recentActive: p.recentActive })) : undefined;
        return Promise.resolve({ ...status, stateMachine: sm.describe(), ...(peers ? { progress: peers } : {}) });
      }
      case 'read':
        return node.readIndex().then((readIndex) => ({ readIndex, stateMachine: sm.describe() }));
      case 'controller':
        if (!controller) return Promise.reject(new SluiceError(Errors.INVALID_REQUEST, 'this node runs no controller'));
        return controller(req.api!, req.body!, caller);
    }
  };
}
