/**
 * An in-process svc for HTTP tests: a fresh database, the real services and the Fastify app,
 * driven with `app.inject()`. No worker runs unless the test starts one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { CodeHostsOptions } from '../../src/codehost';
import { type Config, loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { createServices } from '../../src/main';
import type { Services } from '../../src/operations/services';
import { tasks } from '../../src/storage/schema';
import { createTestDatabase, type DatabaseKind } from './db';
import { describeViolations, takeViolations, watchResponses } from './response-contract';

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  workspaceId: string;
  /** A workspace key (the bootstrap key). */
  workspaceKey: string;
  /** The PostgreSQL connection string (undefined on PGlite), for a second connection or process. */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

export async function createTestApp(
  options: {
    kind?: DatabaseKind;
    env?: Record<string, string>;
    reposDir?: string;
    codeHosts?: Partial<CodeHostsOptions>;
  } = {},
): Promise<TestApp> {
  const testDb = await createTestDatabase(options.kind ?? 'pglite');
  const config: Config = loadConfig({
    SVC_REPOS_DIR: options.reposDir ?? mkdtempSync(join(tmpdir(), 'svc-repos-')),
    ...options.env,
  });
  const started = await createServices(config, {
    db: testDb.db,
    logger: pino({ level: 'silent' }),
    ...(options.codeHosts ? { codeHosts: options.codeHosts } : {}),
  });
  if (!started.bootstrap) throw new Error('a fresh test database should mint a bootstrap key');
  const app = await buildApp(started.services, { logger: false });
  // Every answer the test sees is held to the served OpenAPI document; close() reports breaks.
  watchResponses(app);
  await app.ready();
  return {
    app,
    services: started.services,
    workspaceId: started.workspaceId,
    workspaceKey: started.bootstrap.secret,
    databaseUrl: testDb.url,
    async close() {
      await app.close();
      await testDb.close();
      const { violations } = takeViolations(app);
      if (violations.length > 0) throw new Error(describeViolations(violations));
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * Connects a repository as a project through the API (the way a user would) and returns its id;
 * a refusal fails the set-up with the server's answer rather than a confusing `undefined` later.
 */
export async function createProject(t: TestApp, fullName: string, installationId = 1): Promise<string> {
  const name = fullName.slice(fullName.indexOf('/') + 1);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/projects',
    headers: bearer(t.workspaceKey),
    payload: { name, repository: { full_name: fullName, installation_id: installationId } },
  });
  if (res.statusCode !== 201) throw new Error(`creating project ${fullName}: ${res.statusCode} ${res.body}`);
  return res.json().project.id as string;
}

/**
 * Waits until the latest run of every task has ended (completed, failed or canceled), polling
 * every 50 ms up to `attempts` times; tasks of `ignoreKinds` (a check's deadline, which waits on
 * purpose) are left out.
 */
export async function settleRuns(
  t: TestApp,
  options: { ignoreKinds?: readonly string[]; attempts?: number } = {},
): Promise<void> {
  const ignored = new Set(options.ignoreKinds ?? []);
  for (let i = 0; i < (options.attempts ?? 400); i++) {
    const all = await t.services.db.orm.select().from(tasks);
    const runs = await Promise.all(
      all.filter((x) => !ignored.has(x.kind)).map((x) => t.services.engine.latestRun(x.id)),
    );
    if (runs.every((r) => r && ['completed', 'failed', 'canceled'].includes(r.status))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('runs did not settle');
}
