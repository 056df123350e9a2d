// Read-side back-pressure of a server connection, one rule for both client
// listeners (the WebSocket one, server-connection.ts, and the Kafka one,
// kafka-server.ts): stop reading while the connection is busy (requests in
// flight at their limit, a backlog, a quota mute) or its unsent response
// bytes exceed the buffer limit; read again once it is not busy and the
// unsent bytes are back under half the limit. The gap between the two
// thresholds keeps a connection near its limit from flapping.

export class FlowControl {
  private paused = false;

  constructor(private readonly pause: () => void, private readonly resume: () => void) {}

  get isPaused(): boolean {
    return this.paused;
  }

  /** Pauses or resumes reading for the connection's current state. */
  update(busy: boolean, unsentBytes: number, sendBufferBytesMax: number): void {
    const over = busy || unsentBytes > sendBufferBytesMax;
    const under = !busy && unsentBytes <= sendBufferBytesMax / 2;
    if (over && !this.paused) {
      this.paused = true;
      this.pause();
    } else if (under && this.paused) {
      this.paused = false;
      this.resume();
    }
  }
}
