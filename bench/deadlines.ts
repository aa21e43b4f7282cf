/**
 * Review deadlines under a full queue (issue 23.4): one worker, BENCH_DEADLINE_PULLS (50) pull
 * requests pushed at once on the local host, each review made slow (BENCH_DEADLINE_REVIEW_MS,
 * 4 s, held in the worker slot before the real review runs, as a slow model would). Every check
 * gets a deadline BENCH_DEADLINE_MS (10 s) after the push — written on the check row as the p75
 * of a project's history would set it (a fresh project's is the 10-minute cap). Each check's
 * conclusion time is read every 100 ms from the database; a check is on time when it concluded
 * by its deadline plus 5 s.
 *
 * Two ways of keeping the deadline, in turn on fresh embedded databases: the serving process's
 * timer (deadline-timer.ts, what svc does) and, for comparison, the former deadline run queued
 * behind the reviews (`check_deadline`, watched for BENCH_DEADLINE_QUEUED_WAIT_MS, 60 s).
 * Written to the deadlines section of docs/benchmarks.md; `npm run bench:deadlines`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { DeadlineTimer } from '../src/automation/deadline-timer';
import { type AutomationDeps, onPullRequestEvent } from '../src/automation/triggers';
import { loadConfig } from '../src/config';
import type { TaskHandler } from '../src/engine/types';
import { Worker } from '../src/engine/worker';
import { buildApp } from '../src/http/app';
import { createServices } from '../src/main';
import { checkRuns } from '../src/storage/schema';
import { commitFiles, gitIn, makeRepo } from '../test/helpers/git';
import { writeSection } from './review/doc-section';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const PULLS = Number(process.env.BENCH_DEADLINE_PULLS || 50);
const REVIEW_MS = Number(process.env.BENCH_DEADLINE_REVIEW_MS || 4_000);
const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS || 10_000);
const QUEUED_WAIT_MS = Number(process.env.BENCH_DEADLINE_QUEUED_WAIT_MS || 60_000);
const GRACE_MS = 5_000;

type Mode = 'timer' | 'queued-run';

interface Outcome {
  mode: Mode;
  /** Conclusion time minus deadline, per check that concluded while watched (ms; negative: the review landed first). */
  lateness: number[];
  unconcluded: number;
  wallMs: number;
  pushMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function repository(dir: string): string {
  const repo = makeRepo(dir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
  for (let n = 1; n <= PULLS; n++) {
    gitIn(repo, ['checkout', '-q', '-b', `change-${n}`, 'main']);
    commitFiles(repo, {
      [`src/c${n}.js`]: `export function f${n}(req) {\n  return req.query.v + ${n};\n}\n`,
    });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', `refs/pull/${n}/head`, `change-${n}`]);
  }
  return repo;
}

async function run(mode: Mode): Promise<Outcome> {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-deadlines-'));
  try {
    const repo = repository(join(dir, 'repos'));
    const logger = pino({ level: 'silent' });
    const config = loadConfig({ SVC_DATA_DIR: join(dir, 'data'), SVC_REPOS_DIR: join(dir, 'repos') });
    const started = await createServices(config, { logger });
    const { services } = started;
    const app = await buildApp(services, { logger: false });
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: { authorization: `Bearer ${started.bootstrap?.secret}` },
      payload: { name: 'api', repository: { full_name: 'acme/api', installation_id: 1 } },
    });
    if (created.statusCode !== 201) throw new Error(`project: ${created.statusCode} ${created.body}`);
    // A slow review: the worker slot is held before the real review runs, as a slow model holds it.
    const review = services.engine.handler('review') as TaskHandler;
    const slow: TaskHandler = Object.assign(
      async (ctx: Parameters<TaskHandler>[0]) => {
        await sleep(REVIEW_MS);
        return review(ctx);
      },
      review.abandoned ? { abandoned: review.abandoned } : {},
    );
    services.engine.registerHandler('review', slow);
    const deps: AutomationDeps = { db: services.db, engine: services.engine, codeHosts: services.codeHosts };
    const worker = new Worker(services.engine, { concurrency: 1 });
    const timer = new DeadlineTimer(deps, { logger });
    await worker.start();
    if (mode === 'timer') timer.start();

    const t0 = Date.now();
    for (let n = 1; n <= PULLS; n++) {
      const head = gitIn(repo, ['rev-parse', `change-${n}`]).trim();
      await onPullRequestEvent(deps, {
        action: 'opened',
        installationId: 1,
        repo: 'acme/api',
        number: n,
        title: `Change ${n}`,
        draft: false,
        merged: false,
        headRef: `change-${n}`,
        headSha: head,
        baseRef: 'main',
        author: 'octocat',
      });
    }
    // From the last push: the pushes themselves take seconds (each reads its diff with git).
    const pushMs = Date.now() - t0;
    const deadlineAt = new Date(Date.now() + DEADLINE_MS);
    const checks = await services.db.orm.update(checkRuns).set({ deadlineAt }).returning();
    if (mode === 'queued-run') {
      // The former way: a deadline run per check, claimable when it falls due, behind the reviews.
      for (const check of checks) {
        await services.engine.createTask({
          workspaceId: check.workspaceId,
          projectId: check.projectId,
          kind: 'check_deadline',
          title: `Deadline of ${check.headSha.slice(0, 12)}`,
          input: {
            pull_request_id: check.pullRequestId,
            head_sha: check.headSha,
            review_task_id: check.reviewTaskId,
          },
          availableAt: deadlineAt,
        });
      }
    }

    const concludedAt = new Map<string, number>();
    const watchUntil = t0 + pushMs + (mode === 'timer' ? DEADLINE_MS + 3 * GRACE_MS : QUEUED_WAIT_MS);
    while (concludedAt.size < checks.length && Date.now() < watchUntil) {
      const rows = await services.db.orm
        .select({ id: checkRuns.id, status: checkRuns.status })
        .from(checkRuns)
        .where(eq(checkRuns.status, 'completed'));
      const now = Date.now();
      for (const row of rows) if (!concludedAt.has(row.id)) concludedAt.set(row.id, now);
      await sleep(100);
    }
    const wallMs = Date.now() - t0;
    await timer.stop();
    await worker.drain(0).catch(() => undefined);
    await app.close();
    await services.db.close();
    return {
      mode,
      lateness: [...concludedAt.values()].map((at) => at - deadlineAt.getTime()).sort((a, b) => a - b),
      unconcluded: checks.length - concludedAt.size,
      wallMs,
      pushMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];

const outcomes: Outcome[] = [];
for (const mode of ['timer', 'queued-run'] as const) {
  const outcome = await run(mode);
  outcomes.push(outcome);
  const onTime = outcome.lateness.filter((l) => l <= GRACE_MS).length;
  console.log(
    `${mode}: pushes ${fmt(outcome.pushMs)}; ${onTime}/${PULLS} on time, late p50 ${fmt(pct(outcome.lateness, 0.5))} max ${fmt(outcome.lateness.at(-1))}, ${outcome.unconcluded} not concluded in ${fmt(outcome.wallMs)}`,
  );
}

const out = [
  '## Review deadlines under a full queue (bench/deadlines.ts)',
  '',
  `One worker; ${PULLS} pull requests pushed at once on the local host (embedded database), each review held ${REVIEW_MS / 1000} s in the worker slot before the real review runs; every check's deadline ${DEADLINE_MS / 1000} s after the last push (written on the check row; the ${PULLS} pushes took ${outcomes.map((o) => fmt(o.pushMs)).join(' and ')}). A check is on time when it concluded by its deadline + 5 s. Measured ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, Node ${process.version}.`,
  '',
  '| deadline kept by | on time | lateness p50 | lateness p95 | lateness max | not concluded while watched |',
  '|---|---|---|---|---|---|',
  ...outcomes.map(
    (o) =>
      `| ${o.mode === 'timer' ? 'the serving process’s timer (svc now)' : 'a queued `check_deadline` run (before)'} | ${o.lateness.filter((l) => l <= GRACE_MS).length} of ${PULLS} | ${fmt(pct(o.lateness, 0.5))} | ${fmt(pct(o.lateness, 0.95))} | ${fmt(o.lateness.at(-1))} | ${o.unconcluded} (watched ${fmt(o.wallMs)}) |`,
  ),
  '',
  'Lateness is conclusion time minus deadline, read from the database every 100 ms (a check whose review landed before its deadline counts negative). ' +
    'The queued run waits for the worker slot behind every review queued before it, so its deadlines fire only as the queue drains.' +
    ' The timer looks for due checks every second (sooner when it knows the next due time) and concludes them one after another, which is where its 1-3 s go.',
];
writeSection(DOC, 'deadlines', out.join('\n'));
console.log(`\nwrote the deadlines section of ${DOC}`);
