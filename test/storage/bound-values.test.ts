/**
 * A failed statement's bound values never reach a log line or a run's failure: drizzle writes
 * every parameter into its error message, and PostgreSQL's `detail` quotes a violated key's
 * values. Real statements on both engines, the real logger, and a real request through the API.
 */
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { keyDigest } from '../../src/core/keys';
import { buildApp } from '../../src/http/app';
import { createLogger, createServices } from '../../src/main';
import { messageOf, withoutBoundValues } from '../../src/storage/bound-values';
import { workspaces } from '../../src/storage/schema';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/db';

const SECRET = 'svc_marker_0123456789abcdef';

/** A logger writing into an array of lines. */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ logLevel: 'info' }, sink), lines };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('the statement should have failed');
    },
    (error: unknown) => error as Error,
  );

describe.each(DATABASE_KINDS)('bound values on %s', (kind) => {
  let t: TestDatabase | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('are withheld from the message, the stack and the params of a failed statement, and from detail', async () => {
    t = await createTestDatabase(kind);
    const [existing] = await t.db.orm.select({ id: workspaces.id }).from(workspaces).limit(1);
    const id = existing?.id ?? 'ws_test';
    if (!existing) await t.db.orm.insert(workspaces).values({ id, name: SECRET });
    // A unique violation: drizzle's message lists the parameters, PostgreSQL's detail the key.
    const error = await failure(t.db.orm.insert(workspaces).values({ id, name: SECRET }));
    expect(`${error.message}${error.stack}`).toContain(SECRET);
    withoutBoundValues(error);
    expect(error.message).toMatch(/^Failed query: insert into "workspaces"/);
    expect(error.message).toMatch(/params: \d+ withheld$/);
    expect(
      `${error.message}\n${error.stack}\n${JSON.stringify((error as { params?: unknown }).params)}`,
    ).not.toContain(SECRET);
    const cause = error.cause as { detail?: string; code?: string };
    expect(cause.code).toBe('23505');
    expect(cause.detail).toMatch(/^Key \(id\)=\(…\) already exists\.$/);
    expect(cause.detail).not.toContain(id);
  });

  it('never reach a log line, even when the error is logged as it is thrown', async () => {
    t = await createTestDatabase(kind);
    const { logger, lines } = capturedLogger();
    const error = await failure(t.db.orm.execute(sql`select ${SECRET}::int`));
    logger.error({ err: error }, 'statement failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Failed query');
    expect(lines[0]).toContain('withheld');
    expect(lines[0]).not.toContain(SECRET);
    // What a failed run's error_json and a gap quote of a database error.
    const quoted = messageOf(await failure(t.db.orm.execute(sql`select ${SECRET}::int`)));
    expect(quoted).toMatch(/^Failed query: select \$1::int\nparams: 1 withheld/);
    expect(quoted).not.toContain(SECRET);
    expect(messageOf(new Error('plain'))).toBe('plain');
  });

  it('a request whose key lookup fails logs the failure without the key or its digest', async () => {
    t = await createTestDatabase(kind);
    const { logger, lines } = capturedLogger();
    const config = loadConfig({ SVC_KEY_CACHE_MS: '0', SVC_REPOS_DIR: '/nonexistent' });
    const started = await createServices(config, { db: t.db, logger });
    const key = started.bootstrap?.secret as string;
    const app = await buildApp(started.services);
    try {
      await t.db.orm.execute(sql`alter table api_keys rename to api_keys_moved`);
      const res = await app.inject({
        method: 'GET',
        url: '/api/v1/projects',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('internal');
      const logged = lines.join('\n');
      expect(logged).toContain('Failed query');
      expect(logged).not.toContain(keyDigest(key));
      expect(logged).not.toContain(key);
    } finally {
      await app.close();
    }
  });
});
