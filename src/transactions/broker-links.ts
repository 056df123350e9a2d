// Links from this broker to other brokers' BROKER listeners for the
// transaction coordinator's inter-broker calls: WriteTxnMarkers to partition
// leaders, and a partition leader's AddPartitionsToTxn verifyOnly check
// (KIP-890) to a transaction's coordinator. Dialled as the replica fetchers
// dial leaders: the same transport (link factory), TLS and inter-broker SASL
// identity, the injected scheduler timing connects and requests.
//
// One link per peer broker (bounded by the cluster's size), opened on first
// use and dropped when it fails or the broker's URL changes; the next request
// dials again. A request to a broker with no BROKER endpoint or a link that
// cannot be opened rejects with NETWORK_EXCEPTION: callers retry.

import { ClientLink, type WebSocketFactory } from '../net/client-link.js';
import { BrokerConnection } from '../client/broker-connection.js';
import type { SaslOptions } from '../client/sasl.js';
import type { MetadataImage } from '../metadata/image.js';
import { BROKER_ENDPOINT, brokerUrl, replicaLinkFactory } from '../replication/replica-fetcher.js';
import type { Scheduler } from '../util/clock.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

export interface BrokerLinksOptions {
  readonly brokerId: number;
  readonly image: () => MetadataImage;
  /** How links are dialled (the node's transport, outbound address, TLS); absent: plain `ws`. */
  readonly factory?: WebSocketFactory;
  readonly sasl?: SaslOptions;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly connectTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

/** What the coordinator's channels need from the links (a test can serve it in-process). */
export interface InterBrokerCalls {
  request<T>(brokerId: number, apiKey: number, body: object): Promise<T>;
}

interface Peer { readonly url: string; readonly link: Promise<ClientLink> }

export class BrokerLinks implements InterBrokerCalls {
  private readonly peers = new Map<number, Peer>();
  private closed = false;
  private readonly requestTimeoutMs: number;

  constructor(private readonly opts: BrokerLinksOptions) {
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
  }

  async request<T>(brokerId: number, apiKey: number, body: object): Promise<T> {
    const link = await this.linkTo(brokerId);
    try {
      return await link.request<T>(apiKey, 0, body, this.requestTimeoutMs);
    } catch (err) {
      if (!link.isOpen) this.drop(brokerId, link);
      throw err;
    }
  }

  close(): void {
    this.closed = true;
    for (const peer of this.peers.values()) peer.link.then((l) => l.close(), () => undefined);
    this.peers.clear();
  }

  private linkTo(brokerId: number): Promise<ClientLink> {
    if (this.closed) return Promise.reject(new SluiceError(Errors.NETWORK_EXCEPTION, 'the broker is shutting down'));
    const url = brokerUrl(this.opts.image(), brokerId);
    if (url === null) return Promise.reject(new SluiceError(Errors.NETWORK_EXCEPTION, `broker ${brokerId} has no ${BROKER_ENDPOINT} endpoint in the metadata`));
    const known = this.peers.get(brokerId);
    if (known && known.url === url) return known.link;
    if (known) known.link.then((l) => l.close(), () => undefined);
    const link = this.dial(url);
    const peer: Peer = { url, link };
    this.peers.set(brokerId, peer);
    link.then((l) => l.onClose(() => this.drop(brokerId, l)), () => {
      if (this.peers.get(brokerId) === peer) this.peers.delete(brokerId);
    });
    return link;
  }

  private async dial(url: string): Promise<ClientLink> {
    const link = await ClientLink.connect(url, {
      factory: this.opts.factory ?? replicaLinkFactory(), clientId: `txn-coordinator-${this.opts.brokerId}`,
      connectTimeoutMs: this.opts.connectTimeoutMs ?? 5_000, scheduler: this.opts.scheduler,
    });
    if (this.opts.sasl) {
      try {
        await new BrokerConnection(link, { scheduler: this.opts.scheduler }).authenticate(this.opts.sasl);
      } catch (err) {
        link.close();
        throw err;
      }
    }
    if (this.closed) {
      link.close();
      throw new SluiceError(Errors.NETWORK_EXCEPTION, 'the broker is shutting down');
    }
    return link;
  }

  private drop(brokerId: number, link: ClientLink): void {
    const peer = this.peers.get(brokerId);
    if (!peer) return;
    void peer.link.then((l) => {
      if (l === link && this.peers.get(brokerId) === peer) {
        this.peers.delete(brokerId);
        l.close();
      }
    }, () => undefined);
  }
}
