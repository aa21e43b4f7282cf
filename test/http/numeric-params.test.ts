/**
 * Numbers in a query string are decimal digits only: `0x10`, `1e1`, ` 5`, `+5` and `5.0` are
 * refused with 400 validation_failed, not read as 16, 10 or 5 (one value, one spelling).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir } from '../helpers/git';

describe('numeric query parameters', () => {
  let t: TestApp;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/numbers', { 'x.js': 'x\n' });
    t = await createTestApp({ reposDir });
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/numbers') };
  });
  afterAll(() => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url, headers });

  it.each(['0x10', '1e1', '%205', '+5', '%2B5', '5.0', '', '16abc'])(
    'refuses limit=%s with 400 validation_failed',
    async (spelling) => {
      const res = await get(`/api/v1/keys?limit=${spelling}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed' });
    },
  );

  it('accepts limit=16 and pages by it', async () => {
    const res = await get('/api/v1/keys?limit=16');
    expect(res.statusCode).toBe(200);
    expect(res.json().object).toBe('list');
  });

  it('still applies the range after the digits (limit=0 and limit=201 are 400)', async () => {
    expect((await get('/api/v1/keys?limit=0')).statusCode).toBe(400);
    expect((await get('/api/v1/keys?limit=201')).statusCode).toBe(400);
    expect((await get('/api/v1/keys')).statusCode).toBe(200);
  });

  it('holds for the other numeric parameters: pull request number and diff page size', async () => {
    expect((await get('/api/v1/pull-requests?number=0x1')).statusCode).toBe(400);
    const found = await get('/api/v1/pull-requests?number=7');
    expect(found.statusCode).toBe(200);
    expect(found.json().data).toEqual([]);
  });
});
