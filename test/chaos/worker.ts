// The shape every chaos workload worker shares: one async loop, started once
// and stopped once. stop() marks the worker stopped, cuts short a pause in
// progress and waits for the loop to end; each loop bounds its own waits
// (delivery timeouts, close timeouts), so stop() is bounded too.
export abstract class LoopWorker {
  protected stopped = false;
  private wake: (() => void) | null = null;
  private done: Promise<void> = Promise.resolve();

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    await this.done;
  }

  protected abstract loop(): Promise<void>;

  /** Waits `ms`, or less when stop() or wakeUp() comes first. */
  protected pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }

  /** Ends the pause in progress, if any. */
  protected wakeUp(): void {
    this.wake?.();
  }
}
