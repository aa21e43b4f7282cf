/**
 * A pass that repeats in the serving process until stopped: the local watcher's tick and the
 * deadline timer's scan. Passes never overlap; `stop()` waits for the one under way; a pass that
 * fails is reported and the loop goes on. Each pass says how long to sleep before the next.
 */
export interface RepeatingPassOptions {
  /** One pass; resolves to the milliseconds to sleep before the next. */
  pass: () => Promise<number>;
  /** A pass that threw; returns the milliseconds to sleep before trying again. */
  onError: (error: unknown) => number;
  /** False: the loop's timer does not keep the process alive (the server's socket does). Default true. */
  keepsProcessAlive?: boolean;
}

export class RepeatingPass {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(private readonly options: RepeatingPassOptions) {}

  /** Runs the first pass at once, then each after the sleep the one before asked for. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the loop; resolves once a pass under way has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running.catch(() => {});
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.options
        .pass()
        .catch((error: unknown) => this.options.onError(error))
        .then((next) => this.schedule(next));
    }, delayMs);
    if (this.options.keepsProcessAlive === false) this.timer.unref();
  }
}
