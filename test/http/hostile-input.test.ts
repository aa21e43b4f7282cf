/**
 * Input a hostile or broken client sends gets 400-class answers in the error envelope, never a
 * 500 and never Fastify's or Node's own body: NUL characters and lone surrogates anywhere, a URL
 * that is not valid percent-encoding, over-long path parameters, unknown routes, oversized
 * headers and broken HTTP framing. The last two never reach Fastify, so they go over a socket.
 */

import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir } from '../helpers/git';

describe('hostile input', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  let port: number;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/h', { 'x.js': 'x\n' });
    t = await createTestApp({
      reposDir,
      env: { SVC_REQUEST_TIMEOUT_MS: '4000', SVC_HEADERS_TIMEOUT_MS: '2000' },
    });
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/h') };
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  const expectEnvelope = (body: string, code: string) => {
    const parsed = JSON.parse(body);
    expect(parsed.error).toMatchObject({ code, request_id: expect.stringMatching(/^req_/) });
    expect(parsed.error.message).toEqual(expect.any(String));
  };

  it.each([
    ['a NUL in a path parameter', 'GET', '/api/v1/tasks/tsk_%00x', undefined, /^path/],
    ['a NUL in a query parameter', 'GET', '/api/v1/learnings?cursor=a%00b', undefined, /^query/],
    ['a NUL in a body string', 'POST', '/api/v1/learnings', '{"learning":"a\\u0000b"}', /^body\.learning/],
    [
      'a lone surrogate in a body string',
      'POST',
      '/api/v1/learnings',
      '{"learning":"a\\ud800b"}',
      /^body\.learning/,
    ],
    [
      'a lone low surrogate in a nested key',
      'POST',
      '/api/v1/learnings',
      '{"learning":"x","scope":{"\\udc00":1}}',
      /^body\.scope \(a key\)/,
    ],
  ] as const)(
    'refuses %s with 400 validation_failed naming where',
    async (_name, method, url, payload, where) => {
      const res = await t.app.inject({
        method,
        url,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBe(400);
      expectEnvelope(res.body, 'validation_failed');
      expect(res.json().error.message).toMatch(where);
    },
  );

  it('keeps well-formed text with astral characters', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/learnings',
      headers,
      payload: { learning: 'Deploys are 🚀 on Fridays only after review.' },
    });
    expect(res.statusCode).toBe(201);
  });

  it('answers a URL that is not valid percent-encoding in the envelope', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/tasks/%E0%A4%A`, { headers });
    expect(res.status).toBe(400);
    expectEnvelope(await res.text(), 'validation_failed');
  });

  it('answers an over-long path parameter with 400 and an unknown route with 404, in the envelope', async () => {
    const long = await fetch(`http://127.0.0.1:${port}/api/v1/tasks/${'x'.repeat(5000)}`, { headers });
    expect(long.status).toBe(400);
    expectEnvelope(await long.text(), 'validation_failed');
    const unknown = await fetch(`http://127.0.0.1:${port}/api/v1/nothing-here`, { headers });
    expect(unknown.status).toBe(404);
    expectEnvelope(await unknown.text(), 'not_found');
  });

  it('refuses an empty project_id on a new key with 400, minting nothing', async () => {
    for (const kind of ['workspace', 'project'] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(t.workspaceKey),
        payload: { name: 'empty project', kind, project_id: '' },
      });
      expect(res.statusCode, res.body).toBe(400);
      expectEnvelope(res.body, 'validation_failed');
    }
    const keys = await t.app.inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(t.workspaceKey) });
    expect(keys.json().data.map((k: { name: string }) => k.name)).not.toContain('empty project');
  });

  const raw = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  const split = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    return { status: Number(head.split(' ')[1]), body };
  };

  it('answers oversized headers with 431 in the envelope', async () => {
    const answer = split(
      await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expectEnvelope(answer.body, 'request_header_fields_too_large');
  });

  it('answers broken framing with 400 in the envelope', async () => {
    const answer = split(await raw('THIS IS NOT HTTP\r\n\r\n'));
    expect(answer.status).toBe(400);
    expectEnvelope(answer.body, 'validation_failed');
  });

  it('sets the request and headers timeouts it was configured with', () => {
    expect(t.app.server.requestTimeout).toBe(4000);
    expect(t.app.server.headersTimeout).toBe(2000);
  });
});
