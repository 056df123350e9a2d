// The controller listener and the links to the other voters, over the
// injected Transport (src/net/transport.ts: WebSockets in the process, the
// in-memory network in the simulation; this module holds no socket code).
//
// Each node listens on its controller listener (ws://host:port) and dials
// every peer once (peer-link.ts), so a pair of nodes talks over two
// connections, each used in one direction for Raft traffic. The same listener
// serves client connections (hello role 'client'), whose requests are handed
// to `onClientRequest` and answered on the same connection.
//
// Peers: the voters named at construction, plus peers added at runtime with
// addPeer (observers — broker nodes following the metadata log — whose
// listeners the voters learn from the metadata image). A node hello is
// accepted only from a current peer; removePeer closes the link to it and
// its inbound connections, so a removed node can no longer inject messages.
//
// Hostile or broken input never crashes the process. Dropped and logged:
//   - frames that are not binary, not msgpack, or of the wrong shape (the
//     connection is closed: we cannot trust anything after them);
//   - frames above frameBytesMax (ws closes the connection with 1009);
//   - a connection whose first frame is not a hello, or whose hello names a
//     wrong cluster id or a node id that is not a peer (closed);
//   - Raft messages with a bad shape, or whose `from` is not the node that
//     said hello on that connection, or whose `to` is not us (dropped).
// Bounds: inboundConnectionsMax connections; clientRequestsInFlightMax per
// client connection; reading a client is paused while its unsent responses
// exceed clientBufferedBytesMax; responses produced in one event-loop turn
// go out as one frame; silent connections are closed after
// idleTimeoutMs (outgoing links ping, so a live peer is never silent).
//
// Timers (the idle sweep, a rejected connection's hard close) run on the
// injected Scheduler and read the injected Clock.
//
// TLS: with a TlsContext the listener is wss:// and links to wss:// peers
// present this node's certificate. Under ssl.client.auth=required a node
// without a certificate from the truststore's CA fails the handshake, so it
// never says hello: it is not admitted to the quorum.

import type { TlsContext } from '../net/tls.js';
import type { AcceptedSocket, Listener, Transport } from '../net/transport.js';
import { WS_TRANSPORT } from '../net/ws-transport.js';
import { SystemClock, SystemScheduler, type Clock, type Scheduler } from '../util/clock.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import type { Message, NodeId } from '../raft/types.js';
import { PeerLink, type PeerLinkStats } from './peer-link.js';
import { anonymousSession, type SecuritySession } from '../security/principal.js';
import type { ListenAddress, TransportLimits } from './quorum-config.js';
import {
  WIRE_VERSION, decodeFrame, encodeFrame, estimateMessageBytes,
  type ClientRequest, type ClientResponse, type Frame, type WireError,
} from './wire.js';

export interface TransportHandlers {
  /** A well-shaped Raft message from a known peer, addressed to us. */
  onRaftMessage(msg: Message): void;
  /** A client request; the result (or a SluiceError) goes back as the response. `caller` is who sent it, for the authorizer. */
  onClientRequest(req: ClientRequest, caller: ClientCaller): Promise<unknown>;
}

/** Who sent a client request on the controller listener: the connection's address and security session. */
export interface ClientCaller {
  /** The peer's IP address. */
  readonly remoteAddress: string;
  readonly security: SecuritySession;
}

export interface TransportOptions {
  readonly nodeId: NodeId;
  readonly clusterId: string;
  readonly listen: ListenAddress;
  /** Peers' controller listeners, by node id (without us). */
  readonly peers: ReadonlyMap<NodeId, string>;
  readonly limits: TransportLimits;
  readonly rng: Rng;
  readonly logger: Logger;
  /** The local address links to peers are dialed from (--outbound-address); the OS picks when absent. */
  readonly localAddress?: string;
  /** The node's TLS identity and trust: a wss:// listener, and what links to wss:// peers present and check. */
  readonly tls?: TlsContext;
  /** The network (default WebSockets). */
  readonly transport?: Transport;
  readonly clock?: Clock;
  readonly scheduler?: Scheduler;
}

export interface TransportStats {
  readonly inboundConnections: number;
  readonly rejectedFrames: number;
  readonly droppedMessages: number;
  readonly peers: Record<string, PeerLinkStats>;
}

type ConnKind = 'pending' | 'node' | 'client' | 'closing';

interface InboundConn {
  readonly socket: AcceptedSocket;
  readonly remote: string;
  readonly openedMs: number;
  kind: ConnKind;
  peerId: NodeId;
  lastActivityMs: number;
  inFlight: number;
  paused: boolean;
  /** Responses waiting for the end of this event-loop turn, sent as one frame. */
  outbox: ClientResponse[];
  /** Who is on the other end (anonymous until TLS or SASL says otherwise); read by the controller's authorizer. */
  readonly caller: ClientCaller;
}

const IDLE_SWEEP_MS = 1_000;

export class RaftTransport {
  private listener: Listener | undefined;
  private readonly net: Transport;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly links = new Map<NodeId, PeerLink>();
  private readonly conns = new Set<InboundConn>();
  private handlers: TransportHandlers | undefined;
  private cancelSweep: (() => void) | undefined;
  private rejectedFrames = 0;
  private droppedMessages = 0;
  private closed = false;
  /** Our node hello, the first frame on every outgoing link. */
  private readonly hello: Buffer;

  constructor(private readonly opts: TransportOptions) {
    this.net = opts.transport ?? WS_TRANSPORT;
    this.clock = opts.clock ?? SystemClock;
    this.scheduler = opts.scheduler ?? SystemScheduler;
    this.hello = encodeFrame({ k: 'hello', role: 'node', version: WIRE_VERSION, nodeId: opts.nodeId, clusterId: opts.clusterId });
    for (const [peerId, url] of opts.peers) {
      if (peerId !== opts.nodeId) this.links.set(peerId, this.newLink(peerId, url));
    }
  }

  private newLink(peerId: NodeId, url: string): PeerLink {
    return new PeerLink(peerId, url, this.hello, this.opts.limits, {
      transport: this.net, clock: this.clock, scheduler: this.scheduler, rng: this.opts.rng.fork(), logger: this.opts.logger.child({ peer: peerId }),
      ...(this.opts.localAddress !== undefined ? { localAddress: this.opts.localAddress } : {}),
      ...(this.opts.tls ? { tls: this.opts.tls } : {}),
    });
  }

  /**
   * Adds (or re-points) a peer at runtime: from now on its hello is accepted
   * and messages to it are sent. Idempotent for the same url; a new url
   * replaces the link (messages queued for the old address are dropped —
   * Raft resends). Dialing starts at once if start() was called. Our own id
   * and calls after close() are ignored.
   */
  addPeer(peerId: NodeId, url: string): void {
    if (this.closed || peerId === this.opts.nodeId) return;
    const old = this.links.get(peerId);
    if (old?.url === url) return;
    old?.close();
    const link = this.newLink(peerId, url);
    this.links.set(peerId, link);
    if (this.handlers) link.start();
    this.opts.logger.info({ peer: peerId, url, replaced: old !== undefined }, 'peer added');
  }

  /**
   * Forgets a peer: closes the link to it and its inbound node connections,
   * and refuses its hellos from now on. Idempotent.
   */
  removePeer(peerId: NodeId): void {
    const link = this.links.get(peerId);
    if (!link) return;
    link.close();
    this.links.delete(peerId);
    for (const conn of this.conns) {
      if (conn.kind === 'node' && conn.peerId === peerId) {
        conn.kind = 'closing';
        conn.socket.terminate();
        this.conns.delete(conn);
      }
    }
    this.opts.logger.info({ peer: peerId }, 'peer removed');
  }

  /** Current peers and their urls (static voters and peers added at runtime). */
  peers(): Map<NodeId, string> {
    return new Map([...this.links].map(([id, link]) => [id, link.url] as const));
  }

  /** Binds the listener. Rejects with a one-line reason (e.g. address in use) and leaves nothing open. */
  async listen(): Promise<void> {
    const { host, port } = this.opts.listen;
    const ctx = this.opts.tls;
    try {
      this.listener = await this.net.listen({ host, port }, {
        frameBytesMax: this.opts.limits.frameBytesMax,
        ...(ctx ? { tls: { context: ctx, name: 'controller' } } : {}),
      }, (socket) => this.onConnection(socket));
    } catch (err) {
      const code = (err as { code?: string }).code;
      const why = code === 'EADDRINUSE' ? 'address in use' : (err as Error).message;
      throw new SluiceError(Errors.INVALID_CONFIG, `cannot listen on ${this.opts.listen.url}: ${why}`);
    }
    this.armSweep();
    this.opts.logger.info({ url: this.opts.listen.url }, 'controller listener up');
  }

  private armSweep(): void {
    this.cancelSweep = this.scheduler.schedule(IDLE_SWEEP_MS, () => {
      if (this.closed) return;
      this.sweepIdle();
      this.armSweep();
    });
  }

  /** The port actually bound (useful with port 0 in tests). */
  port(): number {
    return this.listener?.port ?? this.opts.listen.port;
  }

  /** Installs the receivers and starts dialing the peers. */
  start(handlers: TransportHandlers): void {
    this.handlers = handlers;
    for (const link of this.links.values()) link.start();
  }

  /** Queues messages for their peers, packed into frames of about frameBatchBytesTarget. */
  send(messages: readonly Message[]): void {
    if (this.closed || messages.length === 0) return;
    const byPeer = new Map<NodeId, Message[]>();
    for (const m of messages) {
      let list = byPeer.get(m.to);
      if (!list) byPeer.set(m.to, (list = []));
      list.push(m);
    }
    for (const [peerId, list] of byPeer) {
      const link = this.links.get(peerId);
      if (!link) {
        this.opts.logger.debug({ to: peerId }, 'no link to that node; message dropped');
        continue;
      }
      this.sendBatches(link, list);
    }
  }

  stats(): TransportStats {
    const peers: Record<string, PeerLinkStats> = {};
    for (const [id, link] of this.links) peers[String(id)] = link.stats();
    return { inboundConnections: this.conns.size, rejectedFrames: this.rejectedFrames, droppedMessages: this.droppedMessages, peers };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelSweep?.();
    for (const link of this.links.values()) link.close();
    for (const conn of this.conns) conn.socket.terminate();
    this.conns.clear();
    await this.listener?.close();
  }

  private sendBatches(link: PeerLink, list: Message[]): void {
    const target = this.opts.limits.frameBatchBytesTarget;
    let batch: Message[] = [];
    let bytes = 0;
    for (const m of list) {
      const size = estimateMessageBytes(m);
      if (batch.length > 0 && bytes + size > target) {
        link.enqueue(encodeFrame({ k: 'raft', msgs: batch }));
        batch = [];
        bytes = 0;
      }
      batch.push(m);
      bytes += size;
    }
    if (batch.length > 0) link.enqueue(encodeFrame({ k: 'raft', msgs: batch }));
  }

  private onConnection(socket: AcceptedSocket): void {
    const remote = `${socket.remoteAddress}:${socket.remotePort ?? '?'}`;
    const verdict = socket.tls;
    if (verdict && !verdict.ok) {
      this.opts.logger.warn({ remote, reason: verdict.reason }, 'refusing a connection');
      socket.terminate();
      return;
    }
    if (this.closed || this.conns.size >= this.opts.limits.inboundConnectionsMax) {
      this.opts.logger.warn({ remote }, 'too many connections; refusing one');
      socket.close(1013, 'too many connections');
      return;
    }
    const now = this.clock.monotonicMs();
    // The certificate's principal (mTLS) is who the controller's authorizer sees; anonymous without one.
    const caller: ClientCaller = { remoteAddress: socket.remoteAddress, security: verdict?.ok ? { ...verdict.session } : anonymousSession() };
    const conn: InboundConn = { socket, remote, openedMs: now, kind: 'pending', peerId: 0, lastActivityMs: now, inFlight: 0, paused: false, outbox: [], caller };
    this.conns.add(conn);
    socket.setHandlers({
      message: (data, isBinary) => this.onMessage(conn, data, isBinary),
      ping: () => { conn.lastActivityMs = this.clock.monotonicMs(); },
      error: (err) => this.opts.logger.warn({ remote, err: err.message }, 'connection error; closing'),
      close: () => this.conns.delete(conn),
    });
  }

  private reject(conn: InboundConn, reason: string): void {
    conn.kind = 'closing';
    this.rejectedFrames++;
    this.opts.logger.warn({ remote: conn.remote, peer: conn.peerId || undefined, reason }, 'bad frame dropped; closing connection');
    conn.socket.close(1008, reason.slice(0, 120));
    // close() waits for the peer's close frame; a hostile peer may never send it.
    this.scheduler.schedule(1_000, () => conn.socket.terminate());
  }

  private onMessage(conn: InboundConn, data: Uint8Array, isBinary: boolean): void {
    if (conn.kind === 'closing') return; // frames that raced our close are ignored
    conn.lastActivityMs = this.clock.monotonicMs();
    if (!isBinary) {
      this.reject(conn, 'frames must be binary');
      return;
    }
    const decoded = decodeFrame(data);
    if (!decoded.ok) {
      this.reject(conn, decoded.reason);
      return;
    }
    this.droppedMessages += decoded.dropped;
    const frame = decoded.frame;
    switch (conn.kind) {
      case 'pending': this.onHello(conn, frame); break;
      case 'node': this.onNodeFrame(conn, frame); break;
      case 'client': this.onClientFrame(conn, frame); break;
    }
  }

  private onHello(conn: InboundConn, frame: Frame): void {
    if (frame.k !== 'hello') return this.reject(conn, `expected hello, got ${frame.k}`);
    if (frame.role === 'client') {
      if (frame.clusterId !== undefined && frame.clusterId !== this.opts.clusterId) {
        return this.reject(conn, `wrong cluster id ${frame.clusterId}`);
      }
      conn.kind = 'client';
      conn.socket.send(encodeFrame({ k: 'helloAck', nodeId: this.opts.nodeId, clusterId: this.opts.clusterId }));
      return;
    }
    if (frame.clusterId !== this.opts.clusterId) return this.reject(conn, `wrong cluster id ${frame.clusterId}`);
    if (!this.links.has(frame.nodeId)) return this.reject(conn, `unknown node id ${frame.nodeId}`);
    conn.kind = 'node';
    conn.peerId = frame.nodeId;
    this.links.get(frame.nodeId)?.wake();
    this.opts.logger.debug({ peer: frame.nodeId, remote: conn.remote }, 'peer connected');
  }

  private onNodeFrame(conn: InboundConn, frame: Frame): void {
    if (frame.k !== 'raft') return this.reject(conn, `unexpected ${frame.k} frame on a node link`);
    for (const msg of frame.msgs) {
      if (msg.from !== conn.peerId || msg.to !== this.opts.nodeId) {
        this.droppedMessages++;
        this.opts.logger.debug({ peer: conn.peerId, from: msg.from, to: msg.to }, 'misaddressed raft message dropped');
        continue;
      }
      this.handlers?.onRaftMessage(msg);
    }
  }

  private onClientFrame(conn: InboundConn, frame: Frame): void {
    if (frame.k !== 'req') return this.reject(conn, `unexpected ${frame.k} frame on a client connection`);
    for (const req of frame.reqs) this.onClientRequest(conn, req);
  }

  private onClientRequest(conn: InboundConn, req: ClientRequest): void {
    const handlers = this.handlers;
    if (!handlers) return this.respond(conn, { id: req.id, error: wireError(new SluiceError(Errors.NOT_CONTROLLER, 'node is starting')) });
    if (conn.inFlight >= this.opts.limits.clientRequestsInFlightMax) {
      const err = new SluiceError(Errors.REQUEST_TIMED_OUT, 'too many requests in flight on this connection');
      return this.respond(conn, { id: req.id, error: wireError(err) });
    }
    conn.inFlight++;
    handlers.onClientRequest(req, conn.caller).then((result) => {
      conn.inFlight--;
      this.respond(conn, { id: req.id, result });
    }, (err: unknown) => {
      conn.inFlight--;
      this.respond(conn, { id: req.id, error: wireError(err) });
    });
  }

  /**
   * Queues a response; the first one schedules the flush of all of them as a
   * microtask, which runs after the other responses of this apply batch
   * (their promise chains are as deep and were queued earlier) and before the
   * next Ready's fsync.
   */
  private respond(conn: InboundConn, resp: ClientResponse): void {
    conn.outbox.push(resp);
    if (conn.outbox.length === 1) queueMicrotask(() => this.flushResponses(conn));
  }

  private flushResponses(conn: InboundConn): void {
    const resps = conn.outbox;
    conn.outbox = [];
    const socket = conn.socket;
    if (!socket.isOpen || resps.length === 0) return;
    socket.send(encodeFrame({ k: 'resp', resps }), () => {
      if (conn.paused && socket.bufferedAmount < this.opts.limits.clientBufferedBytesMax / 2) {
        conn.paused = false;
        socket.resume();
      }
    });
    if (!conn.paused && socket.bufferedAmount > this.opts.limits.clientBufferedBytesMax) {
      conn.paused = true;
      socket.pause();
    }
  }

  private sweepIdle(): void {
    const now = this.clock.monotonicMs();
    for (const conn of this.conns) {
      const expired = conn.kind === 'pending'
        ? now - conn.openedMs > this.opts.limits.helloTimeoutMs
        : now - conn.lastActivityMs > this.opts.limits.idleTimeoutMs && conn.inFlight === 0;
      if (expired) {
        this.opts.logger.info({ remote: conn.remote, kind: conn.kind }, 'closing a silent connection');
        conn.socket.terminate();
        this.conns.delete(conn);
      }
    }
  }
}

/** The wire form of an error: SluiceErrors keep their code and leader hints; anything else is UNKNOWN_SERVER_ERROR. */
export function wireError(err: unknown): WireError {
  if (isSluiceError(err)) {
    const leader = err.details.leader;
    const leaderEndpoint = err.details.leaderEndpoint;
    return {
      code: err.code,
      name: err.errorName,
      message: err.message,
      ...(typeof leader === 'number' ? { leader } : {}),
      ...(typeof leaderEndpoint === 'string' ? { leaderEndpoint } : {}),
    };
  }
  const info = Errors.UNKNOWN_SERVER_ERROR;
  return { code: info.code, name: info.name, message: `${info.name}: ${(err as Error)?.message ?? String(err)}` };
}
