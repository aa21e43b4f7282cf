/**
 * A byte budget for request bodies being read before anyone is authenticated (the GitHub
 * webhook route): a request takes its share before its body is read and gives it back when its
 * answer is done, so what unauthenticated senders make the process buffer at once is bounded
 * by the budget (SVC_WEBHOOK_INFLIGHT_BYTES), however many of them there are.
 *
 * A share must also be earned by pace (body-pace.ts), so that trickling senders cannot hold the
 * budget against genuine deliveries: a body behind the minimum rate past its grace is cut by
 * the sweep, and when a newcomer does not fit, bodies already behind the pace give their shares
 * up to it, slowest first. One client address may hold at most `sourceShare` of the budget
 * (never less than one largest body), so a single sender cannot hold it all even at pace.
 */
import { type BodyProgress, lagging, overdue, type Pace, rateOf } from './body-pace';

/** A body holding a share of the budget. */
export interface BodyInFlight extends BodyProgress {
  readonly bytes: number;
  /** The client address it comes from. */
  readonly source: string;
  /** Ends its read: called once, when the budget takes its share back (too slow, or preempted). */
  readonly cut: (why: 'too_slow' | 'preempted') => void;
}

export interface BudgetRules {
  pace: Pace;
  /** The fraction of the budget one source may hold (1: no per-source limit). */
  sourceShare: number;
  /** The largest body: a source may always hold one, whatever the share. */
  bodyLimit: number;
}

const NO_RULES: BudgetRules = { pace: { graceMs: 0, minBytesPerS: 0 }, sourceShare: 1, bodyLimit: 0 };

export class InFlightBudget {
  private used = 0;
  private readonly bodies = new Set<BodyInFlight>();
  private readonly bySource = new Map<string, number>();
  /** The most bytes ever held at once. */
  peak = 0;
  /** Requests that got a share; requests refused because the budget was spent. */
  admitted = 0;
  refused = 0;
  /** Bodies cut for their pace: by the sweep (too slow) or for a newcomer (preempted). */
  cutTooSlow = 0;
  preempted = 0;

  /** `limit` 0: no budget (every take succeeds; the pace still applies). */
  constructor(
    readonly limit: number,
    private readonly rules: BudgetRules = NO_RULES,
  ) {}

  get inFlight(): number {
    return this.used;
  }

  /** What one source may hold at once. */
  get sourceLimit(): number {
    if (this.limit <= 0 || this.rules.sourceShare >= 1) return Number.POSITIVE_INFINITY;
    return Math.max(this.rules.bodyLimit, Math.floor(this.limit * this.rules.sourceShare));
  }

  /**
   * Takes the body's share if it fits, after cutting lagging bodies that stand in its way
   * (of its own source when that source's share is what is full); false, taking and cutting
   * nothing, when even that would not make room.
   */
  take(body: BodyInFlight, now = performance.now()): boolean {
    const overall = this.limit > 0 ? this.used + body.bytes - this.limit : 0;
    const ofSource = (this.bySource.get(body.source) ?? 0) + body.bytes - this.sourceLimit;
    if (overall > 0 || ofSource > 0) {
      const victims = this.laggardsToCut(body.source, overall, ofSource, now);
      if (!victims) return false;
      for (const victim of victims) this.cut(victim, 'preempted');
    }
    this.bodies.add(body);
    this.used += body.bytes;
    this.bySource.set(body.source, (this.bySource.get(body.source) ?? 0) + body.bytes);
    if (this.used > this.peak) this.peak = this.used;
    return true;
  }

  /** Gives the body's share back (its answer is done, or it was cut); once only. */
  give(body: BodyInFlight): void {
    if (!this.bodies.delete(body)) return;
    this.used = Math.max(0, this.used - body.bytes);
    const left = (this.bySource.get(body.source) ?? 0) - body.bytes;
    if (left > 0) this.bySource.set(body.source, left);
    else this.bySource.delete(body.source);
  }

  /** Cuts every body past its grace and behind the pace; returns how many. */
  sweep(now = performance.now()): number {
    let n = 0;
    for (const body of this.bodies) {
      if (!overdue(body, now, this.rules.pace)) continue;
      this.cut(body, 'too_slow');
      n += 1;
    }
    return n;
  }

  private cut(body: BodyInFlight, why: 'too_slow' | 'preempted'): void {
    this.give(body);
    if (why === 'too_slow') this.cutTooSlow += 1;
    else this.preempted += 1;
    body.cut(why);
  }

  /**
   * The slowest lagging bodies whose shares free `overall` bytes of the budget and `ofSource`
   * bytes of `source`'s share (each: nothing to free when ≤ 0); null when the laggards are not
   * enough.
   */
  private laggardsToCut(
    source: string,
    overall: number,
    ofSource: number,
    now: number,
  ): BodyInFlight[] | null {
    const laggards = [...this.bodies]
      .filter((b) => lagging(b, now, this.rules.pace))
      // The newcomer's own source first (it must make room there anyway), then the slowest.
      .sort(
        (a, b) =>
          Number(b.source === source) - Number(a.source === source) || rateOf(a, now) - rateOf(b, now),
      );
    const victims: BodyInFlight[] = [];
    let freed = 0;
    let freedOfSource = 0;
    for (const body of laggards) {
      if (freed >= overall && freedOfSource >= ofSource) break;
      // Past the source's own laggards, only the budget as a whole still needs room.
      if (body.source !== source && freed >= overall) break;
      victims.push(body);
      freed += body.bytes;
      if (body.source === source) freedOfSource += body.bytes;
    }
    return freed >= overall && freedOfSource >= ofSource ? victims : null;
  }
}
