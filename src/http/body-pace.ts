/**
 * The pace an unauthenticated body must keep while it holds a share of the in-flight budget
 * (the webhook route), so that a trickle of a byte a second cannot hold a share for the whole
 * request timeout. The rule is Apache mod_reqtimeout's `MinRate`: after a grace, the body must
 * have brought `minBytesPerS` for every second since the grace ended (SVC_WEBHOOK_BODY_GRACE_MS,
 * SVC_WEBHOOK_MIN_BYTES_PER_S). A body read in full is no longer judged: whatever follows
 * (signature, database) is the server's time, not the sender's.
 */
import { type Readable, Transform } from 'node:stream';

export interface Pace {
  graceMs: number;
  /** 0: no pace is required. */
  minBytesPerS: number;
}

/** What the pace rules read of a body being received. */
export interface BodyProgress {
  /** performance.now() when its headers were in and its share taken. */
  readonly startedAt: number;
  /** Body bytes arrived so far. */
  received: number;
  /** Read in full: no longer judged. */
  complete: boolean;
}

/**
 * How young a body is never judged a laggard: its first bytes may still be on their way (one
 * round trip) or queued behind other work of the process.
 */
export const LAGGARD_MIN_AGE_MS = 250;

/** Past the grace and behind the pace: the body is cut. */
export function overdue(body: BodyProgress, now: number, pace: Pace): boolean {
  if (pace.minBytesPerS <= 0 || body.complete) return false;
  const sinceGrace = now - body.startedAt - pace.graceMs;
  return sinceGrace > 0 && body.received < (pace.minBytesPerS * sinceGrace) / 1000;
}

/**
 * Behind the pace counted from its start, grace or not: if it goes on like this it will be cut.
 * When the budget is full, such a body gives its share up to a newcomer (see InFlightBudget).
 */
export function lagging(body: BodyProgress, now: number, pace: Pace): boolean {
  if (pace.minBytesPerS <= 0 || body.complete) return false;
  const age = now - body.startedAt;
  return age >= LAGGARD_MIN_AGE_MS && body.received < (pace.minBytesPerS * age) / 1000;
}

/** The average rate so far (bytes a second), to cut the slowest laggard first. */
export const rateOf = (body: BodyProgress, now: number) =>
  body.received / Math.max(1e-3, (now - body.startedAt) / 1000);

/**
 * `payload` passed through unchanged, counting into `body` what arrives; `cut(error)` ends the
 * read with that error (the route answers it, and the lingering close drops the rest).
 */
export function measured(
  payload: Readable,
  body: BodyProgress,
): { stream: Readable; cut: (error: Error) => void } {
  // Counted as the reader pulls (a listener of our own would start the flow before Fastify's).
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      body.received += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      body.complete = true;
      done();
    },
  });
  payload.pipe(stream);
  // A payload error (the client reset the connection) reaches the body reader as before.
  payload.once('error', (error) => stream.destroy(error));
  return {
    stream,
    cut: (error) => {
      payload.unpipe(stream);
      stream.destroy(error);
    },
  };
}
