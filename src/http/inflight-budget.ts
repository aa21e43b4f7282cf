/**
 * A byte budget for request bodies being read before anyone is authenticated (the GitHub
 * webhook route): a request takes its share before its body is read and gives it back when its
 * answer is done, so what unauthenticated senders make the process buffer at once is bounded
 * by the budget (SVC_WEBHOOK_INFLIGHT_BYTES), however many of them there are.
 */
export class InFlightBudget {
  private used = 0;
  /** The most bytes ever held at once. */
  peak = 0;
  /** Requests that got a share; requests refused because the budget was spent. */
  admitted = 0;
  refused = 0;

  /** `limit` 0: no budget (every take succeeds). */
  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.used;
  }

  /** Takes `bytes` if they fit in what is left; false (taking nothing) when they do not. */
  take(bytes: number): boolean {
    if (this.limit > 0 && this.used + bytes > this.limit) return false;
    this.used += bytes;
    if (this.used > this.peak) this.peak = this.used;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
