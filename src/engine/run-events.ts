/**
 * A task's run events, read back from what the engine stores: each run's status changes
 * (queued, claimed, ended), its transcript messages and its progress. They are what
 * `GET /tasks/{id}/events` streams. An event's position is computed from stored values only
 * (the run's place among the task's runs, the message's sequence number, the run row's
 * `updated_at` and the messages written before it), never from a counter in memory or from what
 * one reader happened to see, so any process can resume a stream exactly where a client's
 * `Last-Event-ID` left it: nothing the client saw is sent again and nothing it missed is skipped.
 */
import { and, asc, eq, gt, inArray, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../storage/database';
import { runMessages, runs } from '../storage/schema';
import type { MessageRow } from './engine';
import type { RunRow } from './types';

/**
 * Where an event sits in a task's history, compared field by field: the run (1 = the task's
 * first), the stage within it, then the message and the progress version.
 */
export interface EventPosition {
  run: number;
  stage: Stage;
  /**
   * A message: its sequence number. Progress: that of the run's last message written before it
   * (0 before any), so progress sorts between the messages it was written between.
   */
  seq: number;
  /** Progress: the run row's `updated_at` in microseconds; 0 for every other event. */
  version: number;
}

/** Stages of one run, in the order they happen: queued, claimed by a worker, working, ended. */
export const STAGE = { before: -1, queued: 0, claimed: 1, working: 2, ended: 3 } as const;
type Stage = (typeof STAGE)[keyof typeof STAGE];

export type RunEvent =
  | { position: EventPosition; kind: 'status'; run: StoredRun; status: RunRow['status']; at: Date | null }
  | { position: EventPosition; kind: 'message'; run: StoredRun; message: MessageRow }
  | { position: EventPosition; kind: 'progress'; run: StoredRun };

/** A run as the events read it: the row, its place in the task and the position of its progress. */
export interface StoredRun {
  row: RunRow;
  ordinal: number;
  /** The row's `updated_at` in microseconds (progress, claim, start and end each move it). */
  version: number;
  /** The sequence number of the run's last message written at or before `updated_at`; 0 if none. */
  seqBefore: number;
}

const FIELDS = ['run', 'stage', 'seq', 'version'] as const;

/** The event id a client sees and sends back as `Last-Event-ID`: the position's four numbers. */
export const encodePosition = (p: EventPosition) => FIELDS.map((f) => p[f]).join('.');

/** What an event id looks like: four numbers, the second a stage. */
export const EVENT_ID_PATTERN = /^(\d{1,9})\.([0-3])\.(\d{1,18})\.(\d{1,18})$/;

/** The position an event id names; null when the text is not an id svc issued. */
export function decodePosition(id: string): EventPosition | null {
  const match = EVENT_ID_PATTERN.exec(id.trim());
  if (!match) return null;
  const [run, stage, seq, version] = match.slice(1).map(Number) as [number, number, number, number];
  if (run < 1 || !Number.isSafeInteger(seq) || !Number.isSafeInteger(version)) return null;
  return { run, stage: stage as Stage, seq, version };
}

export function comparePositions(a: EventPosition, b: EventPosition): number {
  for (const f of FIELDS) if (a[f] !== b[f]) return a[f] < b[f] ? -1 : 1;
  return 0;
}

/** Before everything of the task's `ordinal`-th run: where a stream without `Last-Event-ID` starts. */
export const beforeRun = (ordinal: number): EventPosition => ({
  run: ordinal,
  stage: STAGE.before,
  seq: 0,
  version: 0,
});

const ENDED: ReadonlySet<string> = new Set(['completed', 'failed', 'canceled']);
export const hasEnded = (run: RunRow) => ENDED.has(run.status);

/** The task's runs in the order they were created, numbered from 1, with where their progress sits. */
async function storedRuns(db: Database, taskId: string): Promise<StoredRun[]> {
  // Microseconds, as the database keeps them: two progress updates within a millisecond stay apart.
  const version = sql<string>`(floor(extract(epoch from ${runs.updatedAt}) * 1000000))::bigint::text`;
  // Both times come from the one database clock, so any reader in any process gets the same answer.
  const seqBefore = sql<string>`(SELECT coalesce(max(m.seq), 0)::text FROM run_messages m
    WHERE m.task_id = ${runs.taskId} AND m.run_id = ${runs.id} AND m.created_at <= ${runs.updatedAt})`;
  const rows = await db.orm
    .select({ row: runs, version, seqBefore })
    .from(runs)
    .where(eq(runs.taskId, taskId))
    .orderBy(asc(runs.createdAt), asc(runs.id));
  return rows.map((r, i) => ({
    row: r.row,
    ordinal: i + 1,
    version: Number(r.version),
    seqBefore: Number(r.seqBefore),
  }));
}

/** Where a new stream of the task starts: before its latest run (the first, when it has none yet). */
export async function latestRunStart(db: Database, taskId: string): Promise<EventPosition> {
  const [row] = await db.rows<{ n: number | string }>(
    sql`SELECT count(*)::int AS n FROM runs WHERE task_id = ${taskId}`,
  );
  return beforeRun(Math.max(1, Number(row?.n ?? 0)));
}

export interface RunEventsPage {
  events: RunEvent[];
  /** The task's latest run has ended and every event up to its end is in `events` or before `after`. */
  final: boolean;
}

/**
 * The task's events after `after`, in order, at most `limit`: one consistent reading of what is
 * stored now. Events of a run come in stage order; a later run's only once the earlier one ended
 * (a replacement run is inserted in the commit that ends the run it replaces).
 */
export async function readRunEvents(
  db: Database,
  taskId: string,
  after: EventPosition,
  limit: number,
): Promise<RunEventsPage> {
  const all = await storedRuns(db, taskId);
  const unfinished = all.filter(
    (r) => r.ordinal > after.run || (r.ordinal === after.run && after.stage < STAGE.ended),
  );
  const messages = await messagesAfter(db, taskId, unfinished, after, limit);
  const lastPaged = messages.rows[messages.rows.length - 1]?.runId;
  const events: RunEvent[] = [];
  const push = (event: RunEvent) => {
    if (comparePositions(event.position, after) > 0) events.push(event);
  };
  const page = (final: boolean): RunEventsPage => ({
    events: events.slice(0, limit),
    final: final && events.length <= limit,
  });
  for (const run of unfinished) {
    const at = (stage: Stage, seq = 0, version = 0): EventPosition => ({
      run: run.ordinal,
      stage,
      seq,
      version,
    });
    const ofRun: RunEvent[] = [
      { position: at(STAGE.queued), kind: 'status', run, status: 'pending', at: run.row.queuedAt },
    ];
    if (run.row.dequeuedAt)
      ofRun.push({
        position: at(STAGE.claimed),
        kind: 'status',
        run,
        status: 'running',
        at: run.row.dequeuedAt,
      });
    for (const message of messages.rows.filter((m) => m.runId === run.row.id))
      ofRun.push({ position: at(STAGE.working, message.seq), kind: 'message', run, message });
    const cut = messages.cut && run.row.id === lastPaged;
    // Progress is a snapshot of a working run's row; an ended run's end says the rest.
    if (!cut && run.row.dequeuedAt && !hasEnded(run.row))
      ofRun.push({ position: at(STAGE.working, run.seqBefore, run.version), kind: 'progress', run });
    if (!cut && hasEnded(run.row))
      ofRun.push({
        position: at(STAGE.ended),
        kind: 'status',
        run,
        status: run.row.status,
        at: run.row.finishedAt,
      });
    for (const event of ofRun.sort((a, b) => comparePositions(a.position, b.position))) push(event);
    // A run not ended (or whose messages the page cut) is where this reading stops.
    if (cut || !hasEnded(run.row)) return page(false);
  }
  const last = all[all.length - 1];
  return page(last !== undefined && last.ordinal >= after.run && hasEnded(last.row));
}

/** The messages of `candidates` after `after`, oldest first, at most `limit` (`cut` when more exist). */
async function messagesAfter(
  db: Database,
  taskId: string,
  candidates: StoredRun[],
  after: EventPosition,
  limit: number,
): Promise<{ rows: MessageRow[]; cut: boolean }> {
  if (candidates.length === 0) return { rows: [], cut: false };
  const current = candidates.find((r) => r.ordinal === after.run);
  const later = candidates.filter((r) => r !== current).map((r) => r.row.id);
  const conditions: SQL[] = [];
  if (current)
    conditions.push(and(eq(runMessages.runId, current.row.id), gt(runMessages.seq, after.seq)) as SQL);
  if (later.length > 0) conditions.push(inArray(runMessages.runId, later));
  const rows = await db.orm
    .select()
    .from(runMessages)
    .where(and(eq(runMessages.taskId, taskId), or(...conditions)))
    .orderBy(asc(runMessages.seq))
    .limit(limit + 1);
  return { rows: rows.slice(0, limit), cut: rows.length > limit };
}

/** How often the embedded database's write generation is looked at while nothing changed. */
const GENERATION_TICK_MS = 50;
/** Events read at once while following: a long transcript is caught up with in a few reads. */
const FOLLOW_PAGE_SIZE = 200;

/**
 * Follows the task's events after `after` until its latest run has ended, yielding each page of
 * new events (never an empty one). PostgreSQL is read again every `pollMs`, since a worker in
 * another process may be writing; the embedded database, written only by this process, is read
 * again only once its write generation moved. Ends early, quietly, when `signal` aborts.
 */
export async function* followRunEvents(
  db: Database,
  taskId: string,
  after: EventPosition,
  options: { pollMs: number; signal: AbortSignal; pageSize?: number },
): AsyncGenerator<RunEvent[], void> {
  const pageSize = options.pageSize ?? FOLLOW_PAGE_SIZE;
  let position = after;
  while (!options.signal.aborted) {
    const generation = db.writeGeneration();
    const { events, final } = await readRunEvents(db, taskId, position, pageSize);
    const last = events[events.length - 1];
    if (last) {
      position = last.position;
      yield events;
    }
    if (final) return;
    // A full page may have more behind it: read on at once.
    if (events.length < pageSize) await nextChange(db, generation, options);
  }
}

/** Resolves after the next poll interval (or the next write, embedded), or when `signal` aborts. */
async function nextChange(
  db: Database,
  generation: number | null,
  options: { pollMs: number; signal: AbortSignal },
): Promise<void> {
  const deadline = Date.now() + options.pollMs;
  do {
    const wait = generation === null ? options.pollMs : GENERATION_TICK_MS;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      options.signal.addEventListener('abort', done, { once: true });
    });
  } while (
    generation !== null &&
    db.writeGeneration() === generation &&
    Date.now() < deadline &&
    !options.signal.aborted
  );
}
