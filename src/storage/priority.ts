/**
 * Which statements go first on the embedded database. PGlite is one connection in the service's
 * own thread, so every statement of the process waits its turn in one queue: a worker running
 * the runs a burst of webhook deliveries creates (claims, heartbeats, steps, terminal commits)
 * takes turns with the acknowledgements of the rest of that burst, and 500 deliveries at once
 * waited 20 s and more for their answers (GitHub gives up at 10 s).
 *
 * Work someone is waiting on runs as `foreground` (a webhook acknowledgement); the worker's runs
 * run `inBackground`. A background statement or transaction first lets the thread read waiting
 * requests, then, while foreground work is in flight or ended less than QUIET_MS ago, waits
 * before it starts (never inside a transaction, which holds the connection), at most
 * MAX_BACKGROUND_WAIT_MS each, so background work always makes progress. With PostgreSQL every
 * caller has a connection of the pool and nothing waits (`gated` is false).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The longest one background statement waits for foreground work, however much there is. */
export const MAX_BACKGROUND_WAIT_MS = 2_000;

/**
 * How long the foreground must have been idle before background statements go on. Inside a
 * burst the next acknowledgement starts a few milliseconds after the last one ended: a gap that
 * short is not the end of the burst, and a run slipped into each one halved the burst's pace.
 */
const QUIET_MS = 50;

export class StatementPriority {
  private inFlight = 0;
  private lastForegroundEnd = Number.NEGATIVE_INFINITY;
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
      this.lastForegroundEnd = performance.now();
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
    const deadline = performance.now() + this.maxWaitMs;
    for (let now = performance.now(); now < deadline; now = performance.now()) {
      if (this.inFlight > 0) await this.woken(deadline - now);
      else if (now - this.lastForegroundEnd < QUIET_MS)
        await new Promise((resolve) => setTimeout(resolve, QUIET_MS - (now - this.lastForegroundEnd)));
      else return;
    }
  }

  private wakeIfIdle(): void {
    if (this.inFlight === 0) for (const wake of [...this.waiters]) wake();
  }

  /** Resolves when the foreground falls idle, or after `ms`. */
  private woken(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiters.add(wake);
    });
  }
}
