// The chaos harness's network: a TCP proxy in front of every node endpoint
// (broker and controller listeners), so the harness can cut, delay and heal
// each directed link between two nodes, or between the clients and a node.
//
// One listener per target endpoint (127.0.0.1, a free port) forwards to the
// real endpoint. The proxy tells who is dialing by the connection's source
// address: node i dials from 127.0.0.(10+i) (its --outbound-address); any
// other address is 'client'. The listener tells whom it is dialing. Each
// proxied connection is two pipes: initiator → owner and owner → initiator,
// and the rule of a directed link (src → dst) governs every byte travelling
// from src to dst, whichever side opened the connection.
//
// Rules per directed link:
//   cut 'blackhole' — bytes from src to dst are held (not delivered, the
//     connections stay open, as in a partition where TCP keeps retrying); on
//     heal what was held is delivered in order, unless an end closed the
//     connection meanwhile. New connections are accepted and held likewise.
//   cut 'reset'     — existing connections carrying the link are reset at
//     once and new ones are reset on arrival (connection refused/reset).
//   delay(ms)       — each chunk is delivered ms after it arrived (in order;
//     the delay in force at delivery time counts, so a heal releases them).
// Changing a rule acts on existing connections immediately.
//
// Invariants: a pipe delivers bytes in arrival order and never reorders or
// duplicates them; its buffer is bounded (the source is paused past
// PIPE_BUFFER_BYTES_MAX, so backpressure reaches the sender); a link from a
// node to itself is never cut or delayed.

import net from 'node:net';

export type Peer = number | 'client';
export type CutMode = 'blackhole' | 'reset';

/** Node i dials from 127.0.0.(NODE_ADDRESS_BASE + i). */
export const NODE_ADDRESS_BASE = 10;
const NODE_ID_MAX = 200;
/** Bytes one pipe buffers before it pauses its source. */
const PIPE_BUFFER_BYTES_MAX = 1024 * 1024;
const PIPE_RESUME_BYTES = PIPE_BUFFER_BYTES_MAX / 4;

export function nodeAddress(id: number): string {
  if (!(Number.isInteger(id) && id >= 1 && id <= NODE_ID_MAX)) throw new Error(`node id ${id} has no loopback address`);
  return `127.0.0.${NODE_ADDRESS_BASE + id}`;
}

/** The peer behind a source address: 127.0.0.(10+i) → node i, anything else → 'client'. */
export function peerOfAddress(address: string | undefined): Peer {
  const m = /^(?:::ffff:)?127\.0\.0\.(\d+)$/.exec(address ?? '');
  const id = m ? Number(m[1]) - NODE_ADDRESS_BASE : 0;
  return id >= 1 && id <= NODE_ID_MAX ? id : 'client';
}

export function peerName(p: Peer): string {
  return p === 'client' ? 'client' : `n${p}`;
}

interface LinkRule {
  readonly cut: CutMode | null;
  readonly delayMs: number;
}

const OPEN: LinkRule = { cut: null, delayMs: 0 };

export interface ProxyRoute {
  readonly name: string;
  /** The node that owns the target endpoint. */
  readonly node: number;
  /** Where the proxy listens (127.0.0.1). */
  readonly port: number;
  readonly targetPort: number;
}

interface Rules {
  rule(from: Peer, to: Peer): LinkRule;
}

/** One direction of a proxied connection: bytes from `source` to `dest`, under the rule of from → to. */
class Pipe {
  private readonly queue: Array<{ readonly chunk: Buffer; readonly arrivedMs: number }> = [];
  queuedBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private awaitingDrain = false;
  private pausedByUs = false;
  private sourceEnded = false;
  private destEnded = false;

  constructor(
    readonly from: Peer,
    readonly to: Peer,
    private readonly source: net.Socket,
    private readonly dest: net.Socket,
    private readonly rules: Rules,
  ) {
    source.on('data', (chunk: Buffer) => this.push(chunk));
    source.on('end', () => {
      this.sourceEnded = true;
      this.pump();
    });
    dest.on('drain', () => {
      this.awaitingDrain = false;
      this.pump();
    });
  }

  private push(chunk: Buffer): void {
    this.queue.push({ chunk, arrivedMs: performance.now() });
    this.queuedBytes += chunk.length;
    if (this.queuedBytes >= PIPE_BUFFER_BYTES_MAX && !this.pausedByUs) {
      this.pausedByUs = true;
      this.source.pause();
    }
    this.pump();
  }

  /** Delivers what is due and allowed now; re-run on every rule change, drain and timer. */
  pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rule = this.rules.rule(this.from, this.to);
    if (this.dest.destroyed || rule.cut !== null) return;
    while (this.queue.length > 0 && !this.awaitingDrain) {
      const head = this.queue[0]!;
      // The delay in force now counts from arrival: a shorter (or healed) delay releases held chunks.
      const waitMs = head.arrivedMs + rule.delayMs - performance.now();
      if (waitMs > 0) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(waitMs));
        break;
      }
      this.queue.shift();
      this.queuedBytes -= head.chunk.length;
      if (!this.dest.write(head.chunk)) this.awaitingDrain = true;
    }
    if (this.pausedByUs && this.queuedBytes <= PIPE_RESUME_BYTES) {
      this.pausedByUs = false;
      this.source.resume();
    }
    if (this.queue.length === 0 && this.sourceEnded && !this.destEnded) {
      this.destEnded = true;
      this.dest.end();
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** A connection from `initiator` to the endpoint of `owner`, through the proxy. */
class ProxiedConnection {
  readonly up: Pipe;
  readonly down: Pipe;
  private closed = false;

  constructor(
    readonly initiator: Peer,
    readonly owner: number,
    readonly inbound: net.Socket,
    readonly outbound: net.Socket,
    rules: Rules,
    private readonly onClose: (c: ProxiedConnection) => void,
  ) {
    this.up = new Pipe(initiator, owner, inbound, outbound, rules);
    this.down = new Pipe(owner, initiator, outbound, inbound, rules);
    inbound.on('error', () => this.reset());
    outbound.on('error', () => this.reset());
    inbound.on('close', () => this.onSocketClose(inbound, outbound));
    outbound.on('close', () => this.onSocketClose(outbound, inbound));
  }

  /** True if this connection carries bytes over the directed link a → b. */
  carries(a: Peer, b: Peer): boolean {
    return (this.initiator === a && this.owner === b) || (this.owner === a && this.initiator === b);
  }

  pump(): void {
    this.up.pump();
    this.down.pump();
  }

  /** Resets both sockets (an RST to each side). */
  reset(): void {
    for (const s of [this.inbound, this.outbound]) if (!s.destroyed) s.resetAndDestroy();
  }

  /**
   * A socket closed. After a clean end its pipes finish the other side (held
   * bytes wait for a heal); after an abrupt close the other side goes too.
   */
  private onSocketClose(closed: net.Socket, other: net.Socket): void {
    if (!other.destroyed && !closed.readableEnded) other.destroy();
    if (this.inbound.destroyed && this.outbound.destroyed && !this.closed) {
      this.closed = true;
      this.up.stop();
      this.down.stop();
      this.onClose(this);
    }
  }
}

/** The harness's network between nodes (and between clients and nodes). */
export class ChaosProxy implements Rules {
  private readonly routes: Array<ProxyRoute & { readonly server: net.Server }> = [];
  private readonly rules = new Map<string, LinkRule>();
  private readonly conns = new Set<ProxiedConnection>();
  private closed = false;

  /** The node ids that own an endpoint behind the proxy. */
  get nodes(): number[] {
    return [...new Set(this.routes.map((r) => r.node))].sort((a, b) => a - b);
  }

  get connectionCount(): number {
    return this.conns.size;
  }

  /** Bytes received from src and not yet delivered to dst (held by a cut or a delay). */
  queuedBytes(src: Peer, dst: Peer): number {
    let n = 0;
    for (const c of this.conns) for (const p of [c.up, c.down]) if (p.from === src && p.to === dst) n += p.queuedBytes;
    return n;
  }

  /** Listens on 127.0.0.1 (`port`, or a free one) and forwards to 127.0.0.1:targetPort, the endpoint of `node`. */
  async addRoute(name: string, node: number, targetPort: number, port = 0): Promise<ProxyRoute> {
    if (this.closed) throw new Error('the proxy is closed');
    const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.accept(socket, node, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const route = { name, node, port: (server.address() as net.AddressInfo).port, targetPort, server };
    this.routes.push(route);
    return { name, node, port: route.port, targetPort };
  }

  rule(from: Peer, to: Peer): LinkRule {
    if (from === to) return OPEN;
    return this.rules.get(linkKey(from, to)) ?? OPEN;
  }

  // ---- rules -------------------------------------------------------------------

  /** Cuts the directed link src → dst (bytes from src to dst). */
  cut(src: Peer, dst: Peer, mode: CutMode = 'blackhole'): void {
    if (src === dst) return;
    this.setRule(src, dst, { ...this.rule(src, dst), cut: mode });
  }

  /** Cuts both directions between a and b. */
  cutBoth(a: Peer, b: Peer, mode: CutMode = 'blackhole'): void {
    this.cut(a, b, mode);
    this.cut(b, a, mode);
  }

  /** Delays every byte from src to dst by `ms` (0 removes the delay). */
  delay(src: Peer, dst: Peer, ms: number): void {
    if (src === dst) return;
    if (!(Number.isFinite(ms) && ms >= 0)) throw new Error(`bad delay ${ms}`);
    this.setRule(src, dst, { ...this.rule(src, dst), delayMs: ms });
  }

  /** Heals one directed link (cut and delay), or with no argument every link. */
  heal(src?: Peer, dst?: Peer): void {
    if (src === undefined || dst === undefined) {
      this.rules.clear();
      for (const c of this.conns) c.pump();
      return;
    }
    this.setRule(src, dst, OPEN);
  }

  /** Cuts `node` off from every other node both ways; from the clients too when asked. */
  isolate(node: number, opts: { readonly clients?: boolean; readonly mode?: CutMode } = {}): void {
    for (const other of this.nodes) if (other !== node) this.cutBoth(node, other, opts.mode);
    if (opts.clients) this.cutBoth(node, 'client', opts.mode);
  }

  /** Cuts every link between the two groups, both ways. */
  split(groupA: readonly Peer[], groupB: readonly Peer[], mode: CutMode = 'blackhole'): void {
    for (const a of groupA) for (const b of groupB) this.cutBoth(a, b, mode);
  }

  /** Cuts a → b only: a's bytes never reach b, b's still reach a. */
  oneWay(a: Peer, b: Peer, mode: CutMode = 'blackhole'): void {
    this.cut(a, b, mode);
  }

  /** The rules in force, e.g. ['n1->n2 cut blackhole', 'client->n3 delay 200ms']. */
  describe(): string[] {
    return [...this.rules.entries()].map(([k, r]) => `${k}${r.cut ? ` cut ${r.cut}` : ''}${r.delayMs > 0 ? ` delay ${r.delayMs}ms` : ''}`);
  }

  /** Closes every listener and connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const c of [...this.conns]) c.reset();
    await Promise.all(this.routes.map((r) => new Promise<void>((resolve) => r.server.close(() => resolve()))));
  }

  // ---- connections ---------------------------------------------------------------

  private setRule(src: Peer, dst: Peer, rule: LinkRule): void {
    const key = linkKey(src, dst);
    if (rule.cut === null && rule.delayMs === 0) this.rules.delete(key);
    else this.rules.set(key, rule);
    for (const c of [...this.conns]) {
      if (!c.carries(src, dst)) continue;
      if (rule.cut === 'reset') c.reset();
      else c.pump();
    }
  }

  private accept(inbound: net.Socket, owner: number, targetPort: number): void {
    const initiator = peerOfAddress(inbound.remoteAddress);
    if (this.closed || this.rule(initiator, owner).cut === 'reset' || this.rule(owner, initiator).cut === 'reset') {
      inbound.on('error', () => undefined);
      inbound.resetAndDestroy();
      return;
    }
    inbound.setNoDelay(true);
    const outbound = net.connect({ host: '127.0.0.1', port: targetPort, allowHalfOpen: true, noDelay: true });
    const conn = new ProxiedConnection(initiator, owner, inbound, outbound, this, (c) => this.conns.delete(c));
    this.conns.add(conn);
  }
}

function linkKey(from: Peer, to: Peer): string {
  return `${peerName(from)}->${peerName(to)}`;
}
