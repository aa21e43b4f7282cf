/**
 * JSON nested deeper than JSON_NESTING_LIMIT is a 400 validation_failed in the error envelope,
 * counted before parsing: a validly signed webhook delivery, an API body and an MCP message of
 * 10,000 levels used to overflow the stack and answer 500. Nesting up to the limit, and brackets
 * inside strings, are not refused.
 */
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_NESTING_LIMIT, nestsDeeperThan } from '../../src/core/json-nesting';
import { webhookDeliveries } from '../../src/storage/schema';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { deliver, WEBHOOK_SECRET } from '../helpers/webhooks';

/** `{"zen":"deep","n":[[[…0…]]]}`: an object holding `levels - 1` nested arrays. */
const nested = (levels: number) => `{"zen":"deep","n":${'['.repeat(levels - 1)}0${']'.repeat(levels - 1)}}`;

describe('nestsDeeperThan', () => {
  it('counts arrays and objects opened inside one another', () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan('[{"a":[1]},{"b":[2]},[3]]', 3)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(`{"s":"${'['.repeat(100)}"}`, 1)).toBe(false);
    expect(nestsDeeperThan(`{"s":"a\\"${'{'.repeat(100)}"}`, 1)).toBe(false);
    expect(nestsDeeperThan(`{"s":"a\\\\","t":${'['.repeat(3)}]]]}`, 3)).toBe(true);
  });
});

describe('deep JSON over HTTP', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET } });
  });
  afterAll(() => t.close());

  const deliveries = async () =>
    (await t.services.db.orm.select({ n: count() }).from(webhookDeliveries))[0]?.n;

  it('refuses a validly signed delivery nested 10,000 levels deep with 400 validation_failed', async () => {
    const before = await deliveries();
    const res = await deliver(t.app, { event: 'ping', payload: nested(10_000) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining(`at most ${JSON_NESTING_LIMIT}`),
      request_id: expect.stringMatching(/^req_/),
    });
    expect(await deliveries()).toBe(before);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/svc_webhook_rejections_total\{reason="body_too_deep"\} 1\b/);
  });

  it('refuses the same in GitHub form encoding', async () => {
    const res = await deliver(t.app, {
      event: 'ping',
      payload: new URLSearchParams({ payload: nested(10_000) }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
  });

  it('accepts a delivery nested exactly to the limit', async () => {
    const res = await deliver(t.app, { event: 'ping', payload: nested(JSON_NESTING_LIMIT) });
    expect(res.statusCode).toBe(202);
  });

  it('refuses an API body nested 10,000 levels deep with 400 validation_failed', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/learnings',
      headers: { ...bearer(t.workspaceKey), 'content-type': 'application/json' },
      payload: `{"learning":"x","scope":${nested(10_000)}}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('nests arrays and objects more than'),
    });
  });

  it('refuses one level over the limit, and still reads brackets inside strings as text', async () => {
    const over = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { ...bearer(t.workspaceKey), 'content-type': 'application/json' },
      payload: nested(JSON_NESTING_LIMIT + 1),
    });
    expect(over.statusCode).toBe(400);
    expect(over.json().error.message).toContain('nests arrays');
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { ...bearer(t.workspaceKey), 'content-type': 'application/json' },
      payload: `{"name":"${'['.repeat(10_000)}"}`,
    });
    // Judged by the operation's schema (a name that long), not by the nesting limit.
    expect(text.json().error?.message ?? '').not.toContain('nests arrays');
  });

  it('refuses an MCP message nested 10,000 levels deep with 400 validation_failed', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: {
        ...bearer(t.workspaceKey),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested(10_000)}}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
  });
});
