/**
 * Every answer says `X-Content-Type-Options: nosniff` (API successes and errors, unknown paths,
 * health, metrics, the OpenAPI document, webhooks, the console, MCP, and the refusals Node's HTTP
 * parser makes before Fastify), and the answer carrying a new key says `Cache-Control: no-store`.
 * The document declares both where they are sent (the response contract checks each answer here
 * against it when the app closes).
 */
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { deliver, WEBHOOK_SECRET } from '../helpers/webhooks';

describe('security headers', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET } });
  });
  afterAll(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  it.each([
    ['an API success', '/api/v1/keys', true, 200],
    ['an API error (no key)', '/api/v1/keys', false, 401],
    ['a validation error', '/api/v1/keys?limit=0x10', true, 400],
    ['an unknown path', '/api/v1/nowhere', false, 404],
    ['a URL that is not valid percent-encoding', '/api/v1/keys/%E0%A4%A', true, 400],
    ['health', '/healthz', false, 200],
    ['metrics', '/metrics', false, 200],
    ['the OpenAPI document', '/api/v1/openapi.json', false, 200],
    ['the console', '/', false, 200],
    ['a console client route', '/findings', false, 200],
  ])('sends nosniff on %s', async (_what, url, withKey, status) => {
    const res = await get(url, withKey ? bearer(t.workspaceKey) : {});
    expect(res.statusCode).toBe(status);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends nosniff on webhook acknowledgements and refusals', async () => {
    const accepted = await deliver(t.app, { event: 'ping', payload: { zen: 'x' } });
    expect(accepted.statusCode).toBe(202);
    expect(accepted.headers['x-content-type-options']).toBe('nosniff');
    const refused = await deliver(t.app, { event: 'ping', payload: { zen: 'x' }, signature: null });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends nosniff (and the request id) on MCP answers, which the transport writes itself', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: {
        ...bearer(t.workspaceKey),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it("sends nosniff on the refusals Node's HTTP parser makes before Fastify (431)", async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
    expect(answer.toLowerCase()).toContain('\r\nx-content-type-options: nosniff\r\n');
  });

  it('sends Cache-Control: no-store with a new key, and not with the key list', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'ci' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().secret).toEqual(expect.any(String));
    expect(created.headers['cache-control']).toBe('no-store');
    const listed = await get('/api/v1/keys', bearer(t.workspaceKey));
    expect(listed.headers['cache-control']).toBeUndefined();
  });

  it('sends no-store on an idempotent replay of the new key too', async () => {
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: { ...bearer(t.workspaceKey), 'idempotency-key': 'security-headers-replay' },
        payload: { name: 'replayed' },
      });
    await send();
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['cache-control']).toBe('no-store');
  });

  it('declares both in the OpenAPI document', async () => {
    const doc = (await get('/api/v1/openapi.json')).json();
    const created = doc.paths['/api/v1/keys'].post.responses['201'];
    expect(Object.keys(created.headers)).toEqual(
      expect.arrayContaining(['Cache-Control', 'X-Content-Type-Options']),
    );
    expect(doc.paths['/api/v1/keys'].get.responses['200'].headers['Cache-Control']).toBeUndefined();
    expect(doc.components.responses.Error404.headers['X-Content-Type-Options']).toBeDefined();
    expect(doc.paths['/healthz'].get.responses['200'].headers['X-Content-Type-Options']).toBeDefined();
    expect(doc.components.headers.ContentTypeOptions.schema).toEqual({ type: 'string', enum: ['nosniff'] });
  });
});
