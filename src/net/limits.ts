// The limits every listener of Sluice's own protocol has, with the broker
// listener's defaults, in one place (named with units last). The controller
// listener's limits (raft-node/quorum-config.ts `TransportLimits`) extend
// these — the same fields, its own values, plus the Raft-only knobs — and both
// listeners pause reading by one rule (flow.ts).

export interface ConnectionLimits {
  /** Largest message accepted (ws maxPayload); larger ones close the connection (1009). */
  readonly frameBytesMax: number;
  /**
   * Requests being processed per connection. The broker listener stops
   * reading at this count; the controller listener, whose one frame may carry
   * many requests, answers the excess with a retriable error.
   */
  readonly requestsInFlightMax: number;
  /** Response bytes handed to the socket but not yet written; reading pauses above this. */
  readonly sendBufferBytesMax: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  frameBytesMax: 64 * 1024 * 1024,
  requestsInFlightMax: 256,
  sendBufferBytesMax: 32 * 1024 * 1024,
};
