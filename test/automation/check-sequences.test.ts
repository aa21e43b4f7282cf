/**
 * Never stuck: random sequences of pull request events (open, push, push as a draft, reopen,
 * ready for review, redelivery, close, merge, `@service` commands) on the local host, with a
 * worker reviewing while events keep arriving. After each sequence settles, every pull request's
 * head has a `Service / Review` check that has concluded, its `review_status` agrees with that
 * check, and the check the code host shows is the one svc recorded.
 *
 * The sequences come from a seeded generator; the seed is printed, and SVC_SEQUENCE_SEED replays
 * one (SVC_SEQUENCES and SVC_SEQUENCE_STEPS make the search longer).
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPullRequestComment } from '../../src/automation/conversation';
import { type AutomationDeps, onPullRequestEvent } from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { checkRuns, pullRequests } from '../../src/storage/schema';
import { createProject, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

const SEED = Number(process.env.SVC_SEQUENCE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SEQUENCES = Number(process.env.SVC_SEQUENCES ?? 3);
const STEPS = Number(process.env.SVC_SEQUENCE_STEPS ?? 14);
const PULLS_PER_SEQUENCE = 2;

/** mulberry32: small, seedable, good enough to pick events. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T };
}

type Step =
  | 'push'
  | 'push_draft'
  | 'reopen'
  | 'ready'
  | 'redeliver'
  | 'close'
  | 'merge'
  | 'review_off'
  | 'review_on'
  | 'review_now'
  | 'review_force'
  | 'review_status'
  | 'settle';
const STEP_KINDS: readonly Step[] = [
  'push',
  'push',
  'push_draft',
  'reopen',
  'ready',
  'redeliver',
  'close',
  'merge',
  'review_off',
  'review_on',
  'review_now',
  'review_force',
  'review_status',
  'settle',
];

/** What the test knows of a pull request, to send the events GitHub would. */
interface Pull {
  number: number;
  branch: string;
  state: 'open' | 'closed' | 'merged';
  draft: boolean;
  lastAction: string;
  pushes: number;
}

/**
 * The review statuses a concluded check allows, written here from the spec's lifecycle table
 * rather than taken from src: reviewed for a verdict, skipped for a head not reviewed by choice
 * (filters, review off), errored for a review that failed to run.
 */
function allowedStatuses(check: { conclusion: string | null; title: string }): string[] {
  if (check.conclusion !== 'skipped') return ['reviewed'];
  return /failed to run|brake|paused|spend cap|run budget/.test(check.title) ? ['errored'] : ['skipped'];
}

describe('random pull request event sequences end in a state consistent with the check', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let host: LocalCodeHost;
  let deps: AutomationDeps;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', { 'src/app.js': 'export const ok = 1;\n' });
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    await createProject(t, 'acme/api');
    host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  const sha = (ref: string) => gitIn(repo, ['rev-parse', ref]).trim();

  function push(pull: Pull, random: ReturnType<typeof generator>) {
    pull.pushes += 1;
    gitIn(repo, ['checkout', '-q', pull.branch]);
    // Some pushes carry a P0, some are clean: the verdicts differ from head to head.
    const body = random.next() < 0.5 ? 'return eval(req.query.code);' : `return ${pull.pushes};`;
    commitFiles(repo, {
      [`src/pr${pull.number}-${pull.pushes}.js`]: `export function f(req) {\n  ${body}\n}\n`,
    });
    gitIn(repo, ['checkout', '-q', 'main']);
  }

  const send = (pull: Pull, action: string, over: { merged?: boolean } = {}) => {
    pull.lastAction = action;
    return onPullRequestEvent(deps, {
      action,
      installationId: 1,
      repo: 'acme/api',
      number: pull.number,
      title: `Change ${pull.number}`,
      draft: pull.draft,
      merged: over.merged ?? false,
      closed: pull.state !== 'open',
      headRef: pull.branch,
      headSha: sha(pull.branch),
      baseRef: 'main',
      author: 'octocat',
    });
  };
  const command = (pull: Pull, body: string) =>
    onPullRequestComment(deps, {
      installationId: 1,
      repo: 'acme/api',
      number: pull.number,
      body,
      commentId: `c-${pull.number}-${Math.random()}`,
      senderType: 'User',
      senderLogin: 'octocat',
      inReplyTo: null,
      authorAssociation: 'OWNER',
    });

  async function apply(pull: Pull, step: Step, random: ReturnType<typeof generator>): Promise<string> {
    // A merged pull request hears nothing more; a closed one only its reopening.
    if (pull.state === 'merged') return 'merged: nothing';
    if (pull.state === 'closed' && step !== 'reopen') return 'closed: nothing';
    switch (step) {
      case 'push':
      case 'push_draft':
        push(pull, random);
        pull.draft = step === 'push_draft';
        return (await send(pull, 'synchronize')).outcome;
      case 'reopen':
        if (pull.state === 'closed') pull.state = 'open';
        return (await send(pull, 'reopened')).outcome;
      case 'ready':
        pull.draft = false;
        return (await send(pull, 'ready_for_review')).outcome;
      case 'redeliver':
        return (await send(pull, pull.lastAction)).outcome;
      case 'close':
        pull.state = 'closed';
        return (await send(pull, 'closed')).outcome;
      case 'merge':
        pull.state = 'merged';
        return (await send(pull, 'closed', { merged: true })).outcome;
      case 'settle':
        await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 600 });
        return 'settled';
      default:
        return (await command(pull, `@service ${step.replace('_', ' ')}`)).outcome;
    }
  }

  const random = generator(SEED);
  console.log(`check sequences: seed ${SEED} (replay with SVC_SEQUENCE_SEED=${SEED})`);
  for (let sequence = 0; sequence < SEQUENCES; sequence++) {
    it(`sequence ${sequence} of seed ${SEED}: every pull request ends in step with its check`, async () => {
      const pulls: Pull[] = [];
      const log: string[] = [];
      for (let i = 0; i < PULLS_PER_SEQUENCE; i++) {
        const number = 100 * (sequence + 1) + i;
        const pull: Pull = {
          number,
          branch: `pr-${number}`,
          state: 'open',
          draft: random.next() < 0.25,
          lastAction: 'opened',
          pushes: 0,
        };
        gitIn(repo, ['branch', pull.branch, 'main']);
        gitIn(repo, ['symbolic-ref', `refs/pull/${number}/head`, `refs/heads/${pull.branch}`]);
        push(pull, random);
        log.push(`#${number} opened${pull.draft ? ' (draft)' : ''}: ${(await send(pull, 'opened')).outcome}`);
        pulls.push(pull);
      }
      for (let s = 0; s < STEPS; s++) {
        const pull = random.pick(pulls);
        const step = random.pick(STEP_KINDS);
        log.push(`#${pull.number} ${step}: ${await apply(pull, step, random)}`);
      }
      await settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 1200 });
      const why = `seed ${SEED}, sequence ${sequence}:\n  ${log.join('\n  ')}`;
      for (const pull of pulls) {
        const [row] = await t.services.db.orm
          .select()
          .from(pullRequests)
          .where(eq(pullRequests.number, pull.number));
        const head = sha(pull.branch);
        expect(row?.headSha, why).toBe(head);
        expect(row?.state, why).toBe(pull.state);
        const checks = await t.services.db.orm.select().from(checkRuns).where(eq(checkRuns.headSha, head));
        const check = checks.find((c) => c.pullRequestId === row?.id);
        // Never absent, never stuck: the head's check exists and has concluded.
        expect(check, `#${pull.number} has no check at ${head}; ${why}`).toBeDefined();
        expect(check?.status, `#${pull.number}: ${why}`).toBe('completed');
        expect(
          allowedStatuses(check as { conclusion: string | null; title: string }),
          `#${pull.number}: ${why}`,
        ).toContain(row?.reviewStatus);
        // What the code host shows is what svc recorded.
        const shown = (
          await host.localRecords<{
            id: string;
            head_sha: string;
            status: string;
            conclusion: string | null;
          }>('acme/api', 'checks')
        )
          .filter((c) => c.id === check?.externalId)
          .at(-1);
        expect(shown, why).toMatchObject({ status: 'completed', conclusion: check?.conclusion });
      }
    }, 300_000);
  }
});
