/**
 * Steering the findings ledger without the code host (documented extension): `dismissed {reason}`
 * and `reopened` events on a finding, with the effect of a `wontfix:` reply (the finding's status
 * changes and its pull request's check is recomputed without a new run), and the finding's log
 * read back oldest first. The rules live in review/disposition.ts, shared with the reply path.
 */
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { notFound } from '../core/errors';
import {
  applyDisposition,
  type CheckFollowUp,
  DISPOSITION_KINDS,
  type Disposition,
  FINDING_OBJECT_TYPE,
} from '../review/disposition';
import { findingRecord } from '../review/service';
import { toEventRecord } from '../storage/object-events';
import { findings } from '../storage/schema';
import { type EventSubject, eventOperations, eventRecord } from './collections';
import { findingSchema } from './ledger-collections';
import { defineOperation, type Operation, type OperationContext } from './registry';

const reasonText = z.string().trim().min(1).max(2000);

export const findingEventBody = z
  .strictObject({
    kind: z
      .enum(DISPOSITION_KINDS)
      .describe(
        '`dismissed`: the finding is wrong or not worth fixing (needs `payload.reason`); `reopened`: take a dismissal back.',
      ),
    payload: z
      .strictObject({
        reason: reasonText
          .optional()
          .describe('Why: required to dismiss (it becomes `dismissed_reason`), optional to reopen.'),
      })
      .default({}),
  })
  .superRefine((body, issues) => {
    if (body.kind === 'dismissed' && body.payload.reason === undefined) {
      issues.addIssue({
        code: 'custom',
        path: ['payload', 'reason'],
        message: 'a dismissal needs a reason: send payload.reason, e.g. "only admins reach this handler"',
      });
    }
  });

const checkFollowUp = z
  .object({
    recomputed: z.boolean(),
    head_sha: z.string().nullable(),
    conclusion: z.string().nullable().describe('The check conclusion after recomputing.'),
    reason: z.string().nullable().describe('Why the check was left as it is; null when recomputed.'),
  })
  .describe("The pull request's `Service / Review` check at its head, recomputed from the ledger.");

const findingEventAnswer = eventRecord.extend({
  finding: findingSchema.describe('The finding after the change.'),
  check: checkFollowUp,
});

const toCheckFollowUp = (f: CheckFollowUp): z.infer<typeof checkFollowUp> => ({
  recomputed: f.recomputed,
  head_sha: f.headSha,
  conclusion: f.conclusion,
  reason: f.reason,
});

const findingParams = z.strictObject({ id: z.string().min(1).max(200).describe('Finding id.') });

async function findingExists(ctx: OperationContext, id: string): Promise<boolean> {
  const [row] = await ctx.services.db.orm
    .select({ id: findings.id })
    .from(findings)
    .where(
      and(
        eq(findings.id, id),
        eq(findings.workspaceId, ctx.workspaceId),
        eq(findings.projectId, ctx.projectId ?? ''),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/** The check follows the committed ledger; a code-host failure is reported, not a failed answer. */
async function followCheck(
  ctx: OperationContext,
  finding: Parameters<OperationContext['services']['recomputeCheck']>[0],
): Promise<CheckFollowUp> {
  try {
    return await ctx.services.recomputeCheck(finding);
  } catch (error) {
    ctx.services.logger.warn(
      { err: error, finding: finding.id },
      'check recompute after a disposition failed',
    );
    return {
      recomputed: false,
      headSha: null,
      conclusion: null,
      reason: `updating the check on the code host failed: ${(error as Error).message}; the next review recomputes it`,
    };
  }
}

const appendEvent = defineOperation({
  tool: 'findings_append_event',
  method: 'POST',
  path: '/api/v1/findings/{id}/events',
  summary:
    'Dismiss a finding (`dismissed` with `payload.reason`) or take a dismissal back (`reopened`); the check recomputes without a new run.',
  description: [
    'Documented extension: the same effect as replying `wontfix: <reason>` on the finding thread.',
    '`dismissed` moves an open finding to `dismissed` with `dismissed_reason` and `dismissed_at`; later reviews keep it dismissed.',
    '`reopened` moves a dismissed finding back to `open`.',
    'A fixed finding, dismissing a dismissed one or reopening an open one is 409 `conflict`.',
    "When the pull request's current head was reviewed with delivery to the code host, its `Service / Review` check is recomputed from the ledger (`check` says what happened).",
  ].join(' '),
  scope: 'project',
  params: findingParams,
  body: findingEventBody,
  response: findingEventAnswer,
  status: 201,
  handler: async ({ params, body }, ctx) => {
    const disposition: Disposition =
      body.kind === 'dismissed'
        ? { kind: 'dismissed', reason: body.payload.reason ?? '' }
        : { kind: 'reopened', reason: body.payload.reason ?? null };
    const applied = await applyDisposition(
      ctx.services.db,
      { workspaceId: ctx.workspaceId, projectId: ctx.projectId ?? '' },
      params.id,
      disposition,
      { actor: ctx.principal.keyId },
    );
    if (!applied) throw notFound('finding', params.id);
    const check = await followCheck(ctx, applied.finding);
    return {
      ...toEventRecord(applied.event),
      finding: findingRecord(applied.finding),
      check: toCheckFollowUp(check),
    };
  },
});

const findingSubject: EventSubject = {
  objectType: FINDING_OBJECT_TYPE,
  exists: findingExists,
};

/** The read of the shared `/events` pair; its append is `appendEvent` above (kinds with effects). */
const readEvents = eventOperations('findings', 'findings', 'id', findingSubject)
  .filter((op) => op.method === 'GET')
  .map(
    (op): Operation => ({
      ...op,
      summary: "Read a finding's events (`dismissed`, `reopened`), oldest first, each with its actor.",
      description:
        'Documented extension. `actor` is the id of the API key that appended the event; null for a `wontfix:` reply on the code host (its `payload` names the `author` and `comment_id`).',
    }),
  );

export const operations: Operation[] = [appendEvent, ...readEvents];
