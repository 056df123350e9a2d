// Connection limits with their defaults, in one place (named with units last).

export interface ConnectionLimits {
  /** Largest WebSocket message accepted (ws maxPayload); larger ones close the connection (1009). */
  readonly frameBytesMax: number;
  /** Requests being processed per connection; reading pauses at this count. */
  readonly requestsInFlightMax: number;
  /** Response bytes handed to the socket but not yet written; reading pauses above this. */
  readonly sendBufferBytesMax: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  frameBytesMax: 64 * 1024 * 1024,
  requestsInFlightMax: 256,
  sendBufferBytesMax: 32 * 1024 * 1024,
};
