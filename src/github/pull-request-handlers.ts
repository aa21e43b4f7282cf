/**
 * GitHub deliveries that drive reviews: `pull_request` (triggers and merges), `issue_comment`
 * (`@service` commands on a pull request), `pull_request_review_comment` (finding threads),
 * `push` (plan documents) and `check_run` / `check_suite` `rerequested` (GitHub's "Re-run").
 * Each reads the payload leniently and hands plain facts to the automation layer.
 */
import { type CommentEvent, onFindingThreadReply, onPullRequestComment } from '../automation/conversation';
import { onPush } from '../automation/plans';
import { onCheckRerequested } from '../automation/rerun';
import { type AutomationDeps, onPullRequestEvent } from '../automation/triggers';
import { int, list, obj, repoFullName, str } from './webhooks/payload';
import { registerWebhookHandler, type WebhookContext, type WebhookOutcome } from './webhooks/registry';

const deps = (ctx: WebhookContext): AutomationDeps => ({
  db: ctx.db,
  engine: ctx.deps.engine,
  codeHosts: ctx.deps.codeHosts,
});

function outcome(result: { outcome: string; reason: string }): WebhookOutcome {
  return result.outcome === 'ignored'
    ? { status: 'ignored', reason: result.reason }
    : { status: 'processed', summary: `${result.outcome}: ${result.reason}` };
}

async function pullRequest(ctx: WebhookContext): Promise<WebhookOutcome> {
  const pr = obj(ctx.payload.pull_request);
  const number = int(pr?.number) ?? int(ctx.payload.number);
  const headSha = str(obj(pr?.head)?.sha);
  const repo = repoFullName(ctx.payload.repository);
  if (!pr || number === undefined || !headSha || !repo || !ctx.installation) {
    return {
      status: 'ignored',
      reason: 'the pull_request delivery lacks the pull request number, head commit or repository',
    };
  }
  const result = await onPullRequestEvent(deps(ctx), {
    action: ctx.action ?? '',
    installationId: ctx.installation.id,
    repo,
    number,
    title: str(pr.title) ?? '',
    draft: pr.draft === true,
    merged: pr.merged === true || Boolean(str(pr.merged_at)),
    closed: str(pr.state) === 'closed',
    headRef: str(obj(pr.head)?.ref) ?? null,
    headSha,
    baseRef: str(obj(pr.base)?.ref) ?? null,
    author: str(obj(pr.user)?.login) ?? null,
  });
  return {
    ...outcome(result),
    ...(result.outcome === 'review_started' ? { result: { task_id: result.taskId } } : {}),
  } as WebhookOutcome;
}

function commentEvent(ctx: WebhookContext, number: number | undefined): CommentEvent | null {
  const comment = obj(ctx.payload.comment);
  const repo = repoFullName(ctx.payload.repository);
  const id = comment ? (int(comment.id) ?? str(comment.id)) : undefined;
  if (!comment || number === undefined || !repo || id === undefined || !ctx.installation) return null;
  const sender = obj(ctx.payload.sender) ?? obj(comment.user);
  const replyTo = comment.in_reply_to_id;
  return {
    installationId: ctx.installation.id,
    repo,
    number,
    body: str(comment.body) ?? '',
    commentId: String(id),
    senderType: str(sender?.type) ?? null,
    senderLogin: str(sender?.login) ?? null,
    inReplyTo: replyTo === undefined || replyTo === null ? null : String(replyTo),
    authorAssociation: str(comment.author_association) ?? null,
  };
}

async function issueComment(ctx: WebhookContext): Promise<WebhookOutcome> {
  if (ctx.action !== 'created')
    return { status: 'ignored', reason: `comment ${ctx.action ?? 'event'} runs no command` };
  const issue = obj(ctx.payload.issue);
  // Issue comments arrive for issues too; only pull requests carry `pull_request`.
  if (!issue || !obj(issue.pull_request))
    return { status: 'ignored', reason: 'a comment on an issue, not a pull request' };
  const event = commentEvent(ctx, int(issue.number));
  if (!event)
    return { status: 'ignored', reason: 'the comment delivery lacks the comment, number or repository' };
  return outcome(await onPullRequestComment(deps(ctx), event));
}

async function reviewComment(ctx: WebhookContext): Promise<WebhookOutcome> {
  if (ctx.action !== 'created')
    return { status: 'ignored', reason: `review comment ${ctx.action ?? 'event'} changes nothing` };
  const event = commentEvent(ctx, int(obj(ctx.payload.pull_request)?.number));
  if (!event)
    return {
      status: 'ignored',
      reason: 'the review comment delivery lacks the comment, number or repository',
    };
  if (event.inReplyTo) return outcome(await onFindingThreadReply(deps(ctx), event));
  return outcome(await onPullRequestComment(deps(ctx), event));
}

async function push(ctx: WebhookContext): Promise<WebhookOutcome> {
  const repo = repoFullName(ctx.payload.repository);
  const ref = str(ctx.payload.ref);
  const after = str(ctx.payload.after);
  if (!repo || !ref || !after || !ctx.installation)
    return { status: 'ignored', reason: 'the push delivery lacks ref, commit or repository' };
  const paths = list(ctx.payload.commits).flatMap((c) =>
    [...list(obj(c)?.added), ...list(obj(c)?.modified)].map(String),
  );
  const result = await onPush(deps(ctx), {
    installationId: ctx.installation.id,
    repo,
    ref,
    after,
    defaultBranch: str(obj(ctx.payload.repository)?.default_branch) ?? null,
    paths,
  });
  return result.outcome === 'ignored'
    ? { status: 'ignored', reason: result.reason }
    : { status: 'processed', summary: result.reason, result: { plans: result.plans } };
}

/**
 * "Re-run" on svc's check (`check_run.rerequested`) or "Re-run all checks" on its suite
 * (`check_suite.rerequested`): GitHub sends these to the app that made the check, so its
 * `Service / Review` gets a new review rather than staying as it was.
 */
async function checkRerequested(ctx: WebhookContext): Promise<WebhookOutcome> {
  const run = ctx.event === 'check_run' ? obj(ctx.payload.check_run) : null;
  const subject = run ?? obj(ctx.payload.check_suite);
  const headSha = str(subject?.head_sha);
  const repo = repoFullName(ctx.payload.repository);
  const runId = run ? (int(run.id) ?? str(run.id)) : undefined;
  if (!subject || !headSha || !repo || !ctx.installation || (run && runId === undefined))
    return { status: 'ignored', reason: `the ${ctx.event} delivery lacks the head commit or repository` };
  const result = await onCheckRerequested(deps(ctx), {
    installationId: ctx.installation.id,
    repo,
    headSha,
    checkRun: run ? { id: String(runId), name: str(run.name) ?? '' } : null,
    pullRequests: list(subject.pull_requests).flatMap((p) => {
      const n = int(obj(p)?.number);
      return n === undefined ? [] : [n];
    }),
  });
  return {
    ...outcome(result),
    ...(result.outcome === 'review_started' ? { result: { task_ids: result.taskIds } } : {}),
  } as WebhookOutcome;
}

export function registerPullRequestHandlers(): void {
  registerWebhookHandler('pull_request', pullRequest);
  registerWebhookHandler('issue_comment', issueComment);
  registerWebhookHandler('pull_request_review_comment', reviewComment);
  registerWebhookHandler('push', push);
  registerWebhookHandler('check_run.rerequested', checkRerequested);
  registerWebhookHandler('check_suite.rerequested', checkRerequested);
}
