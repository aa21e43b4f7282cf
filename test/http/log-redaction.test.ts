/**
 * A credential sent in a URL never reaches the request log: the values of sensitive query
 * parameters and every svc key in the URL (or quoted in a message) are written as `[redacted]`.
 * Checked on the log lines a real svc writes while answering, captured from its logger.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { REDACTED, redactUrl } from '../../src/core/log-redaction';
import { buildApp } from '../../src/http/app';
import { createLogger, createServices } from '../../src/main';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

describe('redactUrl', () => {
  it.each([
    ['/api/v1/keys?key=abc&limit=5', `/api/v1/keys?key=${REDACTED}&limit=5`],
    ['/x?API_KEY=abc', `/x?API_KEY=${REDACTED}`],
    ['/x?access_token=a.b.c&cursor=c1', `/x?access_token=${REDACTED}&cursor=c1`],
    ['/x?token=t&refresh_token=r', `/x?token=${REDACTED}&refresh_token=${REDACTED}`],
    ['/x?client%5Fsecret=s', `/x?client%5Fsecret=${REDACTED}`],
    ['/x?q=svc_ws_AbC-12_x&limit=2', `/x?q=svc_ws_${REDACTED}&limit=2`],
    ['/x?q=svc%5Fprj%5FAbC', `/x?q=svc%5Fprj%5F${REDACTED}`],
    ['/api/v1/keys/svc_pat_AbC', `/api/v1/keys/svc_pat_${REDACTED}`],
    ['/api/v1/keys?limit=5&cursor=abc', '/api/v1/keys?limit=5&cursor=abc'],
    ['/api/v1/tasks/tsk_1', '/api/v1/tasks/tsk_1'],
  ])('%s is logged as %s', (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });
});

describe('the request log', () => {
  let testDb: TestDatabase;
  let lines: string[];
  let app: Awaited<ReturnType<typeof buildApp>>;
  const secret = 'svc_ws_QueryStringSecret0123456789abcdefABCD';

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    lines = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const config = loadConfig({ SVC_REPOS_DIR: mkdtempSync(join(tmpdir(), 'svc-repos-')) });
    const { services } = await createServices(config, {
      db: testDb.db,
      logger: createLogger({ logLevel: 'info' }, sink),
    });
    app = await buildApp(services);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await testDb.close();
  });

  it('writes a key sent in the query string as [redacted], keeping the rest of the URL', async () => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/keys?key=${secret}&limit=5` });
    expect(res.statusCode).toBe(401);
    const logged = lines.filter((line) => line.includes('/api/v1/keys?'));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join('\n')).toContain(`key=${REDACTED}&limit=5`);
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('redacts access_token, token and a key under any parameter name', async () => {
    await app.inject({ method: 'GET', url: `/api/v1/keys?access_token=${secret}` });
    await app.inject({ method: 'GET', url: `/api/v1/keys?token=opaque-bearer-value` });
    await app.inject({ method: 'GET', url: `/api/v1/keys?q=${secret}` });
    const all = lines.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain('opaque-bearer-value');
  });

  it('redacts a key sent as a path segment, in the URL and in the message quoting it', async () => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/nowhere/${secret}` });
    expect(res.statusCode).toBe(404);
    expect(lines.some((line) => line.includes(`/api/v1/nowhere/svc_ws_${REDACTED}`))).toBe(true);
    expect(lines.join('\n')).not.toContain(secret);
  });
});
