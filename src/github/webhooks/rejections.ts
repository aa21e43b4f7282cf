/**
 * Counting refused webhook requests. Anyone can send them, so a flood must cost the database
 * next to nothing: refusals are tallied in memory and written at most once a second as one
 * upsert per reason into an hourly row of `webhook_rejections`. Every refusal is also logged at
 * the moment it happens; a crash loses at most the last second of counts, never a log line.
 */
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Database } from '../../storage/database';

/** Why a request was refused: the `reason` of its `webhook_rejections` row and metric label. */
export type RejectionReason =
  | 'not_configured'
  | 'signature_missing'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'delivery_id_missing'
  | 'event_missing'
  | 'body_unreadable'
  /** JSON nested deeper than JSON_NESTING_LIMIT, refused before parsing. */
  | 'body_too_deep'
  /** The in-flight body budget (SVC_WEBHOOK_INFLIGHT_BYTES) had no room for the body. */
  | 'over_budget'
  /** The body arrived slower than SVC_WEBHOOK_MIN_BYTES_PER_S: cut, its share given back. */
  | 'too_slow';

export interface Rejection {
  reason: RejectionReason;
  deliveryId?: string | undefined;
  event?: string | undefined;
}

interface Pending {
  n: number;
  lastDeliveryId: string | null;
  lastEvent: string | null;
}

/** Headers of a refused request are untrusted: keep them short. */
const MAX_HEADER_CHARS = 200;

export class RejectionTally {
  private pending = new Map<RejectionReason, Pending>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly flushMs = 1_000,
  ) {}

  record(rejection: Rejection): void {
    const entry = this.pending.get(rejection.reason) ?? { n: 0, lastDeliveryId: null, lastEvent: null };
    entry.n += 1;
    entry.lastDeliveryId = rejection.deliveryId?.slice(0, MAX_HEADER_CHARS) ?? entry.lastDeliveryId;
    entry.lastEvent = rejection.event?.slice(0, MAX_HEADER_CHARS) ?? entry.lastEvent;
    this.pending.set(rejection.reason, entry);
    this.schedule();
  }

  /**
   * Writes the tallied counts. A write that fails keeps its counts for the next attempt, so a
   * database outage delays the counts instead of losing them.
   */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    for (const [reason, entry] of batch) {
      try {
        await this.db.rows(sql`
          INSERT INTO webhook_rejections (reason, hour, count, last_delivery_id, last_event)
          VALUES (${reason}, date_trunc('hour', now()), ${entry.n}, ${entry.lastDeliveryId}, ${entry.lastEvent})
          ON CONFLICT (reason, hour) DO UPDATE SET
            count = webhook_rejections.count + EXCLUDED.count,
            last_delivery_id = coalesce(EXCLUDED.last_delivery_id, webhook_rejections.last_delivery_id),
            last_event = coalesce(EXCLUDED.last_event, webhook_rejections.last_event),
            last_at = now()`);
      } catch (error) {
        this.logger.warn(
          { err: error, reason, n: entry.n },
          'could not write webhook rejection counts; retrying',
        );
        this.merge(reason, entry);
      }
    }
    if (this.pending.size > 0) this.schedule();
  }

  /** Rejections so far by reason, across every process: this one's tally is written first. */
  async totals(): Promise<{ reason: string; n: number }[]> {
    await this.flush();
    const rows = await this.db.rows<{ reason: string; n: number }>(
      sql`SELECT reason, sum(count)::int AS n FROM webhook_rejections GROUP BY reason`,
    );
    return rows.map((r) => ({ reason: r.reason, n: Number(r.n) }));
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private merge(reason: RejectionReason, entry: Pending): void {
    const current = this.pending.get(reason);
    if (!current) {
      this.pending.set(reason, entry);
      return;
    }
    current.n += entry.n;
    current.lastDeliveryId ??= entry.lastDeliveryId;
    current.lastEvent ??= entry.lastEvent;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.flushMs);
    // A pending tally never keeps the process alive; close() writes it on shutdown.
    this.timer.unref();
  }
}
