// One well-formed example of every Raft message type, shared by the wire and
// transport tests.
import { EntryType, type Message } from '../../src/raft/types.js';

const membership = { voters: [1, 2, 3], observers: [4] };

export const SAMPLE_MESSAGES: readonly Message[] = [
  { type: 'preVote', from: 1, to: 2, term: 3, lastLogIndex: 10, lastLogTerm: 2, transfer: false },
  { type: 'vote', from: 1, to: 2, term: 3, lastLogIndex: 10, lastLogTerm: 2, transfer: true },
  { type: 'preVoteResp', from: 2, to: 1, term: 3, granted: true },
  { type: 'voteResp', from: 2, to: 1, term: 3, granted: false },
  {
    type: 'append', from: 1, to: 2, term: 3, prevLogIndex: 10, prevLogTerm: 2, commit: 9,
    entries: [
      { term: 3, index: 11, type: EntryType.NoOp, data: new Uint8Array(0) },
      { term: 3, index: 12, type: EntryType.Normal, data: new Uint8Array([1, 2, 3, 255]) },
      { term: 3, index: 13, type: EntryType.Config, data: new Uint8Array([0, 0, 0, 0, 4]) },
    ],
  },
  { type: 'appendResp', from: 2, to: 1, term: 3, success: false, matchIndex: 10, conflictTerm: 2, conflictIndex: 7 },
  { type: 'heartbeat', from: 1, to: 2, term: 3, commit: 12, readRound: 5 },
  { type: 'heartbeatResp', from: 2, to: 1, term: 3, readRound: 5, lastIndex: 13 },
  { type: 'installSnapshot', from: 1, to: 4, term: 3, meta: { index: 100, term: 3, membership }, offset: 0, chunk: new Uint8Array(1000).fill(7), done: false },
  { type: 'installSnapshotResp', from: 4, to: 1, term: 3, snapshotIndex: 100, nextOffset: -1, done: false },
  { type: 'timeoutNow', from: 1, to: 2, term: 3 },
];
