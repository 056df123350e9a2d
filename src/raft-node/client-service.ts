// Server side of the quorum's client requests (until the controller issue
// replaces them with the real controller APIs):
//   propose {data}  → { index, term } once applied on this node (the leader);
//                     NOT_CONTROLLER with a leader hint elsewhere
//   status          → the node's Raft status plus the state machine summary
//   read            → a linearizable read: ReadIndex, wait for apply, then the
//                     state machine summary (served by the leader only)
// Requests change nothing themselves: a proposal takes effect only when its
// entry is committed and applied.

import { Errors, SluiceError } from '../util/errors.js';
import type { RaftNode, RaftNodeStatus } from './node.js';
import type { Proposed } from './pending.js';
import type { StateMachine } from './state-machine.js';
import type { ClientRequest } from './wire.js';

export interface StatusResult extends RaftNodeStatus {
  readonly stateMachine: Record<string, unknown>;
}

export interface ReadResult {
  readonly readIndex: number;
  readonly stateMachine: Record<string, unknown>;
}

export type ClientResult = Proposed | StatusResult | ReadResult;

export function createClientService(node: RaftNode, sm: StateMachine): (req: ClientRequest) => Promise<ClientResult> {
  // Not async: a proposal's promise is returned as is, without extra
  // promise hops per request on the leader's hot path.
  return (req) => {
    switch (req.op) {
      case 'propose':
        if (!req.data) return Promise.reject(new SluiceError(Errors.INVALID_REQUEST, 'propose needs data'));
        return node.propose(req.data);
      case 'status':
        return Promise.resolve({ ...node.status(), stateMachine: sm.describe() });
      case 'read':
        return node.readIndex().then((readIndex) => ({ readIndex, stateMachine: sm.describe() }));
    }
  };
}
