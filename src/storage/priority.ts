/**
 * Which statements go first on the embedded database. PGlite is one connection in the service's
 * own thread, so every statement of the process waits its turn in one queue: a worker running
 * the runs a burst of webhook deliveries creates (claims, heartbeats, steps, terminal commits)
 * takes turns with the acknowledgements of the rest of that burst, and 500 deliveries at once
 * waited 20 s and more for their answers (GitHub gives up at 10 s).
 *
 * Work someone is waiting on runs as `foreground`; the worker's runs and claims run `inBackground`.
 * While foreground work is in flight, a background statement or transaction waits before it
 * starts (never inside a transaction, which holds the connection) until the foreground is done, at
 * most MAX_BACKGROUND_WAIT_MS each, so background work always makes progress. With PostgreSQL
 * every caller has a connection of the pool and nothing waits (`gated` is false).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The longest one background statement waits for foreground work, however much there is. */
export const MAX_BACKGROUND_WAIT_MS = 2_000;

export class StatementPriority {
  private inFlight = 0;
  private waiters = new Set<() => void>();
  private readonly background = new AsyncLocalStorage<true>();

  /**
   * `gated`: background statements wait for foreground work (the embedded database);
   * `maxWaitMs`: the longest one of them waits.
   */
  constructor(
    readonly gated: boolean,
    private readonly maxWaitMs = MAX_BACKGROUND_WAIT_MS,
  ) {}

  /** Foreground calls in flight. */
  get busy(): number {
    return this.inFlight;
  }

  /** Runs `work` ahead of background statements while it is in flight. */
  async foreground<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
      // Woken after the thread has read what is waiting in its sockets: inside a burst, the next
      // acknowledgement is usually there, and the background keeps waiting for it.
      if (this.inFlight === 0) setImmediate(() => this.wakeIfIdle());
    }
  }

  /** Runs `work` (and everything it starts) as background work. */
  inBackground<T>(work: () => Promise<T>): Promise<T> {
    return this.background.run(true, work);
  }

  /**
   * Called before each statement or transaction starts: a background one waits its turn (the
   * others get undefined, and are issued in the same tick as without this).
   */
  turn(): Promise<void> | undefined {
    if (!this.gated || !this.background.getStore()) return undefined;
    return this.yieldToForeground();
  }

  private async yieldToForeground(): Promise<void> {
    // Requests still unread in their sockets are no foreground work yet: the thread reads them
    // (and starts their acknowledgements) before the statement. A run's statements follow one
    // another in microtasks, so without this a burst is read one request between two runs.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.inFlight > 0) await this.quiet();
  }

  private wakeIfIdle(): void {
    if (this.inFlight === 0) for (const wake of [...this.waiters]) wake();
  }

  private quiet(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.maxWaitMs);
      this.waiters.add(wake);
    });
  }
}
