/**
 * Plans: the plan documents svc found in the repository, what each awaits, and the two moves a
 * person makes on a reviewed plan (approve, or reject with a reason) through the plans API.
 * Plans awaiting a decision come first.
 */
import { api, listAll, type Plan, useLoad } from '../api';
import { ReasonDialog } from '../reason-dialog';
import { Link } from '../router';
import { Empty, Load, PageHeading, projectPath, Time, timelineHref } from '../ui';

/** A reviewed plan nobody has decided on yet. */
export const awaitsDecision = (p: Plan) => p.status === 'reviewed' && p.approval_status === 'pending';
/** What the approve button may do now (the API's own rule: a reviewed plan, or a failed draft pull request). */
const canApprove = (p: Plan) =>
  p.status === 'reviewed' || (p.status === 'approved' && p.repo_write_status === 'failed');
const canReject = (p: Plan) => p.status === 'reviewed' && p.approval_status !== 'rejected';

function stateOf(p: Plan): { label: string; tone: string } {
  if (awaitsDecision(p)) return { label: 'awaiting approval', tone: 'awaiting' };
  if (p.status === 'reviewed' && p.approval_status === 'rejected')
    return { label: 'rejected', tone: 'rejected' };
  if (p.status === 'approved' && p.repo_write_status === 'failed')
    return { label: 'approved, draft pull request failed', tone: 'rejected' };
  return { label: p.status, tone: p.status };
}

const SCORE_PARTS = ['title', 'goal', 'steps', 'risks', 'done_when'] as const;

function Score({ score }: { score: Record<string, unknown> | null }) {
  if (!score || typeof score.score !== 'number') return <span class="muted">not scored yet</span>;
  const missing = SCORE_PARTS.filter((k) => score[k] === false).map((k) => k.replace('_', ' '));
  return (
    <>
      {Math.round(score.score * 100)}%
      {missing.length > 0 ? <span class="muted"> (no {missing.join(', ')} section)</span> : null}
    </>
  );
}

/** Approve or reject one plan, through a dialog that records the reason on the plan's event. */
function Decision({
  project,
  plan,
  verb,
  onDone,
}: {
  project: string;
  plan: Plan;
  verb: 'Approve' | 'Reject';
  onDone: () => void;
}) {
  const rejecting = verb === 'Reject';
  const name = plan.repo_artifact_path ?? plan.id;
  return (
    <ReasonDialog
      id={`${verb.toLowerCase()}-${plan.id}`}
      verb={verb}
      noun="plan"
      buttonClass={rejecting ? 'secondary small' : 'small'}
      buttonLabel={`${verb} ${name}`}
      required={rejecting}
      whyRequired="A rejection needs a reason: say what the plan should change or why it is not wanted."
      hint={
        rejecting
          ? 'Nothing is written to the repository; the plan stays reviewed and can still be approved later.'
          : 'svc then opens a draft pull request with the plan as its body.'
      }
      submit={async (reason) => {
        await api('POST', `/plans/${encodeURIComponent(plan.id)}/${verb.toLowerCase()}`, {
          project,
          body: reason ? { reason } : {},
        });
        onDone();
      }}
    >
      <p>
        <code>{name}</code>
        {plan.summary ? <> — {plan.summary}</> : null}
      </p>
    </ReasonDialog>
  );
}

function PlanCard({ project, plan, onChange }: { project: string; plan: Plan; onChange: () => void }) {
  const state = stateOf(plan);
  const headingId = `plan-${plan.id}`;
  return (
    <li class="card plan-card">
      <article aria-labelledby={headingId}>
        <h3 id={headingId}>{plan.summary ?? plan.repo_artifact_path ?? plan.id}</h3>
        <p>
          <span class={`pill pill-${state.tone}`}>{state.label}</span>{' '}
          <code class="small">{plan.repo_artifact_path ?? plan.id}</code>
        </p>
        <dl class="facts">
          {plan.target_outcome ? (
            <>
              <dt>Goal</dt>
              <dd>{plan.target_outcome}</dd>
            </>
          ) : null}
          <dt>Review score</dt>
          <dd>
            <Score score={plan.score} />
          </dd>
          <dt>Approval</dt>
          <dd>
            {plan.requires_approval ? plan.approval_status : 'not required (its front matter waives it)'}
          </dd>
          {plan.draft_pull_request ? (
            <>
              <dt>Draft pull request</dt>
              <dd>
                {plan.draft_pull_request.url ? (
                  <a href={plan.draft_pull_request.url}>#{plan.draft_pull_request.number}</a>
                ) : (
                  `#${plan.draft_pull_request.number}`
                )}
              </dd>
            </>
          ) : null}
          {plan.repo_write_error ? (
            <>
              <dt>Draft pull request failed</dt>
              <dd>{plan.repo_write_error}</dd>
            </>
          ) : null}
          <dt>Updated</dt>
          <dd>
            <Time iso={plan.updated_at} />
          </dd>
        </dl>
        <div class="actions">
          {canApprove(plan) ? (
            <Decision project={project} plan={plan} verb="Approve" onDone={onChange} />
          ) : null}
          {canReject(plan) ? (
            <Decision project={project} plan={plan} verb="Reject" onDone={onChange} />
          ) : null}
          {plan.review_task_id ? (
            <Link href={projectPath(project, 'tasks', plan.review_task_id)}>its review</Link>
          ) : null}
          <Link href={timelineHref(project, 'plan', plan.id)}>its timeline</Link>
        </div>
      </article>
    </li>
  );
}

export function PlansPage({ project }: { project: string }) {
  const loaded = useLoad(() => listAll<Plan>('/plans', project, {}, 500), [project]);
  return (
    <>
      <PageHeading title="Plans">Plans</PageHeading>
      <p class="muted">
        Markdown documents under <code>docs/plans/</code>, <code>prds/</code> or <code>.svc/plans/</code> on
        the default branch become plans. svc reviews each; an approved plan gets a draft pull request.
      </p>
      <Load loaded={loaded} what="plans">
        {({ data }) => {
          const waiting = data.filter(awaitsDecision);
          const rest = data.filter((p) => !awaitsDecision(p));
          return (
            <>
              <section aria-labelledby="plans-waiting-h">
                <h2 id="plans-waiting-h">Awaiting your decision ({waiting.length})</h2>
                {waiting.length === 0 ? (
                  <Empty>No plan awaits approval.</Empty>
                ) : (
                  <ul class="plan-list">
                    {waiting.map((p) => (
                      <PlanCard key={p.id} project={project} plan={p} onChange={loaded.reload} />
                    ))}
                  </ul>
                )}
              </section>
              <section aria-labelledby="plans-all-h">
                <h2 id="plans-all-h">Other plans ({rest.length})</h2>
                {rest.length === 0 ? (
                  <Empty>
                    No other plans. Push a plan document (a Markdown file with a title, goal, steps, risks and
                    a "done when" section) to the default branch.
                  </Empty>
                ) : (
                  <ul class="plan-list">
                    {rest.map((p) => (
                      <PlanCard key={p.id} project={project} plan={p} onChange={loaded.reload} />
                    ))}
                  </ul>
                )}
              </section>
            </>
          );
        }}
      </Load>
    </>
  );
}
