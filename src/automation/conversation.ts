/**
 * Conversations on a pull request: `@service` commands in comments, and replies on a finding's
 * thread (`wontfix: <reason>` dismisses it through review/disposition.ts, as the API does, and
 * recomputes the check without a new run; `fix this` opens a fix task). Only the repository's
 * collaborators command svc: comments by anyone else, and by bots (svc included), never run
 * anything.
 */

import { and, eq } from 'drizzle-orm';
import { countOpen } from '../core/checks';
import { COMMAND_HELP, parseCommand, parseThreadReply } from '../core/commands';
import { ledgerKeyOf } from '../core/review';
import { applyDisposition, DispositionConflict } from '../review/disposition';
import type { Database } from '../storage/database';
import { newId } from '../storage/ids';
import { findings, postedComments, pullRequests } from '../storage/schema';
import { recomputeAfterDisposition } from './check';
import { type AutomationDeps, projectAndHost, startAutomaticReview } from './triggers';

export interface CommentEvent {
  installationId: number;
  repo: string;
  number: number;
  body: string;
  commentId: string;
  /** `Bot` for apps (svc itself included). */
  senderType: string | null;
  senderLogin: string | null;
  /** For review-comment replies: the comment replied to. */
  inReplyTo: string | null;
  /** GitHub's `author_association` of the comment: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE… */
  authorAssociation: string | null;
}

export type ConversationOutcome = {
  outcome: 'ignored' | 'replied' | 'review_started' | 'dismissed' | 'fix_started';
  reason: string;
  taskId?: string;
};

export const isBot = (event: Pick<CommentEvent, 'senderType' | 'senderLogin'>) =>
  event.senderType === 'Bot' || /\[bot\]$/i.test(event.senderLogin ?? '');

/**
 * Associations with write access to the repository. Anyone else may comment on a public pull
 * request, even open it; none of them may dismiss a finding (that could unblock a P0) or spend
 * review runs. A comment without an association counts as a stranger's.
 */
const COMMANDING_ASSOCIATIONS = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);

/** Why this comment may not run anything, or null when it may. */
function refusal(event: CommentEvent): string | null {
  if (isBot(event)) return `comment by bot ${event.senderLogin}`;
  if (!COMMANDING_ASSOCIATIONS.has(event.authorAssociation ?? '')) {
    return `comment by ${event.senderLogin ?? 'an unknown author'} (${event.authorAssociation ?? 'no association'}): only owners, members and collaborators command svc`;
  }
  return null;
}

async function pullRequestRow(db: Database, projectId: string, number: number) {
  const [row] = await db.orm
    .select()
    .from(pullRequests)
    .where(and(eq(pullRequests.projectId, projectId), eq(pullRequests.number, number)))
    .limit(1);
  return row ?? null;
}

/** An `@service` command in a pull request comment; the answer is a reply on the pull request. */
export async function onPullRequestComment(
  deps: AutomationDeps,
  event: CommentEvent,
): Promise<ConversationOutcome> {
  const command = parseCommand(event.body);
  if (!command) return { outcome: 'ignored', reason: 'the comment has no @service command' };
  const refused = refusal(event);
  if (refused) return { outcome: 'ignored', reason: refused };
  const found = await projectAndHost(deps, event.installationId, event.repo);
  if ('ignored' in found) return { outcome: 'ignored', reason: found.ignored };
  const { project, host } = found;
  const reply = async (text: string) => {
    await host.postComment(project.repoFullName, { pullRequest: event.number, body: text });
  };
  const info = await host.getPullRequest(project.repoFullName, event.number);
  let pr = await pullRequestRow(deps.db, project.id, event.number);
  if (!pr) {
    const [created] = await deps.db.orm
      .insert(pullRequests)
      .values({
        id: newId('pullRequest'),
        workspaceId: project.workspaceId,
        projectId: project.id,
        number: info.number,
        title: info.title,
        author: info.author,
        draft: info.draft,
        baseRef: info.baseRef,
        headRef: info.headRef,
        baseSha: info.baseSha,
        headSha: info.headSha,
      })
      .onConflictDoNothing()
      .returning();
    pr = created ?? (await pullRequestRow(deps.db, project.id, event.number));
  }
  if (!pr) throw new Error(`pull request #${event.number} could not be recorded`);

  switch (command.kind) {
    case 'help':
    case 'unknown': {
      const lead = command.kind === 'unknown' ? `I don't know \`${command.text}\`. ` : '';
      await reply(`${lead}Commands:\n\n${COMMAND_HELP.map((l) => `- ${l}`).join('\n')}`);
      return { outcome: 'replied', reason: command.kind };
    }
    case 'review_off': {
      await deps.db.orm
        .update(pullRequests)
        .set({ autoReview: false, autoReviewOffReason: command.reason, updatedAt: new Date() })
        .where(eq(pullRequests.id, pr.id));
      await reply(
        `Automatic review is off for this pull request${command.reason ? ` (${command.reason})` : ''}. \`@service review on\` turns it back on.`,
      );
      return { outcome: 'replied', reason: 'review off' };
    }
    case 'review_status': {
      const ledger = await deps.db.orm
        .select()
        .from(findings)
        .where(eq(findings.ledgerKey, ledgerKeyOf({ pullRequestId: pr.id })));
      const open = countOpen(ledger);
      await reply(
        [
          `Review status: **${pr.reviewStatus ?? 'not reviewed'}**`,
          `Automatic review: ${pr.autoReview ? 'on' : `off${pr.autoReviewOffReason ? ` (${pr.autoReviewOffReason})` : ''}`}`,
          `Last reviewed: ${pr.lastReviewedAt?.toISOString() ?? 'never'}`,
          `Open findings: ${open.P0} P0, ${open.P1} P1, ${open.P2} P2`,
        ].join('\n'),
      );
      return { outcome: 'replied', reason: 'status' };
    }
    case 'review_on':
    case 'review_now':
    case 'review_force': {
      if (command.kind === 'review_on') {
        await deps.db.orm
          .update(pullRequests)
          .set({ autoReview: true, autoReviewOffReason: null, updatedAt: new Date() })
          .where(eq(pullRequests.id, pr.id));
      }
      const started = await startAutomaticReview(deps, project, host, pr, info.headSha, {
        force: command.kind === 'review_force',
        reason: `@service ${command.kind.replace('_', ' ')}`,
      });
      if (started.outcome === 'review_started') {
        await reply(`Reviewing ${info.headSha.slice(0, 12)} now.`);
        return { outcome: 'review_started', reason: command.kind, taskId: started.taskId };
      }
      await reply(`Not reviewing: ${started.reason}.`);
      return { outcome: 'replied', reason: started.reason };
    }
  }
}

/** A reply on a finding's thread. */
export async function onFindingThreadReply(
  deps: AutomationDeps,
  event: CommentEvent,
): Promise<ConversationOutcome> {
  if (!event.inReplyTo) return { outcome: 'ignored', reason: 'not a reply to a finding' };
  const reply = parseThreadReply(event.body);
  if (!reply)
    return { outcome: 'ignored', reason: 'the reply is neither `wontfix: <reason>` nor `fix this`' };
  const refused = refusal(event);
  if (refused) return { outcome: 'ignored', reason: refused };
  const [posted] = await deps.db.orm
    .select()
    .from(postedComments)
    .where(and(eq(postedComments.externalId, event.inReplyTo), eq(postedComments.kind, 'inline')))
    .limit(1);
  if (!posted?.findingId)
    return { outcome: 'ignored', reason: `comment ${event.inReplyTo} is not a finding svc posted` };
  const [finding] = await deps.db.orm
    .select()
    .from(findings)
    .where(eq(findings.id, posted.findingId))
    .limit(1);
  if (!finding) return { outcome: 'ignored', reason: `finding ${posted.findingId} no longer exists` };
  const found = await projectAndHost(deps, event.installationId, event.repo);
  if ('ignored' in found) return { outcome: 'ignored', reason: found.ignored };
  const { project, host } = found;
  const answer = (text: string) =>
    host.postComment(project.repoFullName, {
      pullRequest: event.number,
      body: text,
      inReplyTo: event.inReplyTo,
    });

  if (reply.kind === 'wontfix') {
    // The same disposition as the API's `findings_append_event`, recorded in the finding's log.
    let dismissed: Awaited<ReturnType<typeof applyDisposition>>;
    try {
      dismissed = await applyDisposition(
        deps.db,
        { workspaceId: finding.workspaceId, projectId: finding.projectId },
        finding.id,
        { kind: 'dismissed', reason: reply.reason },
        {
          actor: null,
          context: { via: 'wontfix_reply', author: event.senderLogin, comment_id: event.commentId },
        },
      );
    } catch (error) {
      if (!(error instanceof DispositionConflict)) throw error;
      await answer(`Not dismissed: ${error.refusal}.`);
      return { outcome: 'replied', reason: error.message };
    }
    if (!dismissed) return { outcome: 'ignored', reason: `finding ${finding.id} no longer exists` };
    // The check recomputes from the ledger at once; no new review run.
    await recomputeAfterDisposition(deps.db, deps.codeHosts, dismissed.finding);
    await answer(`Dismissed: ${reply.reason}`);
    return { outcome: 'dismissed', reason: reply.reason };
  }
  const { task } = await deps.engine.createTask({
    workspaceId: project.workspaceId,
    projectId: project.id,
    kind: 'fix',
    title: `Fix ${finding.rule} at ${finding.path}:${finding.line}`,
    input: { finding_id: finding.id, pull_request: event.number, reply_to: event.inReplyTo },
  });
  await answer(`Working on a fix (task ${task.id}).`);
  return { outcome: 'fix_started', reason: 'fix this', taskId: task.id };
}
