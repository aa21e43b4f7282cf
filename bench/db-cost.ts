/**
 * Where the CPU of a task read goes: `node bin/run-ts.mjs bench/db-cost.ts [pglite|postgres]`.
 * A diagnostic beside `npm run bench:api` (which measures the HTTP figures): in one process, no
 * network, it times the database access of `GET /api/v1/tasks/{id}` as the route does it today
 * (the real `authenticate`, `resolveProject`, `engine.getTask`, `engine.latestRun`), the same
 * four reads as drizzle prepared statements, single queries, and the whole route through
 * `app.inject`. Prints CPU ms per operation (user+system of this process) and operations/s.
 * Bounded: a fixed number of operations per line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { keyDigest } from '../src/core/keys';
import { buildApp } from '../src/http/app';
import { authenticate, resolveProject } from '../src/http/auth';
import { createServices } from '../src/main';
import { apiKeys, projects, runs, tasks } from '../src/storage/schema';

const engineKind = process.argv[2] === 'pglite' ? 'pglite' : 'postgres';
const N = Number(process.env.BENCH_OPS || 2000);
const CONCURRENCY = 8;
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || 'postgres://postgres@127.0.0.1:5432/test';

const temp = mkdtempSync(join(os.tmpdir(), 'svc-dbcost-'));
const env: NodeJS.ProcessEnv = { SVC_DATA_DIR: join(temp, 'data'), SVC_REPOS_DIR: temp, LOG_LEVEL: 'warn' };
let dbName: string | null = null;
const admin = async (query: string) => {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(query);
  } finally {
    await c.end();
  }
};
if (engineKind === 'postgres') {
  dbName = `svc_bench_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${dbName}`);
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${dbName}`;
  env.DATABASE_URL = u.toString();
}

const started = await createServices(loadConfig(env), { logger: pino({ level: 'warn' }) });
const { db, engine } = started.services;
const secret = started.bootstrap?.secret ?? '';
const workspaceId = started.workspaceId;
const projectId = 'prj_bench';
await db.orm
  .insert(projects)
  .values({ id: projectId, workspaceId, name: 'bench', repoFullName: 'bench/repo', installationId: 1 });
const { task } = await engine.createTask({
  workspaceId,
  projectId,
  kind: 'diagnostic',
  title: 'read me',
  input: {},
});
const app = await buildApp(started.services, { logger: false });
await app.ready();

async function asToday() {
  const principal = await authenticate(db, `Bearer ${secret}`);
  const project = await resolveProject(db, principal, projectId);
  const t = await engine.getTask(principal.workspaceId, project, task.id);
  return engine.taskRecord(t, await engine.latestRun(t.id));
}

const pKey = db.orm
  .select()
  .from(apiKeys)
  .where(and(eq(apiKeys.digest, sql.placeholder('digest')), isNull(apiKeys.revokedAt)))
  .limit(1)
  .prepare('bench_key');
const pProject = db.orm
  .select({ id: projects.id })
  .from(projects)
  .where(
    and(eq(projects.id, sql.placeholder('project')), eq(projects.workspaceId, sql.placeholder('workspace'))),
  )
  .limit(1)
  .prepare('bench_project');
const pTask = db.orm
  .select()
  .from(tasks)
  .where(
    and(
      eq(tasks.id, sql.placeholder('task')),
      eq(tasks.workspaceId, sql.placeholder('workspace')),
      eq(tasks.projectId, sql.placeholder('project')),
    ),
  )
  .limit(1)
  .prepare('bench_task');
const pRun = db.orm
  .select()
  .from(runs)
  .where(eq(runs.taskId, sql.placeholder('task')))
  .orderBy(desc(runs.createdAt), desc(runs.id))
  .limit(1)
  .prepare('bench_run');

async function asPrepared() {
  const [key] = await pKey.execute({ digest: keyDigest(secret) });
  if (!key) throw new Error('no key');
  await pProject.execute({ project: projectId, workspace: key.workspaceId });
  const [t] = await pTask.execute({ task: task.id, workspace: key.workspaceId, project: projectId });
  if (!t) throw new Error('no task');
  const [r] = await pRun.execute({ task: t.id });
  return engine.taskRecord(t, r ?? null);
}

async function measure(name: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 200; i++) await fn();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let i = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (i++ < N) await fn();
    }),
  );
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1000 / N;
  console.log(
    `${engineKind.padEnd(8)} ${name.padEnd(52)} ${cpuMs.toFixed(3).padStart(7)} ms CPU/op ${((N / wall) * 1000).toFixed(0).padStart(7)} ops/s`,
  );
}

const headers = { authorization: `Bearer ${secret}`, 'project-id': projectId };
const probe = await app.inject({ method: 'GET', url: `/api/v1/tasks/${task.id}`, headers });
if (probe.statusCode !== 200) throw new Error(`GET /tasks answered ${probe.statusCode}: ${probe.body}`);

console.log(
  `${os.cpus()[0]?.model} × ${os.cpus().length}, Node ${process.version}, load ${os.loadavg()[0]?.toFixed(2)}`,
);
await measure('SELECT 1 (db.rows)', () => db.rows(sql`SELECT 1`));
await measure('task read: 4 reads as the route does them today', asToday);
await measure('task read: the same 4 reads as prepared statements', asPrepared);
await measure('  authenticate() (api_keys by digest)', () => authenticate(db, `Bearer ${secret}`));
await measure('  latestRun() (query builder)', () => engine.latestRun(task.id));
await measure('  latest run, prepared', () => pRun.execute({ task: task.id }));
await measure('  latest run, raw SQL, SELECT *', () =>
  db.rows(sql`SELECT * FROM runs WHERE task_id = ${task.id} ORDER BY created_at DESC, id DESC LIMIT 1`),
);
await measure('  latest run, raw SQL, SELECT id', () =>
  db.rows(sql`SELECT id FROM runs WHERE task_id = ${task.id} ORDER BY created_at DESC, id DESC LIMIT 1`),
);
await measure('GET /api/v1/tasks/{id} through app.inject (no socket)', () =>
  app.inject({ method: 'GET', url: `/api/v1/tasks/${task.id}`, headers }),
);

await app.close();
await db.close();
if (dbName) await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
rmSync(temp, { recursive: true, force: true });
process.exit(0);
