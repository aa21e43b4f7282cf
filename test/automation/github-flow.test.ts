/**
 * GitHub end to end: real example payloads from @octokit/webhooks-examples (adjusted only to
 * name this repository, pull request and commits, and to make a comment a reply) are signed and
 * delivered to the webhook; svc talks to a GitHub double that validates every request against
 * GitHub's REST description. open → review → check → inline comments → wontfix → check
 * recomputed → a push that fixes a finding → finding fixed → check success.
 */
import { generateKeyPairSync } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { findings, postedComments, pullRequests, tasks, webhookDeliveries } from '../../src/storage/schema';
import { bearer, createProject, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';
import { createGitHubTestApp } from '../helpers/github-app';
import { GitHubDouble } from '../helpers/github-double';
import { deliver, WEBHOOK_SECRET, webhookExamples } from '../helpers/webhooks';

const APP_ID = 31337;
const INSTALLATION = 777;
const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

/** A real example payload of `event.action`, deep-copied. */
function example(event: string, action: string): Record<string, unknown> {
  const found = webhookExamples().find((e) => e.event === event && e.action === action);
  if (!found) throw new Error(`no example for ${event}.${action}`);
  return structuredClone(found.payload);
}

// Example payloads are adjusted field by field; their exact types do not matter here.
// biome-ignore lint/suspicious/noExplicitAny: example payloads are loosely shaped JSON
type Obj = Record<string, any>;

describe('GitHub end to end', () => {
  let double: GitHubDouble;
  let t: TestApp;
  let worker: Worker;
  let repo: string;

  const sha = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();

  /** The example adjusted to this repository, installation and pull request head. */
  function pullRequestPayload(action: string): Obj {
    const payload: Obj = example('pull_request', action);
    payload.installation = { ...(payload.installation ?? {}), id: INSTALLATION };
    payload.repository = {
      ...payload.repository,
      name: 'api',
      full_name: 'acme/api',
      owner: { ...payload.repository.owner, login: 'acme' },
    };
    payload.number = 1;
    payload.pull_request = {
      ...payload.pull_request,
      number: 1,
      draft: false,
      title: 'Add the runner',
      head: { ...payload.pull_request.head, ref: 'feature', sha: sha('feature') },
      base: { ...payload.pull_request.base, ref: 'main', sha: sha('main') },
    };
    return payload;
  }

  /** An issue_comment example adjusted into a comment on pull request 1 by a user. */
  function pullRequestCommentPayload(body: string): Obj {
    const payload: Obj = example('issue_comment', 'created');
    payload.installation = { id: INSTALLATION };
    payload.repository = { ...payload.repository, name: 'api', full_name: 'acme/api' };
    // Adjusted: the examples are comments on issues; this one is on pull request 1.
    payload.issue = {
      ...payload.issue,
      number: 1,
      pull_request: { url: 'https://api.github.com/repos/acme/api/pulls/1' },
    };
    payload.comment = { ...payload.comment, body };
    payload.sender = { ...payload.sender, type: 'User' };
    return payload;
  }

  const settle = () => settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });

  async function send(event: string, payload: Obj) {
    const res = await deliver(t.app, { event, payload });
    expect(res.statusCode, res.body).toBe(202);
    await settle();
    const [delivery] = await t.services.db.orm
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, res.json().delivery_id));
    return delivery;
  }

  const checksOf = (head: string) =>
    double.checkRuns.filter((c) => c.repo === 'acme/api' && (c as Obj).head_sha === head);

  beforeAll(async () => {
    double = await GitHubDouble.start({ appId: APP_ID, publicKey, installations: [INSTALLATION] });
    repo = makeRepo(makeReposDir(), 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, {
      'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
      'src/pick.js':
        'export function pick(list, wanted) {\n  let found;\n  if (found = list.find((x) => x === wanted)) {\n    return found;\n  }\n  return null;\n}\n',
    });
    gitIn(repo, ['checkout', '-q', 'main']);
    await double.seedFromGit('acme', 'api', repo, { installationId: INSTALLATION });
    double.addPullRequest('acme/api', { number: 1, title: 'Add the runner', base: 'main', head: 'feature' });

    t = await createGitHubTestApp(
      double,
      { appId: APP_ID, privateKey, webhookSecret: WEBHOOK_SECRET },
      { maxRateLimitWaitMs: 2_000 },
    );
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await double.close();
  });

  it('records the installation from its webhook, and creates a project on it', async () => {
    const payload: Obj = example('installation', 'created');
    payload.installation = {
      ...payload.installation,
      id: INSTALLATION,
      account: { ...payload.installation.account, login: 'acme' },
    };
    payload.repositories = [{ id: 1, name: 'api', full_name: 'acme/api', private: false }];
    expect((await send('installation', payload))?.status).toBe('processed');
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v1/installations',
      headers: bearer(t.workspaceKey),
    });
    expect(list.json().data.map((i: Obj) => i.id)).toContain(INSTALLATION);
    await createProject(t, 'acme/api', INSTALLATION);
  });

  let evalComment: number;

  it('reviews an opened pull request: the check goes queued → in_progress → action_required, findings post inline', async () => {
    const delivery = await send('pull_request', pullRequestPayload('opened'));
    expect(delivery?.status).toBe('processed');
    const [check] = checksOf(sha('feature'));
    expect(check?.name).toBe('Service / Review');
    expect(check?.history.map((h) => h.status)).toEqual(['queued', 'in_progress', 'completed']);
    expect(check?.conclusion).toBe('action_required');
    expect(check?.output?.text).toContain('wontfix: <reason>');
    const inline = double.reviewComments.filter((c) => c.repo === 'acme/api');
    // A finding over several lines is one comment on its range (GitHub's start_line..line).
    expect(inline.map((c) => `${c.path}:${c.line}`).sort()).toEqual(['src/pick.js:5', 'src/run.js:2']);
    evalComment = inline.find((c) => c.path === 'src/run.js')?.id ?? 0;
    expect(double.issueComments.filter((c) => c.body.startsWith('## svc review'))).toHaveLength(1);
    expect(double.rejections).toEqual([]);
  });

  it('wontfix on the finding thread dismisses it and recomputes the check without a new review', async () => {
    const reviewsBefore = (await t.services.db.orm.select().from(tasks).where(eq(tasks.kind, 'review')))
      .length;
    const payload: Obj = example('pull_request_review_comment', 'created');
    payload.installation = { id: INSTALLATION };
    payload.repository = { ...payload.repository, name: 'api', full_name: 'acme/api' };
    payload.pull_request = { ...payload.pull_request, number: 1 };
    // Adjusted: the example is a top-level comment; make it a reply on svc's finding thread.
    payload.comment = {
      ...payload.comment,
      body: 'wontfix: only the admin console calls this',
      in_reply_to_id: evalComment,
      user: { ...payload.comment.user, type: 'User' },
    };
    payload.sender = { ...payload.sender, type: 'User' };
    // A contributor without write access cannot dismiss a finding (it could unblock a P0).
    const stranger = await send('pull_request_review_comment', {
      ...payload,
      comment: { ...payload.comment, id: 990001, author_association: 'CONTRIBUTOR' },
    });
    expect(stranger).toMatchObject({
      status: 'ignored',
      reason: expect.stringMatching(/CONTRIBUTOR.*only owners, members and collaborators/),
    });
    const [stillOpen] = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'security/code-injection'));
    expect(stillOpen?.status).toBe('open');

    const replied = await send('pull_request_review_comment', payload);
    expect(replied?.status, replied?.reason ?? '').toBe('processed');
    expect((await t.services.db.orm.select().from(tasks).where(eq(tasks.kind, 'review'))).length).toBe(
      reviewsBefore,
    );
    const [check] = checksOf(sha('feature'));
    expect(check?.conclusion).toBe('neutral');
    const [dismissed] = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'security/code-injection'));
    expect(dismissed?.status).toBe('dismissed');
    expect(double.rejections).toEqual([]);
  });

  it('a push that fixes the remaining finding: the finding is fixed and the new check is success', async () => {
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(
      repo,
      {
        'src/pick.js':
          'export function pick(list, wanted) {\n  const found = list.find((x) => x === wanted);\n  return found ?? null;\n}\n',
      },
      'no assignment in condition',
    );
    gitIn(repo, ['checkout', '-q', 'main']);
    expect((await send('pull_request', pullRequestPayload('synchronize')))?.status).toBe('processed');
    const [check] = checksOf(sha('feature'));
    expect(check?.conclusion).toBe('success');
    const [assignment] = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'correctness/assignment-in-condition'));
    expect(assignment?.status).toBe('fixed');
    // Still one summary comment, edited in place.
    const summaries = double.issueComments.filter((c) => c.body.startsWith('## svc review'));
    expect(summaries).toHaveLength(1);
    expect(summaries[0]?.edits.length).toBeGreaterThan(0);
    // No finding was posted twice.
    const inline = double.reviewComments.filter((c) => c.repo === 'acme/api' && !(c as Obj).in_reply_to_id);
    expect(inline).toHaveLength(2);
    expect(double.rejections).toEqual([]);
  });

  it('answers @service commands in the pull request, and ignores a delivery for an unknown installation', async () => {
    const status = pullRequestCommentPayload('@service review status');
    expect((await send('issue_comment', status))?.status).toBe('processed');
    expect(double.issueComments.at(-1)?.body).toMatch(/Review status: \*\*reviewed\*\*/);

    const stranger = pullRequestPayload('opened');
    stranger.installation = { id: 4040 };
    const ignored = await send('pull_request', stranger);
    expect(ignored).toMatchObject({
      status: 'ignored',
      reason: expect.stringMatching(/unknown installation 4040/),
    });
  });

  it('fails a review by name when GitHub keeps answering 5xx, and keeps the computed findings', async () => {
    gitIn(repo, ['checkout', '-q', 'feature']);
    commitFiles(repo, { 'src/dbg.js': 'export function dbg(x) {\n  debugger;\n  return x;\n}\n' }, 'debug');
    gitIn(repo, ['checkout', '-q', 'main']);
    // Every review post fails; reads still work.
    double.failNext(20, {
      status: 502,
      message: 'Bad gateway',
      match: (r: { method: string; path: string }) => r.method === 'POST' && /\/reviews$/.test(r.path),
    } as never);
    await send('pull_request', pullRequestPayload('synchronize'));
    const [review] = await t.services.db.orm
      .select()
      .from(tasks)
      .where(eq(tasks.kind, 'review'))
      .orderBy(tasks.createdAt)
      .limit(1)
      .offset(2);
    const run = await t.services.engine.latestRun(review?.id ?? '');
    expect(run?.status).toBe('failed');
    expect(run?.error?.code).toBe('backend_unavailable');
    const debug = await t.services.db.orm
      .select()
      .from(findings)
      .where(eq(findings.rule, 'correctness/debug-statement'));
    expect(debug[0]?.status).toBe('open');
  });

  it('records each inline batch as it lands: after a failure part-way, a re-run posts only the rest', async () => {
    double.resetLog();
    gitIn(repo, ['checkout', '-q', 'feature']);
    // 60 P1 findings in one file (unreachable code): 60 of one P2 idiom would be one finding.
    const many = Array.from(
      { length: 60 },
      (_, i) => `export function trace${i}(x) {\n  return x;\n  x += ${i};\n}\n`,
    ).join('\n');
    commitFiles(repo, { 'src/many.js': many }, 'many unreachable statements');
    gitIn(repo, ['checkout', '-q', 'main']);
    // The first review (batch 1 of 2) lands; every later review post fails.
    let reviewPosts = 0;
    double.failNext(20, {
      status: 502,
      message: 'Bad gateway',
      match: (r: { method: string; path: string }) =>
        r.method === 'POST' && /\/reviews$/.test(r.path) && ++reviewPosts > 1,
    } as never);
    const commentsBefore = double.reviewComments.length;
    await send('pull_request', pullRequestPayload('synchronize'));
    const failed = await t.services.engine.latestRun(
      (await t.services.db.orm.select().from(tasks).where(eq(tasks.kind, 'review'))).at(-1)?.id ?? '',
    );
    expect(failed?.error?.code).toBe('backend_unavailable');
    const firstBatch = double.reviewComments.slice(commentsBefore);
    expect(firstBatch).toHaveLength(50);
    const recorded = await t.services.db.orm
      .select()
      .from(postedComments)
      .where(eq(postedComments.kind, 'inline'));
    for (const comment of firstBatch)
      expect(recorded.some((r) => r.externalId === String(comment.id))).toBe(true);

    double.resetLog();
    const open = await t.services.db.orm.select().from(findings).where(eq(findings.status, 'open'));
    const missing = open.filter((f) => !recorded.some((r) => r.findingId === f.id));
    expect(missing.length).toBeGreaterThan(0);
    const beforeRerun = double.reviewComments.length;
    const force = pullRequestCommentPayload('@service review force');
    expect((await send('issue_comment', force))?.status).toBe('processed');
    // Only what batch 1 did not carry is posted; every open finding is on GitHub exactly once.
    expect(double.reviewComments.length - beforeRerun).toBe(missing.length);
    const inline = await t.services.db.orm
      .select()
      .from(postedComments)
      .where(eq(postedComments.kind, 'inline'));
    const perFinding = new Map<string, number>();
    for (const row of inline)
      perFinding.set(row.findingId ?? '', (perFinding.get(row.findingId ?? '') ?? 0) + 1);
    for (const finding of open) expect(perFinding.get(finding.id), finding.id).toBe(1);
  });

  it("records a pull request closed without merging as closed, from GitHub's own payload", async () => {
    const closed = await send('pull_request', pullRequestPayload('closed'));
    expect(closed).toMatchObject({ status: 'ignored', reason: 'closed without merging' });
    const [row] = await t.services.db.orm.select().from(pullRequests).where(eq(pullRequests.number, 1));
    expect(row).toMatchObject({ state: 'closed', mergedAt: null });
  });
});
