/**
 * The GitHub webhook receiver: signatures over the raw bytes, rejections counted and never
 * stored, deduplication by X-GitHub-Delivery, an acknowledgement that processes nothing, and
 * the `webhook` task kind that does the processing in a worker.
 */
import { randomUUID } from 'node:crypto';
import { count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunFailure } from '../../src/core/failures';
import { Worker } from '../../src/engine/worker';
import { registerWebhookHandler } from '../../src/github/webhooks/registry';
import { checkSignature, signPayload, verifySignature } from '../../src/github/webhooks/signature';
import type { Services } from '../../src/operations/services';
import { newId } from '../../src/storage/ids';
import { projects, runs, tasks, webhookDeliveries } from '../../src/storage/schema';
import { bearer, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { deliver, WEBHOOK_PATH, WEBHOOK_SECRET, webhookExamples } from '../helpers/webhooks';

const ENV = { GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET, SVC_POLL_MS: '100', SVC_HEARTBEAT_MS: '500' };

/** What the receiver stored, and how many refusals `/metrics` reports (which writes the tally first). */
async function tableCounts(t: TestApp) {
  const n = async (table: typeof webhookDeliveries | typeof tasks) =>
    (await t.services.db.orm.select({ n: count() }).from(table))[0]?.n ?? 0;
  const refused = [...(await rejectionMetric(t)).matchAll(/^svc_webhook_rejections_total\{[^}]*\} (\d+)$/gm)];
  return {
    deliveries: await n(webhookDeliveries),
    rejections: refused.reduce((sum, [, value]) => sum + Number(value), 0),
    tasks: await n(tasks),
  };
}

async function rejectionMetric(t: TestApp): Promise<string> {
  return (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
}

/** Starts a worker and waits until no `webhook` run is pending or running. */
async function processAll(services: Services, timeoutMs = 50_000): Promise<void> {
  const worker = new Worker(services.engine, { concurrency: 4, sweeper: false });
  await worker.start();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await services.db.rows<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM runs WHERE kind = 'webhook' AND status IN ('pending', 'running')`,
      );
      if (Number(row?.n) === 0) return;
      if (Date.now() > deadline) throw new Error(`webhook runs still active after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await worker.stop();
  }
}

async function deliveryRow(services: Services, id: string) {
  const [row] = await services.db.orm.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row;
}

async function runOf(services: Services, taskId: string) {
  const [run] = await services.db.orm.select().from(runs).where(eq(runs.taskId, taskId));
  return run;
}

describe('webhook signatures', () => {
  const vectorSecret = "It's a Secret to Everybody";
  const vectorSignature = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it("matches GitHub's published vector", () => {
    expect(signPayload(vectorSecret, 'Hello, World!')).toBe(vectorSignature);
    expect(verifySignature(vectorSecret, Buffer.from('Hello, World!'), vectorSignature)).toBe(true);
    expect(
      verifySignature(
        vectorSecret,
        'Hello, World!',
        vectorSignature.toUpperCase().replace('SHA256', 'sha256'),
      ),
    ).toBe(true);
  });

  it('names what is wrong with a bad signature', () => {
    expect(checkSignature(vectorSecret, 'Hello, World!', undefined)).toBe('signature_missing');
    expect(checkSignature(vectorSecret, 'Hello, World!', '')).toBe('signature_missing');
    expect(checkSignature(vectorSecret, 'Hello, World!', 'sha1=0123')).toBe('signature_malformed');
    expect(checkSignature(vectorSecret, 'Hello, World!', `${vectorSignature}00`)).toBe('signature_malformed');
    expect(checkSignature(vectorSecret, 'Hello, World?', vectorSignature)).toBe('signature_mismatch');
    expect(checkSignature('another secret', 'Hello, World!', vectorSignature)).toBe('signature_mismatch');
  });

  it('accepts any of the secrets given while one is rotated, and no empty secret', () => {
    expect(checkSignature(['the new one', vectorSecret], 'Hello, World!', vectorSignature)).toBeNull();
    expect(checkSignature([vectorSecret, 'the new one'], 'Hello, World!', vectorSignature)).toBeNull();
    expect(checkSignature(['the new one', 'an older one'], 'Hello, World!', vectorSignature)).toBe(
      'signature_mismatch',
    );
    expect(checkSignature(['', ''], '', signPayload('', ''))).toBe('signature_mismatch');
  });
});

describe('webhook secret rotation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { ...ENV, GITHUB_WEBHOOK_SECRET: 'rotated-in', GITHUB_WEBHOOK_SECRET_PREVIOUS: WEBHOOK_SECRET },
    });
  });
  afterAll(() => t?.close());

  it('takes deliveries signed with the new secret and with the one it replaces, and no other', async () => {
    const body = '{"zen":"x"}';
    for (const secret of ['rotated-in', WEBHOOK_SECRET]) {
      const res = await deliver(t.app, {
        event: 'ping',
        payload: body,
        signature: signPayload(secret, body),
      });
      expect(res.statusCode, secret).toBe(202);
    }
    const res = await deliver(t.app, { event: 'ping', payload: body, signature: signPayload('stale', body) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toContain('GITHUB_WEBHOOK_SECRET_PREVIOUS');
  });
});

describe.each(DATABASE_KINDS)('webhook receiver on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ kind, env: ENV });
  });
  afterAll(() => t?.close());

  it.each([
    ['a missing signature', null, 'signature_missing'],
    ['a malformed signature', 'sha256=xyz', 'signature_malformed'],
    [
      'a signature made with another secret',
      signPayload('not the secret', '{"zen":"x"}'),
      'signature_mismatch',
    ],
  ])('refuses %s with 401, stores nothing and counts the rejection', async (_what, signature, reason) => {
    const before = await tableCounts(t);
    const res = await deliver(t.app, { event: 'ping', payload: '{"zen":"x"}', signature });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: { code: 'unauthenticated', request_id: expect.any(String) } });
    const after = await tableCounts(t);
    expect(after).toEqual({ ...before, rejections: before.rejections + 1 });
    const metric = await rejectionMetric(t);
    expect(metric).toMatch(new RegExp(`svc_webhook_rejections_total\\{reason="${reason}"\\} 1\\b`));
  });

  it('refuses a body signed before it was altered', async () => {
    const body = '{"zen":"Design for failure."}';
    const res = await deliver(t.app, {
      event: 'ping',
      payload: body.replace('failure', 'success'),
      signature: signPayload(WEBHOOK_SECRET, body),
    });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a signed body that is not a JSON object, and one without a delivery id', async () => {
    const before = await tableCounts(t);
    for (const payload of ['not json', '[1,2]', '']) {
      const res = await deliver(t.app, { event: 'ping', payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error.code).toBe('invalid_json');
    }
    const body = '{}';
    const noId = await t.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-hub-signature-256': signPayload(WEBHOOK_SECRET, body),
      },
      payload: body,
    });
    expect(noId.statusCode).toBe(400);
    expect(noId.json().error.code).toBe('validation_failed');
    const after = await tableCounts(t);
    expect(after).toEqual({ ...before, rejections: before.rejections + 4 });
  });

  it('verifies the raw bytes: odd spacing and unicode escapes are accepted as sent', async () => {
    const body = '{ "zen" : "Keep it logically awesome. \\u00e9",\n  "hook_id": 1 ,"extra": [ ] }';
    const res = await deliver(t.app, { event: 'ping', payload: body });
    expect(res.statusCode).toBe(202);
    const row = await deliveryRow(t.services, res.json().delivery_id);
    expect(row?.payload).toEqual({ zen: 'Keep it logically awesome. é', hook_id: 1, extra: [] });
  });

  it("accepts GitHub's form encoding (payload=…), signed over the form body", async () => {
    const form = new URLSearchParams({ payload: JSON.stringify({ action: 'created', zen: 'x' }) }).toString();
    const res = await deliver(t.app, {
      event: 'ping',
      payload: form,
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.statusCode).toBe(202);
    expect((await deliveryRow(t.services, res.json().delivery_id))?.action).toBe('created');
  });

  it("accepts a delivery larger than the API's own body limit (GitHub sends up to 25 MB)", async () => {
    const payload = { action: 'created', zen: 'x'.repeat(2 * 1024 * 1024) };
    const res = await deliver(t.app, { event: 'gollum', payload });
    expect(res.statusCode).toBe(202);
  });

  it('acknowledges with the delivery and its task, and processes nothing inline', async () => {
    const deliveryId = randomUUID();
    const res = await deliver(t.app, {
      event: 'pull_request',
      deliveryId,
      payload: { action: 'opened', installation: { id: 4242 }, repository: { full_name: 'acme/x' } },
    });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toEqual({ delivery_id: deliveryId, task_id: expect.stringMatching(/^tsk_/) });
    const row = await deliveryRow(t.services, deliveryId);
    expect(row).toMatchObject({
      event: 'pull_request',
      action: 'opened',
      installationId: 4242,
      repository: 'acme/x',
      status: 'received',
      reason: null,
      taskId: body.task_id,
      processedAt: null,
    });
    const run = await runOf(t.services, body.task_id);
    expect(run).toMatchObject({ kind: 'webhook', status: 'pending', input: { delivery_id: deliveryId } });
  });

  it('takes any JSON object: missing fields never crash the acknowledgement', async () => {
    for (const payload of [{}, { action: 42, installation: 'x', repository: { owner: null } }]) {
      const res = await deliver(t.app, { event: 'weird_future_event', payload });
      expect(res.statusCode).toBe(202);
      expect(await deliveryRow(t.services, res.json().delivery_id)).toMatchObject({
        action: null,
        installationId: null,
        repository: null,
      });
    }
  });

  it('answers a redelivery 200 duplicate and starts nothing, even when sent concurrently', async () => {
    const deliveryId = randomUUID();
    const send = () => deliver(t.app, { event: 'star', deliveryId, payload: { action: 'created' } });
    const first = await send();
    expect(first.statusCode).toBe(202);
    const before = await tableCounts(t);
    const again = await Promise.all([send(), send(), send()]);
    for (const res of again) {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ duplicate: true, delivery_id: deliveryId, task_id: first.json().task_id });
    }
    expect(await tableCounts(t)).toEqual(before);

    const racers = await Promise.all(
      [1, 2, 3, 4].map(() => deliver(t.app, { event: 'star', deliveryId: 'race', payload: {} })),
    );
    expect(racers.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 202]);
    // Delivery and task commit together, so even a racer that lost names the winner's task.
    expect(new Set(racers.map((r) => r.json().task_id))).toEqual(
      new Set([racers.find((r) => r.statusCode === 202)?.json().task_id]),
    );
    const [n] = await t.services.db.rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM tasks WHERE input->>'delivery_id' = 'race'`,
    );
    expect(Number(n?.n)).toBe(1);
  });

  it("stores nothing when the task cannot be created, so GitHub's redelivery is processed", async () => {
    const deliveryId = randomUUID();
    const before = await tableCounts(t);
    // A real fault inside the acknowledgement's transaction: the runs table is gone for a moment.
    await t.services.db.rows(sql`ALTER TABLE runs RENAME TO runs_away`);
    let failed: Awaited<ReturnType<typeof deliver>>;
    try {
      failed = await deliver(t.app, { event: 'star', deliveryId, payload: { action: 'created' } });
    } finally {
      await t.services.db.rows(sql`ALTER TABLE runs_away RENAME TO runs`);
    }
    expect(failed.statusCode).toBe(500);
    expect(await deliveryRow(t.services, deliveryId)).toBeUndefined();
    expect(await tableCounts(t)).toEqual(before);

    const redelivered = await deliver(t.app, { event: 'star', deliveryId, payload: { action: 'created' } });
    expect(redelivered.statusCode).toBe(202);
    expect(await runOf(t.services, redelivered.json().task_id)).toMatchObject({ status: 'pending' });
  });

  it('tallies a flood of refusals into one row per reason and hour', async () => {
    const before = await tableCounts(t);
    const refused = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        deliver(t.app, { event: 'push', deliveryId: `flood-${i}`, payload: '{}', signature: 'sha256=00' }),
      ),
    );
    expect(refused.every((r) => r.statusCode === 401)).toBe(true);
    expect(await tableCounts(t)).toEqual({ ...before, rejections: before.rejections + 120 });
    const rows = await t.services.db.rows<{ count: number; last_event: string }>(
      sql`SELECT count, last_event FROM webhook_rejections WHERE reason = 'signature_malformed'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ last_event: 'push' });
    expect(Number(rows[0]?.count)).toBeGreaterThanOrEqual(120);
  });

  it('keeps refusal counts while the database cannot take them, and writes them later', async () => {
    const before = await tableCounts(t);
    await t.services.db.rows(sql`ALTER TABLE webhook_rejections RENAME TO rejections_away`);
    try {
      const res = await deliver(t.app, { event: 'ping', payload: '{}', signature: null });
      expect(res.statusCode).toBe(401);
      // The scrape fails while the table is gone: /metrics answers an error, not a wrong count.
      expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(500);
    } finally {
      await t.services.db.rows(sql`ALTER TABLE rejections_away RENAME TO webhook_rejections`);
    }
    expect(await tableCounts(t)).toEqual({ ...before, rejections: before.rejections + 1 });
  });

  it('answers 503 webhooks_not_configured without GITHUB_WEBHOOK_SECRET', async () => {
    const env = t.services.config.env;
    delete env.GITHUB_WEBHOOK_SECRET;
    try {
      const before = await tableCounts(t);
      const res = await deliver(t.app, { event: 'ping', payload: {} });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toMatchObject({
        code: 'webhooks_not_configured',
        message: expect.stringContaining('GITHUB_WEBHOOK_SECRET'),
      });
      expect(await tableCounts(t)).toEqual({ ...before, rejections: before.rejections + 1 });
    } finally {
      env.GITHUB_WEBHOOK_SECRET = WEBHOOK_SECRET;
    }
  });

  it('needs no bearer key and is not an operation of the declaration', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).not.toContain(WEBHOOK_PATH);
  });
});

describe('webhook processing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
  });
  afterAll(() => t?.close());

  const checkRun = {
    action: 'created',
    installation: { id: 77 },
    repository: { full_name: 'Acme/Widgets' },
  };

  it('resolves installation and project for a handler, and records each outcome on the delivery', async () => {
    const seen: { project: string | null; installation: number | null }[] = [];
    const unregister = registerWebhookHandler('check_run.created', async (ctx) => {
      seen.push({ project: ctx.project?.id ?? null, installation: ctx.installation?.id ?? null });
      if (ctx.payload.fail) throw new RunFailure('tool_failed', 'the handler could not reach GitHub');
      return { status: 'processed', summary: 'checked' };
    });
    try {
      const send = async (payload: Record<string, unknown>) => {
        const res = await deliver(t.app, { event: 'check_run', payload });
        expect(res.statusCode).toBe(202);
        return res.json() as { delivery_id: string; task_id: string };
      };
      const outcome = async (sent: { delivery_id: string; task_id: string }) => {
        await processAll(t.services);
        const row = await deliveryRow(t.services, sent.delivery_id);
        const run = await runOf(t.services, sent.task_id);
        return {
          status: row?.status,
          reason: row?.reason,
          run: run?.status,
          code: run?.error?.code,
          gaps: run?.gaps,
        };
      };

      expect(await outcome(await send({ ...checkRun, action: 'completed' }))).toMatchObject({
        status: 'ignored',
        reason: 'no handler for event check_run.completed',
        run: 'completed',
        gaps: [
          {
            code: 'webhook_ignored',
            message: 'check_run.completed: no handler for event check_run.completed',
          },
        ],
      });
      expect(await outcome(await send({ action: 'created' }))).toMatchObject({
        status: 'ignored',
        reason: 'the check_run delivery names no installation',
        run: 'completed',
      });
      expect(await outcome(await send(checkRun))).toMatchObject({
        status: 'ignored',
        reason: 'unknown installation 77',
        run: 'completed',
      });

      const created = await deliver(t.app, {
        event: 'installation',
        payload: {
          action: 'created',
          installation: { id: 77, account: { login: 'acme', type: 'Organization' } },
        },
      });
      expect(created.statusCode).toBe(202);
      // The installation is recorded by its own run: finish it before the next delivery is judged.
      await processAll(t.services);
      expect(await outcome(await send(checkRun))).toMatchObject({
        status: 'ignored',
        reason: 'repository Acme/Widgets is not a project',
      });

      const projectId = newId('project');
      await t.services.db.orm.insert(projects).values({
        id: projectId,
        workspaceId: t.workspaceId,
        name: 'widgets',
        repoFullName: 'acme/widgets',
        installationId: 77,
      });
      expect(await outcome(await send(checkRun))).toMatchObject({
        status: 'processed',
        reason: null,
        run: 'completed',
        gaps: [],
      });
      expect(seen).toEqual([{ project: projectId, installation: 77 }]);

      expect(await outcome(await send({ ...checkRun, fail: true }))).toMatchObject({
        status: 'failed',
        reason: 'tool_failed: the handler could not reach GitHub',
        run: 'failed',
        code: 'tool_failed',
      });

      await deliver(t.app, {
        event: 'installation',
        payload: { action: 'suspend', installation: { id: 77 } },
      });
      // Likewise the suspension (under load the two runs could otherwise be taken in either order).
      await processAll(t.services);
      expect(await outcome(await send(checkRun))).toMatchObject({
        status: 'ignored',
        reason: 'installation 77 is suspended',
      });
    } finally {
      unregister();
    }
  });

  it('keeps installations in step: created, repositories added and removed, deleted', async () => {
    const id = 9001;
    const installation = { id, account: { login: 'octo-org', type: 'Organization' } };
    const list = async () =>
      (
        await t.app.inject({ method: 'GET', url: '/api/v1/installations', headers: bearer(t.workspaceKey) })
      ).json().data as { id: number; kind: string; account: string }[];

    await deliver(t.app, {
      event: 'installation',
      payload: { action: 'created', installation, repositories: [{ full_name: 'octo-org/a' }] },
    });
    await processAll(t.services);
    expect(await list()).toContainEqual({ object: 'installation', id, kind: 'github', account: 'octo-org' });

    await deliver(t.app, {
      event: 'installation_repositories',
      payload: {
        action: 'added',
        installation,
        repositories_added: [{ full_name: 'octo-org/b' }, { full_name: 'octo-org/a' }],
        repositories_removed: [],
      },
    });
    await processAll(t.services);
    await deliver(t.app, {
      event: 'installation_repositories',
      payload: { action: 'removed', installation, repositories_removed: [{ full_name: 'octo-org/a' }] },
    });
    await processAll(t.services);
    const [row] = await t.services.db.rows<{ repositories: string[] }>(
      sql`SELECT repositories FROM installations WHERE id = ${id}`,
    );
    expect(row?.repositories).toEqual(['octo-org/b']);

    await deliver(t.app, { event: 'installation', payload: { action: 'deleted', installation } });
    await processAll(t.services);
    expect((await list()).map((i) => i.id)).not.toContain(id);
  });
});

describe('every @octokit/webhooks-examples payload', () => {
  let t: TestApp;
  const examples = webhookExamples();
  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
  });
  afterAll(() => t?.close());

  it('has examples to send', () => {
    expect(examples.length).toBeGreaterThan(300);
    expect(new Set(examples.map((e) => e.event)).size).toBeGreaterThan(50);
  });

  it('is acknowledged 202, then processed by a worker with every run ending by name', async () => {
    const sent: { name: string; deliveryId: string; taskId: string }[] = [];
    const started = performance.now();
    for (const example of examples) {
      const res = await deliver(t.app, { event: example.event, payload: example.payload });
      expect(res.statusCode, `${example.name}: ${res.body}`).toBe(202);
      const body = res.json() as { delivery_id: string; task_id: string };
      sent.push({ name: example.name, deliveryId: body.delivery_id, taskId: body.task_id });
    }
    const ackMs = (performance.now() - started) / examples.length;
    const [received] = await t.services.db.rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'received'`,
    );
    expect(Number(received?.n)).toBe(examples.length);

    const processing = performance.now();
    await processAll(t.services);
    const processMs = (performance.now() - processing) / examples.length;

    const rows = await t.services.db.rows<{
      status: string;
      code: string | null;
      delivery: string;
      reason: string | null;
    }>(
      sql`SELECT r.status, r.error->>'code' AS code, d.status AS delivery, d.reason
          FROM runs r JOIN webhook_deliveries d ON d.task_id = r.task_id WHERE r.kind = 'webhook'`,
    );
    expect(rows).toHaveLength(examples.length);
    const outcomes: Record<string, number> = {};
    for (const r of rows) outcomes[r.delivery] = (outcomes[r.delivery] ?? 0) + 1;
    // A benchmark-ish line, not an assertion: in-process inject on PGlite.
    console.log(
      `webhooks: ${examples.length} examples, mean ack ${ackMs.toFixed(1)} ms, mean processing ${processMs.toFixed(1)} ms, outcomes ${JSON.stringify(outcomes)}`,
    );
    for (const s of sent) {
      const run = await runOf(t.services, s.taskId);
      const named =
        run?.status === 'completed' || (run?.status === 'failed' && run.error?.code !== 'unknown');
      expect(named, `${s.name}: ${run?.status} ${JSON.stringify(run?.error)}`).toBe(true);
    }
    expect(rows.filter((r) => r.delivery === 'received')).toEqual([]);
    expect(rows.filter((r) => r.code === 'unknown')).toEqual([]);
    // Without the lead's pull request handlers most deliveries are ignored, each with a reason.
    expect(rows.filter((r) => r.delivery === 'ignored' && !r.reason)).toEqual([]);

    const installations = (
      await t.app.inject({ method: 'GET', url: '/api/v1/installations', headers: bearer(t.workspaceKey) })
    ).json().data;
    expect(installations[0]).toMatchObject({ id: 1, kind: 'local' });
    expect(installations).toContainEqual({
      object: 'installation',
      id: 957387,
      kind: 'github',
      account: 'Codertocat',
    });
  }, 60_000);
});
