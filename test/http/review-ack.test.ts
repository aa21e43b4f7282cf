/**
 * The review acknowledgement does what the spec requires before 202 and nothing more: it
 * validates the request and records the task and its run, with the Idempotency-Key, in one
 * transaction. The code host is asked one thing: whether a local pull request exists (one git
 * process; a missing one is a 404 before any run is planned). Nothing else (a counting wrapper
 * around the local host sees every call); the pull request row and the check are the run's. No
 * worker runs here.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CodeHost } from '../../src/codehost/types';
import { idempotencyRecords, pullRequests, runs, tasks } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

describe.each(DATABASE_KINDS)('review acknowledgement (%s)', (kind) => {
  let t: TestApp;
  let headers: Record<string, string>;
  let projectId: string;
  let base: string;
  let head: string;
  /** Every call made to a code host (or to look one up) while counting is on. */
  const hostCalls: string[] = [];
  let counting = false;

  /** Wraps every method of the code host (and the lookup of hosts) to record its calls. */
  function countCalls(host: CodeHost) {
    let proto: object | null = Object.getPrototypeOf(host);
    const names = new Set<string>();
    while (proto && proto !== Object.prototype) {
      for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor') names.add(name);
      proto = Object.getPrototypeOf(proto);
    }
    for (const name of names) {
      const original = (host as unknown as Record<string, unknown>)[name];
      if (typeof original !== 'function') continue;
      (host as unknown as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
        if (counting) hostCalls.push(name);
        return original.apply(this, args);
      };
    }
  }

  async function post(payload: Record<string, unknown>, extra: Record<string, string> = {}) {
    return t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers: { ...headers, ...extra },
      payload,
    });
  }

  const reviewTasks = async () =>
    (await t.services.db.orm.select().from(tasks).where(eq(tasks.kind, 'review'))).length;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'feature']);
    commitFiles(repo, { 'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n' });
    gitIn(repo, ['checkout', '-q', 'main']);
    gitIn(repo, ['update-ref', 'refs/pull/1/head', 'feature']);
    base = gitIn(repo, ['rev-parse', 'main']).trim();
    head = gitIn(repo, ['rev-parse', 'feature']).trim();
    t = await createTestApp({ kind, reposDir });
    projectId = await createProject(t, 'acme/api');
    headers = { ...bearer(t.workspaceKey), 'project-id': projectId };
    const hosts = t.services.codeHosts;
    const local = hosts.forInstallation(1);
    if (!local) throw new Error('no local code host');
    countCalls(local);
    const lookup = hosts.forInstallation.bind(hosts);
    hosts.forInstallation = (id) => {
      if (counting) hostCalls.push(`forInstallation(${id})`);
      return lookup(id);
    };
  });
  afterAll(() => t.close());

  it('asks the code host only whether a local pull request exists; a range, nothing', async () => {
    hostCalls.length = 0;
    const before = await reviewTasks();
    const missing = await post({ pr: 99 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.message).toMatch(
      /^pull request 99 not found in acme\/api: no refs\/pull\/99\/head in /,
    );
    expect(await reviewTasks()).toBe(before);
    counting = true;
    try {
      const answers = [
        await post({ pr: 1, delivery: 'codehost', reviewers: ['security', 'secrets'] }),
        await post({ base, head }),
        await post({ base: 'deadbeef', head: 'cafebabe' }),
        await post({ pr: 1 }, { 'idempotency-key': 'no-host-1' }),
      ];
      expect(answers.map((r) => r.statusCode)).toEqual([202, 202, 202, 202]);
      for (const res of answers) {
        const ack = res.json();
        const [run] = await t.services.db.orm.select().from(runs).where(eq(runs.id, ack.run_id));
        expect(run).toMatchObject({ taskId: ack.id, status: 'pending', kind: 'review', retryOf: null });
        const [task] = await t.services.db.orm.select().from(tasks).where(eq(tasks.id, ack.id));
        expect(task?.input).toEqual(run?.input);
      }
      // The configuration each run executes, as sent.
      const [first] = await t.services.db.orm
        .select()
        .from(runs)
        .where(eq(runs.id, answers[0]?.json().run_id));
      expect(first?.input).toEqual({
        pr: 1,
        base: null,
        head: null,
        delivery: 'codehost',
        reviewers: [
          { key: 'security', reviewerId: 'security', model: null, skillRevisionId: null },
          { key: 'secrets', reviewerId: 'secrets', model: null, skillRevisionId: null },
        ],
      });
    } finally {
      counting = false;
    }
    // Each pull request post asked whether the ref exists (one git process: commitOf); the
    // ranges asked nothing.
    const existence = ['forInstallation(1)', 'requirePullRequest', 'repo', 'lookup', 'commitOf'];
    expect(hostCalls).toEqual([...existence, ...existence]);
    // The pull request row and the check are the run's first step, not the acknowledgement's.
    expect(await t.services.db.orm.select().from(pullRequests)).toEqual([]);
  });

  it('still validates the lineup before answering, without asking the code host', async () => {
    hostCalls.length = 0;
    counting = true;
    try {
      const unknown = await post({ pr: 1, reviewers: ['nope'] });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error.message).toMatch(/unknown reviewer/);
      const provider = await post({ pr: 1, reviewers: ['general@martian/x'] });
      expect(provider.statusCode).toBe(400);
    } finally {
      counting = false;
    }
    expect(hostCalls).toEqual([]);
  });

  it('records the key with the task and run: a retry replays, a changed body conflicts', async () => {
    const before = await reviewTasks();
    const first = await post({ pr: 1 }, { 'idempotency-key': 'ack-1' });
    expect(first.statusCode).toBe(202);
    const again = await post({ pr: 1 }, { 'idempotency-key': 'ack-1' });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const changed = await post({ pr: 2 }, { 'idempotency-key': 'ack-1' });
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('idempotency_conflict');
    expect(await reviewTasks()).toBe(before + 1);
    // Recorded done with the answer, never left in progress.
    const [record] = await t.services.db.orm
      .select()
      .from(idempotencyRecords)
      .where(eq(idempotencyRecords.key, 'ack-1'));
    expect(record).toMatchObject({ state: 'done', responseStatus: 202, responseBody: first.json() });
  });

  it('gives requests racing under one key the same acknowledgement, and makes one task', async () => {
    const before = await reviewTasks();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post({ pr: 1 }, { 'idempotency-key': 'ack-race' })),
    );
    expect(answers.map((r) => r.statusCode)).toEqual(Array(6).fill(202));
    expect(new Set(answers.map((r) => r.json().id)).size).toBe(1);
    expect(await reviewTasks()).toBe(before + 1);
    const [task] = await t.services.db.orm
      .select()
      .from(tasks)
      .where(and(eq(tasks.id, answers[0]?.json().id), eq(tasks.kind, 'review')));
    expect(task).toBeDefined();
  });

  it('records nothing under the key when the request is refused, so it can be corrected and retried', async () => {
    const refused = await post({ pr: 1, reviewers: ['nope'] }, { 'idempotency-key': 'ack-fix' });
    expect(refused.statusCode).toBe(400);
    expect(
      await t.services.db.orm.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, 'ack-fix')),
    ).toEqual([]);
    const fixed = await post({ pr: 1, reviewers: ['security'] }, { 'idempotency-key': 'ack-fix' });
    expect(fixed.statusCode).toBe(202);
  });
});
