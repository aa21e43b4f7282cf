import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { makeReposDir } from '../helpers/git';

describe('installations', () => {
  let t: TestApp;
  let reposDir: string;
  beforeAll(async () => {
    reposDir = makeReposDir();
    t = await createTestApp({ reposDir });
  });
  afterAll(() => t.close());

  it('lists the local git host as installation 1, serving SVC_REPOS_DIR', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/installations',
      headers: bearer(t.workspaceKey),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      object: 'list',
      data: [{ object: 'installation', id: 1, kind: 'local', account: reposDir }],
      next_cursor: null,
    });
  });

  it('needs a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/installations' })).statusCode).toBe(401);
  });
});
