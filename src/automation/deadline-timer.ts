/**
 * The review deadline as a hard cap: a timer in the serving process over the checks that are
 * due (their `deadline_at` is persisted on the check row, so a restart re-arms it), writing the
 * neutral 'still reviewing' conclusion at the deadline whatever the workers are doing. It was a
 * queued run, which waited behind reviews for a worker slot: with one worker and four pull
 * requests, deadlines fired seconds late, and under load minutes late.
 *
 * Several serving processes may run it over one database: each check is claimed by one
 * conditional update, so only one of them concludes it. A code host that refuses the update
 * leaves the check due again, and a later tick retries.
 */
import { and, asc, eq, inArray, isNotNull, lte, min, ne } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { CodeHosts } from '../codehost';
import { STILL_REVIEWING_TITLE } from '../core/checks';
import type { Database } from '../storage/database';
import { checkRuns, projects } from '../storage/schema';
import { checkStillReviewing } from './check';
import { RepeatingPass } from './repeating-pass';

/** How often the timer looks for checks another process queued (it sleeps until the next due one otherwise). */
export const DEADLINE_SCAN_MS = 1_000;
/** Checks concluded per pass; the rest on the next, right after. */
const BATCH = 100;

const open = and(
  ne(checkRuns.status, 'completed'),
  eq(checkRuns.deadlinePassed, false),
  isNotNull(checkRuns.deadlineAt),
);

export class DeadlineTimer {
  private readonly scanMs: number;
  private readonly loop: RepeatingPass;

  constructor(
    private readonly deps: { db: Database; codeHosts: CodeHosts },
    private readonly options: { logger: Logger; scanMs?: number },
  ) {
    this.scanMs = options.scanMs ?? DEADLINE_SCAN_MS;
    this.loop = new RepeatingPass({
      pass: () => this.tick().then(() => this.nextDelay()),
      onError: (error) => {
        this.options.logger.warn({ err: error }, 'deadline pass failed; trying again');
        return this.scanMs;
      },
      keepsProcessAlive: false,
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Concludes every check whose deadline has passed; returns how many it concluded. */
  async tick(now = new Date()): Promise<number> {
    let concluded = 0;
    for (;;) {
      const due = await this.deps.db.orm
        .select({ check: checkRuns, project: projects })
        .from(checkRuns)
        .innerJoin(projects, eq(projects.id, checkRuns.projectId))
        .where(and(open, lte(checkRuns.deadlineAt, now)))
        .orderBy(asc(checkRuns.deadlineAt))
        .limit(BATCH);
      for (const { check, project } of due) if (await this.conclude(check, project)) concluded++;
      if (due.length < BATCH) return concluded;
    }
  }

  private async conclude(
    check: typeof checkRuns.$inferSelect,
    project: typeof projects.$inferSelect,
  ): Promise<boolean> {
    // The claim: only the process whose update finds the check still open concludes it.
    const [claimed] = await this.deps.db.orm
      .update(checkRuns)
      .set({ deadlinePassed: true, updatedAt: new Date() })
      .where(and(eq(checkRuns.id, check.id), open))
      .returning({ id: checkRuns.id });
    if (!claimed) return false;
    const host = this.deps.codeHosts.forInstallation(project.installationId);
    if (!host) {
      // Nothing to tell: retrying would not configure one. The check stays as the host shows it.
      this.options.logger.warn(
        { check: check.id, installation: project.installationId },
        'an overdue check has no configured code host',
      );
      return false;
    }
    try {
      await checkStillReviewing(this.deps.db, host, {
        workspaceId: check.workspaceId,
        projectId: check.projectId,
        pullRequestId: check.pullRequestId,
        headSha: check.headSha,
        repo: project.repoFullName,
      });
      return true;
    } catch (error) {
      // Due again: the next tick retries. A review that landed meanwhile completed the check.
      await this.deps.db.orm
        .update(checkRuns)
        .set({
          deadlinePassed: false,
          status: check.status,
          conclusion: check.conclusion,
          title: check.title,
        })
        .where(
          and(
            eq(checkRuns.id, check.id),
            eq(checkRuns.deadlinePassed, true),
            inArray(checkRuns.title, [STILL_REVIEWING_TITLE, check.title]),
          ),
        )
        .catch(() => undefined);
      this.options.logger.warn(
        { err: error, check: check.id, head: check.headSha },
        'could not conclude an overdue check; retrying',
      );
      return false;
    }
  }

  /** Sleeps until the next due check, or the scan interval when that is sooner or there is none. */
  private async nextDelay(): Promise<number> {
    const [row] = await this.deps.db.orm
      .select({ next: min(checkRuns.deadlineAt) })
      .from(checkRuns)
      .where(open);
    const next = row?.next ? new Date(row.next).getTime() - Date.now() : this.scanMs;
    return Math.max(0, Math.min(this.scanMs, next));
  }
}
