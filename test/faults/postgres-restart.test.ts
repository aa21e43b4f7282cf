/**
 * PostgreSQL restarted under load, with real processes: `svc serve --no-worker` and two
 * `svc worker`s on a private cluster (test/helpers/private-postgres.ts; the machine's shared
 * server is never touched) execute a stream of reviews of local pull requests while API requests
 * keep coming, and the server is restarted twice (`pg_ctl restart -m fast`, then `-m immediate`,
 * a crash with recovery). Nobody restarts svc: serve answers again by itself, the workers live
 * on, every acknowledged review exists and ends by name (completed, or failed with a named code,
 * never `unknown`), none completes twice, and the findings ledger holds exactly what a review
 * before the fault found. A request the outage refused is 503 `database_unavailable` in the
 * error envelope with `Retry-After`, never a 500 or a dropped connection.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunFailureCode } from '../../src/core/failures';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';
import { freePort } from '../helpers/net';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres';
import {
  type Answered,
  apiClient,
  eventually,
  isEnvelope,
  type SvcProcesses,
  sleep,
  svcProcesses,
} from '../helpers/svc-processes';

const KEY = 'svc_ws_postgres_restart_fault_test';
/** How soon after PostgreSQL accepts connections again every request must succeed. */
const RECOVERY_MS = 1_500;
const WORKERS = 2;
/** Pull requests 1..PULLS, each adding one file with a finding the `security` rules report. */
const PULLS = 3;
/** Reviews asked for under load: bounded, so a slow (shared, two-core) machine still gets through them. */
const REVIEWS = 16;
const unsafe = (n: number) =>
  [
    `export function handler${n}(req) {`,
    '  const code = req.query.code;',
    '  return eval(code);',
    '}',
    '',
  ].join('\n');

/** An answer and when its request was sent. */
type Timed = Answered & { sent: number };

interface LedgerRow {
  ledger_key: string;
  fingerprint: string;
  id: string;
  status: string;
}

describe('PostgreSQL restarted under load (fast, then immediate)', () => {
  let cluster: PrivatePostgres;
  let procs: SvcProcesses;
  let serve: ChildProcess;
  const workers: ChildProcess[] = [];
  let port: number;
  let projectId: string;
  let control: pg.Client | null = null;
  let api: ReturnType<typeof apiClient>;

  const healthz = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) });
    await res.body?.cancel();
    return res.status;
  };
  const explain = () => `${procs.tails()}\n--- postgres log\n${cluster.log().slice(-1_500)}`;

  /** A connection of the test's own, opened again after each restart. */
  async function query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    if (!control) {
      const client = new pg.Client({ connectionString: cluster.url });
      client.on('error', () => {
        if (control === client) control = null;
      });
      await client.connect();
      control = client;
    }
    try {
      return (await control.query(text, values)).rows as T[];
    } catch (error) {
      control?.end().catch(() => {});
      control = null;
      throw error;
    }
  }

  /** Asks for a review until it is acknowledged: the same Idempotency-Key on every try. */
  async function requestReview(i: number, answers: Timed[], until: number): Promise<string | null> {
    for (;;) {
      const sent = Date.now();
      const res = await api('POST', '/api/v1/reviews', {
        body: { pr: (i % PULLS) + 1, reviewers: ['security'] },
        headers: { 'project-id': projectId, 'idempotency-key': `fault-review-${i}` },
      });
      answers.push({ ...res, sent });
      if (res.status === 202) return (res.body as { id: string }).id;
      if (Date.now() > until) return null;
      await sleep(300);
    }
  }

  /** The review tasks' runs, once none of them is pending or running. */
  async function settledRuns(taskIds: string[], timeoutMs: number) {
    let open: unknown[] = [];
    let activity: unknown[] = [];
    return eventually(
      async () => {
        const rows = await query<{
          id: string;
          task_id: string;
          status: string;
          error: { code?: string } | null;
        }>(
          'SELECT id, task_id, status, error, lease_owner, lease_expires_at, phase FROM runs WHERE task_id = ANY($1)',
          [taskIds],
        );
        open = rows.filter((r) => r.status === 'pending' || r.status === 'running');
        if (open.length === 0) return rows;
        activity = await query(
          'SELECT pid, application_name, state, wait_event_type, wait_event, left(query, 200) AS query, now() - query_start AS age FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        return null;
      },
      'every review run to end',
      timeoutMs,
      () => `still open: ${JSON.stringify(open)}\nsessions: ${JSON.stringify(activity)}\n${explain()}`,
    );
  }

  beforeAll(async () => {
    cluster = await startPrivatePostgres();
    procs = svcProcesses();
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/shop', { 'src/app.js': 'export const ok = 1;\n' });
    for (let n = 1; n <= PULLS; n++)
      openPullRequest(repo, n, { [`src/handler${n}.js`]: unsafe(n) }, `handler ${n}`, `feature-${n}`);

    port = await freePort();
    const env = {
      DATABASE_URL: cluster.url,
      SVC_REPOS_DIR: reposDir,
      // A lease outlives the outage; the sweeper still ends a run whose worker went quiet.
      SVC_LEASE_MS: '4000',
      SVC_HEARTBEAT_MS: '400',
      SVC_POLL_MS: '500',
      SVC_SHUTDOWN_GRACE_MS: '1000',
      SVC_WORKER_CONCURRENCY: '3',
    };
    // serve migrates the fresh cluster and registers the key; the workers come after it.
    serve = procs.start(['serve', '--no-worker'], { ...env, PORT: String(port), SVC_BOOTSTRAP_KEY: KEY });
    await eventually(async () => (await healthz()) === 200, 'serve to answer /healthz', 40_000, explain);
    for (let i = 0; i < WORKERS; i++) workers.push(procs.start(['worker'], env));
    await eventually(
      async () =>
        (await query<{ n: number }>('SELECT count(*)::int AS n FROM workers WHERE stopped_at IS NULL'))[0]
          ?.n === WORKERS,
      'the workers to register',
      40_000,
      explain,
    );

    api = apiClient(() => `http://127.0.0.1:${port}`, KEY);
    const created = await api('POST', '/api/v1/projects', {
      body: { name: 'shop', repository: { full_name: 'acme/shop', installation_id: 1 } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    projectId = (created.body as { project: { id: string } }).project.id;
  }, 90_000);

  afterAll(async () => {
    await procs?.killAll();
    await control?.end().catch(() => {});
    await cluster?.cleanup();
  });

  it('recovers on its own: every acknowledged review ends by name, once, and the ledger is intact', async () => {
    // Before the fault: one review of each pull request, the ledger they make is the reference.
    const before: Timed[] = [];
    const baseline = await Promise.all(
      Array.from({ length: PULLS }, (_, i) => requestReview(1_000 + i, before, Date.now() + 10_000)),
    );
    expect(baseline.every(Boolean), JSON.stringify(before.map((a) => a.body))).toBe(true);
    const baselineRuns = await settledRuns(baseline as string[], 45_000);
    expect(baselineRuns.map((r) => r.status)).toEqual(baselineRuns.map(() => 'completed'));
    const ledger = await query<LedgerRow>(
      'SELECT ledger_key, fingerprint, id, status FROM findings ORDER BY ledger_key, fingerprint',
    );
    expect(new Set(ledger.map((f) => f.ledger_key)).size).toBe(PULLS);
    const findingsOf = new Map<string, string[]>(); // pull request number → its finding ids
    for (const row of await query<{ number: number; ids: string[] }>(
      `SELECT p.number, array_agg(f.id ORDER BY f.id) AS ids FROM findings f
       JOIN pull_requests p ON f.pull_request_id = p.id GROUP BY p.number`,
    ))
      findingsOf.set(String(row.number), row.ids);

    // The load: a review asked for every second, and reads from two loops, all along.
    const answers: Timed[] = [];
    const dropped: string[] = [];
    let loading = true;
    const reads = Array.from({ length: 2 }, async (_, loop) => {
      const paths = [`/api/v1/projects/${projectId}`, '/api/v1/reviews?limit=5', '/api/v1/findings?limit=5'];
      for (let i = 0; loading; i++) {
        const path = paths[(i + loop) % paths.length] as string;
        try {
          const sent = Date.now();
          answers.push({ ...(await api('GET', path, { headers: { 'project-id': projectId } })), sent });
        } catch (error) {
          dropped.push(`GET ${path}: ${(error as Error).message}`);
        }
        await sleep(50);
      }
    });
    const submissions: Promise<string | null>[] = [];
    const submitting = (async () => {
      for (let i = 0; loading && i < REVIEWS; i++) {
        submissions.push(
          requestReview(i, answers, Date.now() + 30_000).catch((error) => {
            dropped.push(`POST /api/v1/reviews #${i}: ${(error as Error).message}`);
            return null;
          }),
        );
        await sleep(1_000);
      }
    })();

    // The faults, each while reviews are running.
    const outages: { mode: string; downMs: number; back: number }[] = [];
    for (const mode of ['fast', 'immediate'] as const) {
      await eventually(
        async () =>
          ((await query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status = 'running'"))[0]
            ?.n ?? 0) > 0,
        'a review to be running',
        10_000,
        explain,
      );
      const started = Date.now();
      await cluster.restart(mode, 1_000);
      outages.push({ mode, downMs: Date.now() - started, back: Date.now() });
      await sleep(3_000);
    }
    // The load goes on until enough requests were sent well after the database came back.
    const settledAfter = (outages.at(-1)?.back ?? 0) + RECOVERY_MS;
    const late = () => answers.filter((a) => a.sent > settledAfter);
    await eventually(async () => late().length >= 10, 'requests after the recovery', 30_000, explain);
    loading = false;
    await Promise.all([...reads, submitting]);
    const taskIds = await Promise.all(submissions);

    // serve answers again by itself, and nobody had to start anything again.
    await eventually(
      async () => (await healthz()) === 200,
      'serve to answer /healthz again',
      15_000,
      explain,
    );
    const exited = [serve, ...workers].filter((c) => !procs.alive(c)).map((c) => c.pid);
    expect(exited, exited.length > 0 ? explain() : undefined).toEqual([]);
    expect(dropped, 'requests whose connection failed or hung').toEqual([]);

    // Every answer was a success or the outage's named 503, in the envelope, with Retry-After.
    const refused = answers.filter((a) => a.status >= 300);
    expect(
      refused.filter(
        (a) =>
          a.status !== 503 ||
          !isEnvelope(a.body) ||
          a.body.error.code !== 'database_unavailable' ||
          a.retryAfter === null,
      ),
    ).toEqual([]);
    // The restarts were felt (else this test proves nothing), and a moment after the database
    // is back every request succeeds again.
    expect(refused.length).toBeGreaterThan(0);
    expect(late().filter((a) => a.status >= 300)).toEqual([]);

    // Every review asked for was acknowledged (retrying under its key), once.
    expect(taskIds.filter((id) => id === null)).toEqual([]);
    const acked = taskIds as string[];
    expect(new Set(acked).size).toBe(acked.length);
    // ... and no request the outage refused left a review behind that a retry then made again.
    const reviewTasks = await query<{ id: string }>("SELECT id FROM tasks WHERE kind = 'review'");
    expect(reviewTasks.map((t) => t.id).sort()).toEqual([...(baseline as string[]), ...acked].sort());
    expect(acked.length).toBeGreaterThan(REVIEWS / 2);

    // Each ends by name: completed, or failed with a named code (a replaced run's), never stuck.
    const all = await settledRuns(acked, 60_000);
    const unnamed = all.filter(
      (r) =>
        r.status === 'failed' &&
        (!r.error?.code || !isRunFailureCode(r.error.code) || r.error.code === 'unknown'),
    );
    expect(unnamed, unnamed.length > 0 ? explain() : undefined).toEqual([]);
    const completed = new Map<string, number>();
    for (const r of all)
      if (r.status === 'completed') completed.set(r.task_id, (completed.get(r.task_id) ?? 0) + 1);
    expect([...completed].filter(([, n]) => n > 1)).toEqual([]);
    // A run the database dropped is replaced, so every review completes (unless paused, by name).
    const paused = new Set(
      all.filter((r) => r.error?.code === 'task_auto_paused_repeat_failure').map((r) => r.task_id),
    );
    expect(
      acked
        .filter((id) => !completed.has(id) && !paused.has(id))
        .map((id) =>
          all.filter((r) => r.task_id === id).map((r) => `${r.id} ${r.status} ${JSON.stringify(r.error)}`),
        ),
    ).toEqual([]);

    // Acknowledged work is readable through the API.
    for (const id of acked) {
      const review = await api('GET', `/api/v1/reviews/${id}`, { headers: { 'project-id': projectId } });
      expect(review.status, id).toBe(200);
    }

    // Nothing done twice: one review pass per completed run, and each completed run of pull
    // request N reported exactly the findings the review before the fault found; no new rows.
    const passes = await query<{ run_id: string; n: number }>(
      'SELECT run_id, count(*)::int AS n FROM review_results WHERE task_id = ANY($1) GROUP BY run_id',
      [acked],
    );
    expect(passes.filter((p) => p.n > 1)).toEqual([]);
    const completedRuns = all.filter((r) => r.status === 'completed').map((r) => r.id);
    expect(passes.map((p) => p.run_id).sort()).toEqual([...completedRuns].sort());
    const reported = await query<{ run_id: string; number: number; ids: string[] }>(
      `SELECT rr.run_id, p.number, coalesce(array_agg(rf.finding_id ORDER BY rf.finding_id)
         FILTER (WHERE rf.finding_id IS NOT NULL), '{}') AS ids
       FROM review_results rr JOIN pull_requests p ON rr.pull_request_id = p.id
       LEFT JOIN run_findings rf ON rf.run_id = rr.run_id
       WHERE rr.task_id = ANY($1) GROUP BY rr.run_id, p.number`,
      [acked],
    );
    expect(reported).toHaveLength(completedRuns.length);
    expect(
      reported.filter((r) => JSON.stringify(r.ids) !== JSON.stringify(findingsOf.get(String(r.number)))),
    ).toEqual([]);
    const after = await query<LedgerRow>(
      'SELECT ledger_key, fingerprint, id, status FROM findings ORDER BY ledger_key, fingerprint',
    );
    expect(after).toEqual(ledger);
    expect(after.every((f) => f.status === 'open')).toBe(true);
    console.info(
      `postgres restarts ${JSON.stringify(outages)}: ${acked.length} reviews, ${all.length} runs ` +
        `(${
          all
            .filter((r) => r.status === 'failed')
            .map((r) => r.error?.code)
            .join(', ') || 'none failed'
        }), ` +
        `${answers.length} answers, ${refused.length} refused 503, the last ` +
        `${Math.max(...refused.map((a) => a.sent)) - (outages.at(-1)?.back ?? 0)} ms after the database was back`,
    );
  }, 180_000);
});
