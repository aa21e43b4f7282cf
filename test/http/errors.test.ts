/** Bad input gets its status and a clear message, and changes nothing. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projects } from '../../src/storage/schema';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir } from '../helpers/git';

describe('request errors', () => {
  let t: TestApp;
  const projectCount = async () => (await t.services.db.orm.select({ n: count() }).from(projects))[0]?.n ?? 0;
  const good = { name: 'e', repository: { full_name: 'acme/e', installation_id: 1 } };

  let reposDir: string;

  beforeAll(async () => {
    reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/e', { 'x.js': 'x\n' });
    t = await createTestApp({ reposDir, env: { SVC_BODY_LIMIT: '2048' } });
  });
  afterAll(() => t.close());

  const send = (payload: string, contentType = 'application/json') =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: { ...bearer(t.workspaceKey), 'content-type': contentType },
      payload,
    });

  it.each([
    ['malformed JSON', '{"name": "e",', 'application/json', 400, 'invalid_json', /not valid JSON/],
    ['an empty JSON body', '', 'application/json', 400, 'invalid_json', /empty/],
    [
      'a wrong type',
      JSON.stringify({ ...good, name: 42 }),
      'application/json',
      400,
      'validation_failed',
      /name/,
    ],
    [
      'a wrong nested type',
      JSON.stringify({ ...good, repository: { full_name: 'acme/e', installation_id: '1' } }),
      'application/json',
      400,
      'validation_failed',
      /installation_id/,
    ],
    [
      'an unknown field',
      JSON.stringify({ ...good, colour: 'red' }),
      'application/json',
      400,
      'validation_failed',
      /colour/,
    ],
    [
      'a missing field',
      JSON.stringify({ name: 'e' }),
      'application/json',
      400,
      'validation_failed',
      /repository/,
    ],
    [
      'a bad full_name',
      JSON.stringify({ ...good, repository: { full_name: 'nope', installation_id: 1 } }),
      'application/json',
      400,
      'validation_failed',
      /owner\/repo/,
    ],
    [
      'an oversize body',
      JSON.stringify({ ...good, name: 'x'.repeat(4096) }),
      'application/json',
      413,
      'payload_too_large',
      /limit/,
    ],
    [
      'a wrong content type',
      'name=e',
      'application/x-www-form-urlencoded',
      415,
      'unsupported_media_type',
      /application\/json/,
    ],
    ['text/plain', JSON.stringify(good), 'text/plain', 415, 'unsupported_media_type', /application\/json/],
  ])(
    'answers %s with its status and code, and changes nothing',
    async (_what, payload, type, status, code, message) => {
      const before = await projectCount();
      const res = await send(payload, type);
      expect(res.statusCode).toBe(status);
      const body = res.json();
      expect(body.error.code).toBe(code);
      expect(body.error.message).toMatch(message);
      expect(body.error.request_id).toBe(res.headers['x-request-id']);
      expect(await projectCount()).toBe(before);
    },
  );

  it('lists zod issues in details for validation failures', async () => {
    const res = await send(JSON.stringify({ ...good, name: 42 }));
    expect(res.json().error.details.issues[0]).toMatchObject({ path: expect.stringContaining('name') });
  });

  it('answers an unknown route with a 404 envelope', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/nothing-here',
      headers: bearer(t.workspaceKey),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });

  it('names a repository or installation that is not there', async () => {
    const missingRepo = await send(
      JSON.stringify({ ...good, repository: { full_name: 'acme/gone', installation_id: 1 } }),
    );
    expect(missingRepo.statusCode).toBe(404);
    expect(missingRepo.json().error.message).toMatch(/acme\/gone/);
    const missingInstallation = await send(
      JSON.stringify({ ...good, repository: { full_name: 'acme/e', installation_id: 77 } }),
    );
    expect(missingInstallation.statusCode).toBe(404);
    expect(missingInstallation.json().error.message).toMatch(/installation 77/);
  });

  it('tells a repository that is there but unreadable from a missing one, and creates nothing', async () => {
    mkdirSync(join(reposDir, 'acme', 'notgit'), { recursive: true });
    const before = await projectCount();
    const res = await send(
      JSON.stringify({ ...good, repository: { full_name: 'acme/notgit', installation_id: 1 } }),
    );
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('repository_unreadable');
    expect(res.json().error.message).toMatch(/acme\/notgit.*not a git repository.*git clone/);
    expect(await projectCount()).toBe(before);
  });

  it('answers a second project for the same repository with 409 conflict naming the first', async () => {
    const first = await send(JSON.stringify(good));
    expect(first.statusCode).toBe(201);
    const second = await send(JSON.stringify(good));
    expect(second.statusCode).toBe(409);
    expect(second.json().error.details.project_id).toBe(first.json().project.id);
  });
});
