/**
 * Steering the ledger without the code host: a real review delivered to the local git host
 * creates findings; `POST /findings/{id}/events` dismisses and reopens them with the effect of a
 * `wontfix:` reply (status, reason, the check recomputed without a new run), later reviews honour
 * it, `GET /findings/{id}/events` reads the log oldest first with its actors, and the MCP tools
 * do the same. Wrong transitions are 409, another project's finding is 404. Both engines.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInProgress } from '../../src/automation/check';
import { type CommentEvent, onFindingThreadReply } from '../../src/automation/conversation';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { MCP_PATH } from '../../src/mcp/http';
import { pullRequests, tasks } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { commitFiles, gitIn, makeRepo, makeReposDir, openPullRequest } from '../helpers/git';

type CheckRecord = { id: string; head_sha: string; status: string; conclusion: string | null; title: string };
type CommentRecord = { id: string; path: string | null; body: string; in_reply_to: string | null };
type Finding = { id: string; rule: string; status: string; dismissed_reason: string | null };

const RUN_JS = 'export function run(req) {\n  return eval(req.query.code);\n}\n';
const LOG_JS = 'export function log(x) {\n  debugger;\n  return x;\n}\n';

describe.each(DATABASE_KINDS)('finding events on %s', (kind) => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let host: LocalCodeHost;
  let headers: Record<string, string>;
  let pinnedOtherProject: Record<string, string>;
  let pinnedHere: { headers: Record<string, string>; keyId: string };
  let mcp: Client;
  let reviewId: string;
  let evalFinding: Finding;
  let debugFinding: Finding;

  const head = () => gitIn(repo, ['rev-parse', 'feature']).trim();
  /** The latest record of each check on the local host, by id. */
  const checkAt = async (sha: string) => {
    const records = await host.localRecords<CheckRecord>('acme/shop', 'checks');
    return [...new Map(records.map((c) => [c.id, c])).values()].filter((c) => c.head_sha === sha);
  };
  const append = (id: string, payload: unknown, extra: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/findings/${id}/events`,
      headers: { ...headers, ...extra },
      payload: payload as object,
    });
  const eventsOf = async (id: string, as = headers) =>
    t.app.inject({ method: 'GET', url: `/api/v1/findings/${id}/events`, headers: as });
  const findingNow = async (id: string) =>
    (await t.app.inject({ method: 'GET', url: `/api/v1/findings/${id}`, headers })).json() as Finding;
  const taskCount = async () => (await t.services.db.orm.select().from(tasks)).length;

  async function review(payload: Record<string, unknown>, id?: string): Promise<Finding[]> {
    const started = await t.app.inject({
      method: 'POST',
      url: id ? `/api/v1/reviews/${id}/runs` : '/api/v1/reviews',
      headers,
      ...(id ? {} : { payload }),
    });
    expect(started.statusCode, started.body).toBe(202);
    const taskId = started.json().id as string;
    for (let i = 0; i < 400; i++) {
      const body = (await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${taskId}`, headers })).json();
      if (['completed', 'failed', 'canceled'].includes(body.run?.status)) {
        expect(body.run.status, JSON.stringify(body.run.error)).toBe('completed');
        reviewId = taskId;
        return body.findings;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`review ${taskId} did not finish`);
  }

  const callTool = async (name: string, args: Record<string, unknown>) =>
    (await mcp.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/shop', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(repo, 1, { 'src/run.js': RUN_JS, 'src/log.js': LOG_JS }, 'add the runner');
    openPullRequest(repo, 2, { 'src/debug.js': LOG_JS }, 'add a debug helper', 'quiet');
    makeRepo(reposDir, 'acme/other', { 'a.js': 'export const a = 1;\n' });
    t = await createTestApp({ kind, reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    const projectId = await createProject(t, 'acme/shop');
    const otherId = await createProject(t, 'acme/other');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    const mint = async (project: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(t.workspaceKey),
        payload: { name: `pinned to ${project}`, kind: 'project', project_id: project },
      });
      expect(res.statusCode).toBe(201);
      return { headers: bearer(res.json().secret), keyId: res.json().id as string };
    };
    pinnedOtherProject = (await mint(otherId)).headers;
    pinnedHere = await mint(projectId);
    const url = new URL(`${await t.app.listen({ port: 0, host: '127.0.0.1' })}${MCP_PATH}`);
    mcp = new Client({ name: 'finding-events-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: pinnedHere.headers } }),
    );
  });
  afterAll(async () => {
    await mcp?.close();
    await worker?.stop();
    await t?.close();
  });

  it('a review delivered to the code host opens findings and concludes action_required', async () => {
    const found = await review({ pr: 1, reviewers: ['security', 'correctness'], delivery: 'codehost' });
    evalFinding = found.find((f) => f.rule === 'security/code-injection') as Finding;
    debugFinding = found.find((f) => f.rule === 'correctness/debug-statement') as Finding;
    expect(evalFinding).toMatchObject({ status: 'open', severity: 'P0' });
    expect(debugFinding).toMatchObject({ status: 'open', severity: 'P2' });
    expect(await checkAt(head())).toEqual([
      expect.objectContaining({ conclusion: 'action_required', title: 'Reviewed: 1 P0, 1 P2 open' }),
    ]);
  });

  it('dismisses a finding: status, reason and the check recomputed without a new run', async () => {
    const before = await taskCount();
    const res = await append(
      evalFinding.id,
      { kind: 'dismissed', payload: { reason: '  only admins reach this handler ' } },
      { 'idempotency-key': `dismiss-eval-${kind}` },
    );
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      object: 'event',
      id: expect.stringMatching(/^evt_/),
      subject_type: 'finding',
      subject_id: evalFinding.id,
      kind: 'dismissed',
      payload: { reason: 'only admins reach this handler' },
      actor: expect.stringMatching(/^key_/),
      finding: {
        id: evalFinding.id,
        status: 'dismissed',
        dismissed_reason: 'only admins reach this handler',
      },
      check: { recomputed: true, head_sha: head(), conclusion: 'success', reason: null },
    });
    expect(Date.parse(body.finding.dismissed_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(await taskCount()).toBe(before);
    expect(await checkAt(head())).toEqual([
      expect.objectContaining({ status: 'completed', conclusion: 'success', title: 'Reviewed: 1 P2 open' }),
    ]);
    expect(await findingNow(evalFinding.id)).toMatchObject({ status: 'dismissed' });

    // The same key and body replay the first answer; a changed body under it is refused.
    const replay = await append(
      evalFinding.id,
      { kind: 'dismissed', payload: { reason: '  only admins reach this handler ' } },
      { 'idempotency-key': `dismiss-eval-${kind}` },
    );
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().id).toBe(body.id);
    const changed = await append(
      evalFinding.id,
      { kind: 'dismissed', payload: { reason: 'another reason' } },
      { 'idempotency-key': `dismiss-eval-${kind}` },
    );
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('idempotency_conflict');
  });

  it('refuses wrong transitions with 409 conflict and bad bodies with 400', async () => {
    const again = await append(evalFinding.id, { kind: 'dismissed', payload: { reason: 'twice' } });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/already dismissed/),
      details: { finding_id: evalFinding.id, status: 'dismissed' },
    });
    const reopenOpen = await append(debugFinding.id, { kind: 'reopened' });
    expect(reopenOpen.statusCode).toBe(409);
    expect(reopenOpen.json().error.message).toMatch(/only a dismissed finding can be reopened/);

    for (const payload of [
      { kind: 'dismissed' },
      { kind: 'dismissed', payload: { reason: '   ' } },
      { kind: 'dismissed', payload: {} },
      { kind: 'fixed', payload: { reason: 'x' } },
      { kind: 'dismissed', payload: { reason: 'x', extra: 1 } },
      { kind: 'reopened', occurred_at: '2020-01-01T00:00:00Z' },
    ]) {
      const res = await append(debugFinding.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect(await findingNow(debugFinding.id)).toMatchObject({ status: 'open' });
    const missing = await append('fnd_doesnotexist', { kind: 'dismissed', payload: { reason: 'x' } });
    expect(missing.statusCode).toBe(404);
    expect((await eventsOf('fnd_doesnotexist')).statusCode).toBe(404);
  });

  it("another project's key gets 404 and changes nothing", async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/findings/${debugFinding.id}/events`,
      headers: pinnedOtherProject,
      payload: { kind: 'dismissed', payload: { reason: 'not mine to dismiss' } },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
    expect((await eventsOf(evalFinding.id, pinnedOtherProject)).statusCode).toBe(404);
    expect(await findingNow(debugFinding.id)).toMatchObject({ status: 'open' });
  });

  it('a wontfix reply goes through the same disposition and lands in the same log', async () => {
    const thread = (await host.localRecords<CommentRecord>('acme/shop', 'comments')).find(
      (c) => c.path === 'src/log.js',
    );
    const reply: CommentEvent = {
      installationId: 1,
      repo: 'acme/shop',
      number: 1,
      body: 'wontfix: the debugger is stripped by the bundler',
      commentId: 'c-wontfix',
      senderType: 'User',
      senderLogin: 'octocat',
      inReplyTo: thread?.id ?? null,
      authorAssociation: 'OWNER',
    };
    const deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
    expect((await onFindingThreadReply(deps, reply)).outcome).toBe('dismissed');
    expect(await checkAt(head())).toEqual([expect.objectContaining({ title: 'Reviewed: no open findings' })]);
    // A second wontfix is answered on the thread, not applied twice.
    expect((await onFindingThreadReply(deps, { ...reply, commentId: 'c-again' })).outcome).toBe('replied');
    const answers = (await host.localRecords<CommentRecord>('acme/shop', 'comments')).filter(
      (c) => c.in_reply_to === thread?.id,
    );
    expect(answers.map((c) => c.body)).toEqual([
      'Dismissed: the debugger is stripped by the bundler',
      expect.stringMatching(/^Not dismissed: it is already dismissed/),
    ]);

    const reopened = await append(debugFinding.id, { kind: 'reopened' });
    expect(reopened.statusCode, reopened.body).toBe(201);
    expect(reopened.json()).toMatchObject({
      kind: 'reopened',
      payload: {},
      finding: { status: 'open', dismissed_reason: null, dismissed_at: null },
      check: { recomputed: true, conclusion: 'success' },
    });
    expect(await checkAt(head())).toEqual([expect.objectContaining({ title: 'Reviewed: 1 P2 open' })]);
    const log = (await eventsOf(debugFinding.id)).json().data;
    expect(log).toEqual([
      expect.objectContaining({
        kind: 'dismissed',
        actor: null,
        payload: {
          via: 'wontfix_reply',
          author: 'octocat',
          comment_id: 'c-wontfix',
          reason: 'the debugger is stripped by the bundler',
        },
      }),
      expect.objectContaining({ kind: 'reopened', actor: expect.stringMatching(/^key_/) }),
    ]);
  });

  it('a later review keeps the dismissal; a fixed finding can be neither dismissed nor reopened', async () => {
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/log.js': 'export function log(x) {\n  return x;\n}\n' }, 'remove debugger');
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    await review({}, reviewId);
    expect(await findingNow(evalFinding.id)).toMatchObject({
      status: 'dismissed',
      dismissed_reason: 'only admins reach this handler',
    });
    expect(await findingNow(debugFinding.id)).toMatchObject({ status: 'fixed' });
    expect(await checkAt(head())).toEqual([
      expect.objectContaining({ conclusion: 'success', title: 'Reviewed: no open findings' }),
    ]);
    for (const payload of [{ kind: 'dismissed', payload: { reason: 'x' } }, { kind: 'reopened' }]) {
      const res = await append(debugFinding.id, payload);
      expect(res.statusCode).toBe(409);
      expect(res.json().error.message).toMatch(/it is fixed/);
    }
  });

  it('the MCP tools reopen a finding (the check follows) and read its log oldest first', async () => {
    const reopened = await callTool('findings_append_event', {
      id: evalFinding.id,
      kind: 'reopened',
      payload: { reason: 'admins are not trusted after all' },
    });
    expect(reopened.isError, JSON.stringify(reopened.content)).toBeFalsy();
    expect(reopened.structuredContent).toMatchObject({
      kind: 'reopened',
      actor: pinnedHere.keyId,
      payload: { reason: 'admins are not trusted after all' },
      finding: { status: 'open', dismissed_reason: null },
      check: { recomputed: true, head_sha: head(), conclusion: 'action_required' },
    });
    expect(await checkAt(head())).toEqual([
      expect.objectContaining({ conclusion: 'action_required', title: 'Reviewed: 1 P0 open' }),
    ]);

    const log = await callTool('findings_events', { id: evalFinding.id });
    expect(log.isError, JSON.stringify(log.content)).toBeFalsy();
    const data = (log.structuredContent as { data: { kind: string; actor: string | null }[] }).data;
    expect(data.map((e) => e.kind)).toEqual(['dismissed', 'reopened']);
    expect(data[0]?.actor).toMatch(/^key_/);
    expect(data[0]?.actor).not.toBe(pinnedHere.keyId);
    expect(data[1]?.actor).toBe(pinnedHere.keyId);
    // The REST read pages the same log.
    const first = (await eventsOf(evalFinding.id)).json();
    expect(first.data.map((e: { kind: string }) => e.kind)).toEqual(['dismissed', 'reopened']);
    const paged = await t.app.inject({
      method: 'GET',
      url: `/api/v1/findings/${evalFinding.id}/events?limit=1`,
      headers,
    });
    expect(paged.json().data.map((e: { kind: string }) => e.kind)).toEqual(['dismissed']);
    expect(paged.json().next_cursor).toEqual(expect.any(String));
  });

  it('a review not delivered to the code host changes the ledger and leaves the code host alone', async () => {
    const found = await review({ pr: 2, reviewers: ['correctness'] });
    const debug = found.find((f) => f.rule === 'correctness/debug-statement') as Finding;
    expect(debug).toMatchObject({ status: 'open' });
    const quietHead = gitIn(repo, ['rev-parse', 'quiet']).trim();
    const res = await append(debug.id, { kind: 'dismissed', payload: { reason: 'a local helper' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      finding: { status: 'dismissed' },
      check: {
        recomputed: false,
        head_sha: quietHead,
        conclusion: null,
        reason: expect.stringMatching(/no review of head .* was delivered to the code host/),
      },
    });
    expect(await checkAt(quietHead)).toEqual([]);
  });

  it('leaves a check in progress to the review under way, which concludes from the ledger', async () => {
    const [pr] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    if (!pr) throw new Error('pull request 1 was not recorded');
    const target = {
      workspaceId: t.workspaceId,
      projectId: pr.projectId,
      pullRequestId: pr.id,
      headSha: head(),
      repo: 'acme/shop',
    };
    await checkInProgress(t.services.db, host, target, 'run_underway');
    const res = await append(evalFinding.id, { kind: 'dismissed', payload: { reason: 'admins only' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().check).toMatchObject({
      recomputed: false,
      reason: expect.stringMatching(/is in_progress .*not a review verdict/),
    });
    expect(await checkAt(head())).toEqual([expect.objectContaining({ status: 'in_progress' })]);
  });
});
