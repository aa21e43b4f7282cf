/**
 * How many API keys that are not in the process's cache may be looked up in the database at
 * once (SVC_KEY_LOOKUP_CONCURRENCY). Anyone can send a well-formed key nobody issued, and each
 * costs a database read before it can be refused: past the cap such requests are answered 503
 * at once instead of queueing reads (and sockets) without bound. Keys already verified and
 * cached never take a slot, so a flood of made-up keys does not refuse the clients that hold
 * real ones.
 */
import { ApiError } from '../core/errors';

/** Seconds a refused caller is told to wait: a lookup takes milliseconds. */
export const LOOKUP_RETRY_AFTER_S = 1;

export class LookupGate {
  private running = 0;
  /** Lookups refused because the cap was reached (metrics, tests). */
  refused = 0;

  /** `limit` 0: no cap. */
  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.running;
  }

  async run<T>(lookup: () => Promise<T>): Promise<T> {
    if (this.limit > 0 && this.running >= this.limit) {
      this.refused += 1;
      throw new ApiError(
        'authentication_busy',
        `too many keys are being verified at once (SVC_KEY_LOOKUP_CONCURRENCY=${this.limit}); retry after ${LOOKUP_RETRY_AFTER_S} s`,
      );
    }
    this.running += 1;
    try {
      return await lookup();
    } finally {
      this.running -= 1;
    }
  }
}
