// The simulation trace: what happened, in order, for a failure report.
// Keeping every line of a long run would cost memory and time, so by default
// the trace is a ring buffer of the last `capacity` events; with full tracing
// (SLUICE_SIM_TRACE=1 or a single-seed replay) it keeps everything.
//
// Lines are formatted lazily: an entry may hold a closure that renders the
// text only if the trace is ever printed, so a passing run pays almost nothing.

import type { Message } from '../../src/raft/types.js';

import type { Label as Text } from './event-queue.js';

interface TraceLine {
  readonly timeMs: number;
  readonly text: Text;
}

export class Trace {
  private readonly ring: (TraceLine | undefined)[];
  private next = 0;
  private count = 0;
  private readonly all: TraceLine[] | undefined;

  constructor(
    readonly capacity = 50,
    full = false,
  ) {
    this.ring = new Array<TraceLine | undefined>(capacity).fill(undefined);
    this.all = full ? [] : undefined;
  }

  get full(): boolean {
    return this.all !== undefined;
  }

  add(timeMs: number, text: Text): void {
    const line = { timeMs, text };
    this.ring[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
    this.count++;
    this.all?.push(line);
  }

  /** The last `n` lines (at most the ring's capacity), oldest first. */
  tail(n = this.capacity): string[] {
    const have = Math.min(this.count, this.capacity, n);
    const out: string[] = [];
    for (let k = have; k > 0; k--) {
      const line = this.ring[(this.next - k + this.capacity) % this.capacity];
      if (line !== undefined) out.push(render(line));
    }
    return out;
  }

  /** Every line of the run when full tracing is on, else the ring's tail. */
  lines(): string[] {
    return this.all ? this.all.map(render) : this.tail();
  }
}

function render(line: TraceLine): string {
  const text = typeof line.text === 'string' ? line.text : line.text();
  return `${String(line.timeMs).padStart(7)}ms ${text}`;
}

/** One-line summary of a Raft message for the trace. */
export function describeMessage(m: Message): string {
  const head = `${m.from}->${m.to} ${m.type} t${m.term}`;
  switch (m.type) {
    case 'vote':
    case 'preVote':
      return `${head} last=${m.lastLogIndex}/${m.lastLogTerm}${m.transfer ? ' transfer' : ''}`;
    case 'voteResp':
    case 'preVoteResp':
      return `${head} ${m.granted ? 'granted' : 'rejected'}`;
    case 'append': {
      const n = m.entries.length;
      const span = n === 0 ? '' : ` [${m.entries[0]?.index}..${m.entries[n - 1]?.index}]`;
      return `${head} prev=${m.prevLogIndex}/${m.prevLogTerm} n=${n}${span} commit=${m.commit}`;
    }
    case 'appendResp':
      return m.success
        ? `${head} ok match=${m.matchIndex}`
        : `${head} reject conflict=${m.conflictIndex}/${m.conflictTerm}`;
    case 'heartbeat':
      return `${head} commit=${m.commit} read=${m.readRound}`;
    case 'heartbeatResp':
      return `${head} read=${m.readRound} last=${m.lastIndex}`;
    case 'installSnapshot':
      return `${head} snap=${m.meta.index}/${m.meta.term} off=${m.offset} len=${m.chunk.length}${m.done ? ' done' : ''}`;
    case 'installSnapshotResp':
      return `${head} snap=${m.snapshotIndex} next=${m.nextOffset}${m.done ? ' done' : ''}`;
    default:
      return head;
  }
}
