/**
 * Path traversal and git option injection through the HTTP API: hostile repository names, commit
 * ids, file paths and skill file paths are 400 `validation_failed` naming the field, before
 * anything is created, and no git command obeys them (a canary file an `--output=` or
 * `--upload-pack=` would write never appears, and no repository outside SVC_REPOS_DIR is read).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projects, skillRevisions, tasks } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { gitIn, makeRepo } from '../helpers/git';

describe('hostile names, refs and paths', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  let root: string;
  let reposDir: string;
  let canary: string;
  let sha: string;

  beforeAll(async () => {
    // root/repos is SVC_REPOS_DIR; root/outside/secret is a real repository a `..` would reach.
    root = mkdtempSync(join(tmpdir(), 'svc-injection-'));
    reposDir = join(root, 'repos');
    mkdirSync(reposDir);
    makeRepo(root, 'outside/secret', { 'secret.txt': 'do not read\n' });
    const repo = makeRepo(reposDir, 'acme/app', { 'src/app.js': 'export const ok = 1;\n' });
    sha = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    canary = join(root, 'pwned');
    t = await createTestApp({ reposDir });
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/app') };
  });
  afterAll(() => t.close());

  const count = async (table: typeof projects | typeof tasks | typeof skillRevisions) =>
    (await t.services.db.orm.select().from(table)).length;

  /** Asserts a 400 validation_failed envelope whose message names `field`. */
  const expectRefused = (res: { statusCode: number; json(): unknown }, field: RegExp) => {
    expect(res.statusCode).toBe(400);
    const { error } = res.json() as { error: { code: string; message: string; request_id: string } };
    expect(error.code).toBe('validation_failed');
    expect(error.request_id).toMatch(/^req_/);
    expect(error.message).toMatch(field);
  };

  const hostileNames = () => [
    `--upload-pack=touch ${canary}`,
    `-x/y`,
    '../outside',
    '../../etc',
    '..',
    'acme/..',
    '../outside/secret',
    'outside/../../outside/secret',
    '/etc/passwd',
    `${root}/outside/secret`,
    'a/b/c',
    'acme/app\u0000',
    'acme\\..\\outside/secret',
    'acme/.git',
  ];

  it('refuses hostile repository names on project creation and creates nothing', async () => {
    const before = await count(projects);
    const listing = readdirSync(reposDir, { recursive: true }).sort();
    for (const fullName of hostileNames()) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/projects',
        headers: bearer(t.workspaceKey),
        payload: { name: 'x', repository: { full_name: fullName, installation_id: 1 } },
      });
      expectRefused(res, /full_name/);
    }
    expect(await count(projects)).toBe(before);
    expect(readdirSync(reposDir, { recursive: true }).sort()).toEqual(listing);
    expect(existsSync(canary)).toBe(false);
  });

  it('refuses hostile commit ids on review creation and starts nothing', async () => {
    const before = await count(tasks);
    const bad = [
      `--output=${canary}`,
      '-h',
      `--upload-pack=touch ${canary}`,
      'main',
      'HEAD~1',
      'a..b',
      `${sha.slice(0, 10)}..HEAD`,
      '../../etc/passwd',
      '/etc/passwd',
      `${sha}\n--output=${canary}`,
      'abc', // too short to be a commit id
    ];
    for (const value of bad) {
      for (const [field, payload] of [
        ['base', { base: value, head: sha }],
        ['head', { base: sha, head: value }],
      ] as const) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/reviews', headers, payload });
        expectRefused(res, new RegExp(field));
      }
    }
    expect(await count(tasks)).toBe(before);
    expect(existsSync(canary)).toBe(false);
  });

  it('takes a real commit id, full or abbreviated (the grammar is not a blanket refusal)', async () => {
    for (const id of [sha, sha.slice(0, 12)]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/reviews',
        headers: { ...headers, 'idempotency-key': `ok-${id}` },
        payload: { base: id, head: id },
      });
      expect(res.statusCode, res.body).toBe(202);
    }
  });

  it('refuses hostile file paths when reading a diff', async () => {
    for (const path of [
      '../../outside/secret/secret.txt',
      '/etc/passwd',
      'src/../../secret.txt',
      '..\\..\\secret.txt',
      'a//b',
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/review-results/rvr_x/diff?path=${encodeURIComponent(path)}`,
        headers,
      });
      expectRefused(res, /path/);
    }
  });

  it('refuses hostile skill file paths and imports nothing', async () => {
    const before = await count(skillRevisions);
    for (const path of [
      '../escape.md',
      '../../../../tmp/pwned',
      '/etc/passwd',
      'rules/../../x.yml',
      'rules\\..\\..\\x.yml',
      `--output=${canary}`,
      'rules/\u0000x.yml',
      'rules//x.yml',
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/skill-imports',
        headers,
        payload: { skill_id: 'house-style', files: { 'SKILL.md': 'x', [path]: 'x' } },
      });
      expectRefused(res, /files/);
    }
    expect(await count(skillRevisions)).toBe(before);
    expect(existsSync(canary)).toBe(false);
  });
});
