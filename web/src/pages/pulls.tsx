/** Pull requests: blocked first, with review status, the check's conclusion and open findings. */
import { useState } from 'preact/hooks';
import {
  api,
  type Finding,
  listAll,
  type PullRequest,
  type ReviewResult,
  SEVERITIES,
  type Settings,
  useLoad,
} from '../api';
import { Link } from '../router';
import { sortedBySeverity } from '../severity';
import {
  Conclusion,
  type Conclusions,
  CountLinks,
  type Counts,
  checkConclusion,
  DEFAULT_CONCLUSIONS,
  Empty,
  findingsHref,
  Load,
  noCounts,
  PageHeading,
  projectPath,
  shortSha,
  TableWrap,
  Time,
} from '../ui';
import { FindingsTable } from './findings';
import { Timeline } from './timeline';

export interface PullRow {
  pr: PullRequest;
  open: Counts;
  conclusion: string;
  blocked: boolean;
}

export interface Overview {
  rows: PullRow[];
  /** Open findings not on a pull request (commit-range reviews). */
  outside: Counts;
  totals: Counts;
  truncated: boolean;
}

let conclusionsCache: Promise<Conclusions> | null = null;
/** The workspace's conclusion settings (the defaults when they cannot be read). */
export function conclusions(): Promise<Conclusions> {
  conclusionsCache ??= api<Settings>('GET', '/settings').then(
    (s) => ({ ...DEFAULT_CONCLUSIONS, ...(s.values as Partial<Conclusions>) }),
    () => DEFAULT_CONCLUSIONS,
  );
  return conclusionsCache;
}

/** After the workspace settings change. */
export const forgetConclusions = () => {
  conclusionsCache = null;
};

const blockingValue = (c: string) => c === 'action_required' || c === 'failure';

export async function loadOverview(project: string): Promise<Overview> {
  const [prs, open, settings] = await Promise.all([
    listAll<PullRequest>('/pull-requests', project, {}, 1000),
    listAll<Finding>('/findings', project, { status: 'open' }, 5000),
    conclusions(),
  ]);
  const byPr = new Map<string, Counts>();
  const outside = noCounts();
  const totals = noCounts();
  for (const f of open.data) {
    totals[f.severity]++;
    if (!f.pull_request_id) {
      outside[f.severity]++;
      continue;
    }
    const c = byPr.get(f.pull_request_id) ?? noCounts();
    c[f.severity]++;
    byPr.set(f.pull_request_id, c);
  }
  const rows = prs.data.map((pr) => {
    const counts = byPr.get(pr.id) ?? noCounts();
    const conclusion = checkConclusion(pr, counts, settings);
    return { pr, open: counts, conclusion, blocked: counts.P0 > 0 || blockingValue(conclusion) };
  });
  const openState = (r: PullRow) => (r.pr.state === 'open' ? 0 : 1);
  rows.sort(
    (a, b) =>
      Number(b.blocked) - Number(a.blocked) ||
      openState(a) - openState(b) ||
      b.open.P0 - a.open.P0 ||
      b.open.P1 - a.open.P1 ||
      b.pr.updated_at.localeCompare(a.pr.updated_at),
  );
  return { rows, outside, totals, truncated: prs.truncated || open.truncated };
}

/** What one review pass left open, and what it changed in the ledger. */
function PassCounts({ counts }: { counts: Record<string, number> }) {
  const n = (k: string) => counts[k] ?? 0;
  return (
    <>
      <span class="counts">
        {SEVERITIES.map((s) => (
          <span key={s} class={`count sev-${s}${n(s.toLowerCase()) === 0 ? ' zero' : ''}`}>
            {n(s.toLowerCase())} {s}
          </span>
        ))}
      </span>
      <div class="muted small">
        {n('opened')} new, {n('fixed')} fixed, {n('files')} files read
      </div>
    </>
  );
}

export function PullTable({ project, rows, caption }: { project: string; rows: PullRow[]; caption: string }) {
  return (
    <TableWrap>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Pull request</th>
            <th scope="col">State</th>
            <th scope="col">Review status</th>
            <th scope="col">Check</th>
            <th scope="col">Open findings</th>
            <th scope="col">Last reviewed</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ pr, open, conclusion, blocked }) => (
            <tr key={pr.id} class={blocked ? 'blocked' : undefined}>
              <td>
                <Link href={projectPath(project, 'pull-requests', pr.id)}>
                  #{pr.number} {pr.title}
                </Link>
                {blocked ? <span class="tag tag-blocked">blocked</span> : null}
                {pr.draft ? <span class="tag">draft</span> : null}
                <div class="muted small">
                  {pr.author ? `${pr.author} · ` : ''}
                  {pr.head_ref ?? '?'} → {pr.base_ref ?? '?'}
                </div>
              </td>
              <td>{pr.state}</td>
              <td>
                <span class="status">{pr.review_status ?? 'not reviewed'}</span>
                {pr.auto_review ? null : <div class="muted small">auto review off</div>}
              </td>
              <td>
                <Conclusion value={conclusion} />
              </td>
              <td>
                <CountLinks
                  project={project}
                  counts={open}
                  filters={{ pull_request_id: pr.id }}
                  label={`on pull request #${pr.number}`}
                />
              </td>
              <td>
                <Time iso={pr.last_reviewed_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

export function ProjectPulls({ project }: { project: string }) {
  const loaded = useLoad(() => loadOverview(project), [project]);
  const [showClosed, setShowClosed] = useState(false);
  return (
    <>
      <PageHeading title="Pull requests">Pull requests</PageHeading>
      <Load loaded={loaded} what="pull requests">
        {(o) => {
          const blocked = o.rows.filter((r) => r.blocked && r.pr.state === 'open');
          const rest = o.rows.filter((r) => !(r.blocked && r.pr.state === 'open'));
          const shown = showClosed ? rest : rest.filter((r) => r.pr.state === 'open');
          return (
            <>
              <section aria-labelledby="totals-h" class="summary">
                <h2 id="totals-h">Open findings in this project</h2>
                <CountLinks project={project} counts={o.totals} filters={{}} label="in this project" />
                {o.outside.P0 + o.outside.P1 + o.outside.P2 > 0 ? (
                  <p class="muted small">
                    Of these, {o.outside.P0 + o.outside.P1 + o.outside.P2} come from commit-range reviews, on
                    no pull request.
                  </p>
                ) : null}
                {o.truncated ? (
                  <p class="notice">Very many records: the counts cover the first thousands only.</p>
                ) : null}
              </section>
              <section aria-labelledby="blocked-h">
                <h2 id="blocked-h">Blocked pull requests ({blocked.length})</h2>
                {blocked.length === 0 ? (
                  <Empty>No open pull request is blocked: no open P0 finding.</Empty>
                ) : (
                  <PullTable
                    project={project}
                    rows={blocked}
                    caption="Blocked pull requests (open P0: the check fails)"
                  />
                )}
              </section>
              <section aria-labelledby="all-h">
                <h2 id="all-h">Other pull requests</h2>
                <label class="inline">
                  <input
                    type="checkbox"
                    checked={showClosed}
                    onChange={(e) => setShowClosed((e.target as HTMLInputElement).checked)}
                  />{' '}
                  Show closed and merged pull requests
                </label>
                {shown.length === 0 ? (
                  <Empty>
                    No {showClosed ? '' : 'open '}pull requests yet. svc records a pull request when it
                    reviews one (a webhook, the watcher, or <em>Request a review</em> on a pull request page).
                  </Empty>
                ) : (
                  <PullTable project={project} rows={shown} caption="Pull requests" />
                )}
              </section>
            </>
          );
        }}
      </Load>
    </>
  );
}

export function PullRequestPage({ project, id }: { project: string; id: string }) {
  const loaded = useLoad(async () => {
    const [pr, open, results, settings] = await Promise.all([
      api<PullRequest>('GET', `/pull-requests/${encodeURIComponent(id)}`, { project }),
      listAll<Finding>('/findings', project, { pull_request_id: id, status: 'open' }, 1000),
      listAll<ReviewResult>('/review-results', project, { pull_request_id: id }, 200),
      conclusions(),
    ]);
    const counts = noCounts();
    for (const f of open.data) counts[f.severity]++;
    return {
      pr,
      open: sortedBySeverity(open.data),
      counts,
      results: results.data,
      conclusion: checkConclusion(pr, counts, settings),
    };
  }, [project, id]);
  const [requested, setRequested] = useState<{ id: string } | null>(null);
  const [requestError, setRequestError] = useState<Error | null>(null);
  return (
    <Load loaded={loaded} what="the pull request">
      {({ pr, open, counts, results, conclusion }) => (
        <>
          <PageHeading title={`#${pr.number} ${pr.title}`}>
            #{pr.number} {pr.title}
          </PageHeading>
          <dl class="facts">
            <dt>State</dt>
            <dd>{pr.state}</dd>
            <dt>Author</dt>
            <dd>{pr.author ?? '—'}</dd>
            <dt>Branches</dt>
            <dd>
              {pr.head_ref ?? '?'} → {pr.base_ref ?? '?'} (head {shortSha(pr.head_sha)})
            </dd>
            <dt>Review status</dt>
            <dd>{pr.review_status ?? 'not reviewed'}</dd>
            <dt>Check (Service / Review)</dt>
            <dd>
              <Conclusion value={conclusion} />
            </dd>
            <dt>Open findings</dt>
            <dd>
              <CountLinks
                project={project}
                counts={counts}
                filters={{ pull_request_id: pr.id }}
                label={`on pull request #${pr.number}`}
              />
            </dd>
            <dt>Last reviewed</dt>
            <dd>
              <Time iso={pr.last_reviewed_at} />
            </dd>
            <dt>Automatic review</dt>
            <dd>{pr.auto_review ? 'on' : 'off (@service review off)'}</dd>
          </dl>
          <div class="actions">
            <button
              type="button"
              onClick={async () => {
                setRequestError(null);
                try {
                  const ack = await api<{ id: string }>('POST', '/reviews', {
                    project,
                    body: { pr: pr.number },
                  });
                  setRequested(ack);
                } catch (e) {
                  setRequestError(e as Error);
                }
              }}
            >
              Request a review
            </button>
            {requested ? (
              <p role="status">
                Review started: <Link href={projectPath(project, 'reviews', requested.id)}>follow it</Link>.
              </p>
            ) : null}
            {requestError ? (
              <p class="error" role="alert">
                {requestError.message}
              </p>
            ) : null}
          </div>
          <section aria-labelledby="passes-h">
            <h2 id="passes-h">Reviews of this pull request</h2>
            {results.length === 0 ? (
              <Empty>No review pass recorded yet.</Empty>
            ) : (
              <TableWrap>
                <table>
                  <caption>Review passes, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Review</th>
                      <th scope="col">Head</th>
                      <th scope="col">Reviewers</th>
                      <th scope="col">Left open</th>
                    </tr>
                  </thead>
                  <tbody>
                    {results.map((r) => (
                      <tr key={r.id}>
                        <td>
                          <Time iso={r.created_at} />
                        </td>
                        <td>
                          <Link href={projectPath(project, 'reviews', r.task_id)}>Review {r.task_id}</Link>
                        </td>
                        <td>
                          <code>{shortSha(r.head_sha)}</code>
                        </td>
                        <td>{r.lineup.map((l) => String(l.reviewer_id ?? l.id ?? '?')).join(', ') || '—'}</td>
                        <td>
                          <PassCounts counts={r.counts} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
          </section>
          <section aria-labelledby="open-h">
            <h2 id="open-h">Open findings</h2>
            {open.length === 0 ? (
              <Empty>No open findings on this pull request.</Empty>
            ) : (
              <FindingsTable
                project={project}
                findings={open}
                caption="Open findings on this pull request"
                onChange={loaded.reload}
              />
            )}
            <p>
              <Link href={findingsHref(project, { pull_request_id: pr.id })}>
                Every finding of this pull request (fixed and dismissed too)
              </Link>
            </p>
          </section>
          <Timeline project={project} subjectType="pull_request" subjectId={pr.id} />
        </>
      )}
    </Load>
  );
}
