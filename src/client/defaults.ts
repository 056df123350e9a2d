// Client defaults, in one place (limits named with units last). Every value
// the client puts on the wire when the caller leaves it out comes from here,
// so no default hides in a method body. Issue 6's Client options grow this.

export const CLIENT_DEFAULTS = {
  /**
   * How long a response may take beyond any wait the request itself asks for
   * (a fetch's maxWaitMs, a produce's timeoutMs), as Kafka's request.timeout.ms.
   */
  requestTimeoutMs: 30_000,
  /** A fetch returns as soon as this many bytes are available (or maxWaitMs passes). */
  fetchMinBytes: 1,
  /** Bytes per fetch response across all partitions (the first batch is always returned whole). */
  fetchMaxBytes: 50 * 1024 * 1024,
  /** Bytes per partition in one fetch response. */
  partitionFetchBytesMax: 1024 * 1024,
} as const;

/** currentLeaderEpoch value that tells the broker to skip the epoch check. */
export const NO_LEADER_EPOCH = -1;
/** brokerEpoch of a fetch from a consumer (only followers send theirs). */
export const NO_BROKER_EPOCH = -1;
