/**
 * The web console as `svc serve` serves it: index.html at `/` and at every client route, the
 * hashed assets with their types and a year of immutable caching, a strict CSP and no inline
 * script, the API's and operators' paths never answered with the console, a clear 503 when the
 * console is not built, and the first page's JavaScript under its 200 KB (gzip) budget.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script, no declarations
import { BUDGET_BYTES, firstPageJs } from '../../scripts/web-size.mjs';
import { CONSOLE_DIST, mountConsole } from '../../src/http/console';
import { bearer, createTestApp, type TestApp } from '../helpers/app';

const built = existsSync(join(CONSOLE_DIST, 'index.html'));
const NOT_BUILT = `web/dist is not built (run npm run build:web; npm install does it): ${CONSOLE_DIST}`;

describe('the web console in the app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  it('is built (npm install runs npm run build:web)', () => {
    expect(built, NOT_BUILT).toBe(true);
  });

  it('serves index.html at / with a strict CSP and no caching', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toContain('<div id="app">');
    // No inline script: every <script> names its file.
    const scripts = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/assets\//);
      expect(body?.trim()).toBe('');
    }
    expect(res.body).not.toMatch(/\bstyle="/);
  });

  it('serves index.html for client routes, with or without a query', async () => {
    const root = await get('/');
    for (const url of [
      '/projects/prj_123',
      '/projects/prj_123/findings?status=open&severity=P0',
      '/projects/prj_123/reviews/tsk_1',
      '/projects/prj_123/reviewers/security.v2',
      '/projects/prj_123/dashboards',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.body, url).toBe(root.body);
    }
  });

  it('serves the hashed assets with their types, cached as immutable', async () => {
    const index = (await get('/')).body;
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(index)?.[1];
    const css = /href="(\/assets\/[^"]+\.css)"/.exec(index)?.[1];
    expect(js).toBeDefined();
    expect(css).toBeDefined();
    const script = await get(js as string);
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const style = await get(css as string);
    expect(style.statusCode).toBe(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(style.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers a missing asset 404, not with the app', async () => {
    const res = await get('/assets/index-gone.js');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).not.toContain('text/html');
    const top = await get('/favicon.ico');
    expect(top.statusCode).toBe(404);
  });

  it('never answers an API or operator path with the console', async () => {
    for (const url of [
      '/api/v1/nope',
      '/api/v1/projects/prj_x/nothing-here',
      '/api',
      '/api/',
      '/api/v2/projects',
      '/mcp/anything',
      '/webhooks/github',
      '/openapi.json',
      '/healthz/extra',
      '/metrics/x',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toContain('application/json');
      expect(res.json().error.code, url).toBe('not_found');
    }
    // The real routes still answer as themselves.
    const unauth = await get('/api/v1/projects');
    expect(unauth.statusCode).toBe(401);
    expect(unauth.json().error.code).toBe('unauthenticated');
    const projects = await get('/api/v1/projects', bearer(t.workspaceKey));
    expect(projects.statusCode).toBe(200);
    expect(projects.json().object).toBe('list');
    expect((await get('/healthz')).json().status).toBe('ok');
    expect((await get('/metrics')).statusCode).toBe(200);
    expect((await get('/api/v1/openapi.json')).json().openapi).toBe('3.1.0');
    // Writes are not the console's either.
    const post = await t.app.inject({ method: 'POST', url: '/projects/prj_1', payload: {} });
    expect(post.statusCode).toBe(404);
    expect(post.json().error.code).toBe('not_found');
  });

  it('keeps the first page under its JavaScript budget (200 KB gzipped)', () => {
    expect(built, NOT_BUILT).toBe(true);
    const measured = firstPageJs() as { gzip: number; files: { src: string; gzip: number }[] };
    expect(measured.files.length).toBeGreaterThan(0);
    expect(measured.gzip).toBeLessThan(BUDGET_BYTES);
  });
});

describe('the web console handler', () => {
  it('answers 503 naming npm run build:web when the console is not built', async () => {
    const app = Fastify();
    await mountConsole(app, { root: join(mkdtempSync(join(tmpdir(), 'svc-console-')), 'dist') });
    for (const url of ['/', '/projects/prj_1']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(503);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body).toContain('npm run build:web');
    }
    await app.close();
  });

  it('serves only files inside its directory', async () => {
    const base = mkdtempSync(join(tmpdir(), 'svc-console-'));
    const root = join(base, 'dist');
    mkdirSync(join(root, 'assets'), { recursive: true });
    writeFileSync(join(root, 'index.html'), '<!doctype html><div id="app"></div>');
    writeFileSync(join(root, 'assets', 'a-1.js'), 'export {}');
    writeFileSync(join(base, 'secret.txt'), 'not for the browser');
    const app = Fastify();
    await mountConsole(app, { root });
    for (const url of [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/%00.js',
    ]) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.body, url).not.toContain('not for the browser');
    }
    expect((await app.inject({ method: 'GET', url: '/assets/a-1.js' })).body).toBe('export {}');
    await app.close();
  });
});
