/** The findings ledger: filters, one finding, and dismiss / reopen with a reason. */
import { useState } from 'preact/hooks';
import { api, type Finding, type List, listAll, type PullRequest, useLoad } from '../api';
import { Markdown } from '../markdown';
import { ReasonDialog } from '../reason-dialog';
import { Link, navigate } from '../router';
import { sortedBySeverity } from '../severity';
import { Empty, Load, PageHeading, projectPath, Sev, shortSha, TableWrap, Time } from '../ui';
import { Timeline } from './timeline';

/** Dismiss (needs a reason) or reopen a finding, through a dialog. */
export function DispositionButton({
  project,
  finding,
  onDone,
}: {
  project: string;
  finding: Finding;
  onDone: () => void;
}) {
  if (finding.status === 'fixed') return <span class="muted small">fixed</span>;
  const dismissing = finding.status === 'open';
  return (
    <ReasonDialog
      id={finding.id}
      verb={dismissing ? 'Dismiss' : 'Reopen'}
      noun="finding"
      required={dismissing}
      whyRequired="A dismissal needs a reason: say why the finding is wrong or not worth fixing."
      hint={dismissing ? 'The check recomputes without a new run; later reviews keep it dismissed.' : null}
      submit={async (reason) => {
        await api('POST', `/findings/${encodeURIComponent(finding.id)}/events`, {
          project,
          body: { kind: dismissing ? 'dismissed' : 'reopened', payload: reason ? { reason } : {} },
        });
        onDone();
      }}
    >
      <p>
        <Sev s={finding.severity} /> {finding.title}
        <br />
        <code>
          {finding.path}:{finding.line}
        </code>
      </p>
    </ReasonDialog>
  );
}

export function FindingsTable({
  project,
  findings,
  caption,
  onChange,
}: {
  project: string;
  findings: Finding[];
  caption: string;
  onChange: () => void;
}) {
  return (
    <TableWrap>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Finding</th>
            <th scope="col">Where</th>
            <th scope="col">Status</th>
            <th scope="col">Review</th>
            <th scope="col">Updated</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {findings.map((f) => (
            <tr key={f.id}>
              <td>
                <Sev s={f.severity} />
              </td>
              <td>
                <Link href={projectPath(project, 'findings', f.id)}>{f.title}</Link>
                <div class="muted small">{f.rule}</div>
              </td>
              <td>
                <code>
                  {f.path}:{f.line}
                  {f.end_line > f.line ? `–${f.end_line}` : ''}
                </code>
              </td>
              <td>
                <span class={`st st-${f.status}`}>{f.status}</span>
                {f.dismissed_reason ? <div class="muted small">“{f.dismissed_reason}”</div> : null}
              </td>
              <td>
                <Link href={projectPath(project, 'reviews', f.task_id)}>review</Link>
                {f.pull_request_id ? (
                  <>
                    {' · '}
                    <Link href={projectPath(project, 'pull-requests', f.pull_request_id)}>pull request</Link>
                  </>
                ) : null}
              </td>
              <td>
                <Time iso={f.updated_at} />
              </td>
              <td>
                <DispositionButton project={project} finding={f} onDone={onChange} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

const FILTERS = ['status', 'severity', 'pull_request_id', 'task_id', 'path'] as const;

/** The ledger's orders: by severity (the default, as everywhere) or as the API pages it. */
const SORTS = {
  severity: { label: 'Severity (P0 first), then file and line', caption: 'P0 first, then file and line' },
  newest: { label: 'Newest first', caption: 'newest first' },
} as const;
type Sort = keyof typeof SORTS;
/** Sorting by severity reads the whole filtered ledger, up to this many findings. */
const SORTED_MAX = 2000;

export function FindingsPage({ project, query }: { project: string; query: URLSearchParams }) {
  const filters = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ''])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const sort: Sort = query.get('sort') === 'newest' ? 'newest' : 'severity';
  const key = [...FILTERS.map((k) => filters[k]), sort].join('|');
  const [pages, setPages] = useState<{ key: string; extra: Finding[]; cursor: string | null } | null>(null);
  const loaded = useLoad(async (): Promise<List<Finding> & { truncated?: boolean }> => {
    if (sort === 'newest')
      return api<List<Finding>>('GET', '/findings', { project, query: { ...filters, limit: 100 } });
    const all = await listAll<Finding>('/findings', project, filters, SORTED_MAX);
    return { object: 'list', data: sortedBySeverity(all.data), next_cursor: null, truncated: all.truncated };
  }, [project, key]);
  const prs = useLoad(() => listAll<PullRequest>('/pull-requests', project, {}, 500), [project]);
  const extra = pages?.key === key ? pages : null;
  const cursor = extra ? extra.cursor : (loaded.data?.next_cursor ?? null);
  const [draft, setDraft] = useState({ ...filters, sort });
  const [draftKey, setDraftKey] = useState(key);
  if (draftKey !== key) {
    setDraft({ ...filters, sort });
    setDraftKey(key);
  }
  const apply = (next: typeof draft) => {
    const q = new URLSearchParams();
    for (const k of FILTERS) if (next[k]) q.set(k, next[k]);
    if (next.sort !== 'severity') q.set('sort', next.sort);
    const s = q.toString();
    navigate(`${projectPath(project, 'findings')}${s ? `?${s}` : ''}`);
  };
  const set = (k: (typeof FILTERS)[number] | 'sort') => (e: Event) =>
    setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });
  return (
    <>
      <PageHeading title="Findings">Findings ledger</PageHeading>
      <form
        class="filters"
        aria-label="Filter findings"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          Status
          <select value={draft.status} onChange={set('status')}>
            <option value="">any</option>
            <option value="open">open</option>
            <option value="dismissed">dismissed</option>
            <option value="fixed">fixed</option>
          </select>
        </label>
        <label>
          Severity
          <select value={draft.severity} onChange={set('severity')}>
            <option value="">any</option>
            <option value="P0">P0</option>
            <option value="P1">P1</option>
            <option value="P2">P2</option>
          </select>
        </label>
        <label>
          Pull request
          <select value={draft.pull_request_id} onChange={set('pull_request_id')}>
            <option value="">any</option>
            {(prs.data?.data ?? []).map((pr) => (
              <option key={pr.id} value={pr.id}>
                #{pr.number} {pr.title.slice(0, 60)}
              </option>
            ))}
            {draft.pull_request_id && !prs.data?.data.some((p) => p.id === draft.pull_request_id) ? (
              <option value={draft.pull_request_id}>{draft.pull_request_id}</option>
            ) : null}
          </select>
        </label>
        <label>
          Path
          <input type="text" value={draft.path} onInput={set('path')} placeholder="src/app.ts" />
        </label>
        <label>
          Review id
          <input type="text" value={draft.task_id} onInput={set('task_id')} />
        </label>
        <label>
          Sort
          <select value={draft.sort} onChange={set('sort')}>
            {Object.entries(SORTS).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            class="secondary"
            onClick={() =>
              apply({
                status: '',
                severity: '',
                pull_request_id: '',
                task_id: '',
                path: '',
                sort: 'severity',
              })
            }
          >
            Clear filters
          </button>
        </div>
      </form>
      <Load loaded={loaded} what="findings">
        {(list) => {
          const rows = [...list.data, ...(extra?.extra ?? [])];
          const described = FILTERS.filter((k) => filters[k])
            .map((k) => `${k.replace('_id', '').replace('_', ' ')} ${filters[k]}`)
            .join(', ');
          return rows.length === 0 ? (
            <Empty>No findings{described ? ` match ${described}` : ' yet'}.</Empty>
          ) : (
            <>
              {list.truncated ? (
                <p class="notice">
                  Sorted over the first {SORTED_MAX} findings only: narrow the filters, or sort newest first
                  to page through all of them.
                </p>
              ) : null}
              <FindingsTable
                project={project}
                findings={rows}
                caption={`Findings${described ? ` (${described})` : ''}: ${rows.length}${cursor || list.truncated ? '+' : ''}, ${SORTS[sort].caption}`}
                onChange={() => {
                  setPages(null);
                  loaded.reload();
                }}
              />
              {cursor ? (
                <button
                  type="button"
                  onClick={async () => {
                    const next = await api<List<Finding>>('GET', '/findings', {
                      project,
                      query: { ...filters, limit: 100, cursor },
                    });
                    setPages({
                      key,
                      extra: [...(extra?.extra ?? []), ...next.data],
                      cursor: next.next_cursor,
                    });
                  }}
                >
                  Load more findings
                </button>
              ) : null}
            </>
          );
        }}
      </Load>
    </>
  );
}

export function FindingPage({ project, id }: { project: string; id: string }) {
  const loaded = useLoad(
    () => api<Finding>('GET', `/findings/${encodeURIComponent(id)}`, { project }),
    [project, id],
  );
  const [tick, setTick] = useState(0);
  return (
    <Load loaded={loaded} what="the finding">
      {(f) => (
        <>
          <PageHeading title={f.title}>
            <Sev s={f.severity} /> {f.title}
          </PageHeading>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`st st-${f.status}`}>{f.status}</span>{' '}
              <DispositionButton
                project={project}
                finding={f}
                onDone={() => {
                  loaded.reload();
                  setTick((t) => t + 1);
                }}
              />
            </dd>
            {f.dismissed_reason ? (
              <>
                <dt>Dismissed because</dt>
                <dd>
                  “{f.dismissed_reason}” (<Time iso={f.dismissed_at} />)
                </dd>
              </>
            ) : null}
            {f.fixed_at ? (
              <>
                <dt>Fixed</dt>
                <dd>
                  <Time iso={f.fixed_at} />
                </dd>
              </>
            ) : null}
            <dt>Where</dt>
            <dd>
              <code>
                {f.path}:{f.line}
                {f.end_line > f.line ? `–${f.end_line}` : ''}
              </code>{' '}
              at commit <code>{shortSha(f.commit_sha)}</code>
            </dd>
            <dt>Rule</dt>
            <dd>
              <code>{f.rule}</code> ({f.category})
            </dd>
            <dt>Reported by</dt>
            <dd>
              {f.reviewers.map((r, i) => (
                <span key={r}>
                  {i > 0 ? ', ' : ''}
                  <Link href={projectPath(project, 'reviewers', r)}>{r}</Link>
                </span>
              ))}
            </dd>
            <dt>Review</dt>
            <dd>
              <Link href={projectPath(project, 'reviews', f.task_id)}>{f.task_id}</Link>
              {f.pull_request_id ? (
                <>
                  {' on '}
                  <Link href={projectPath(project, 'pull-requests', f.pull_request_id)}>
                    its pull request
                  </Link>
                </>
              ) : null}
            </dd>
            <dt>First reported</dt>
            <dd>
              <Time iso={f.created_at} />
            </dd>
          </dl>
          <section aria-labelledby="body-h">
            <h2 id="body-h">What it says</h2>
            <Markdown text={f.body} />
            {f.suggestion ? (
              <>
                <h3>Suggested fix</h3>
                <pre class="code">{f.suggestion}</pre>
              </>
            ) : null}
          </section>
          <Timeline key={tick} project={project} subjectType="finding" subjectId={f.id} />
        </>
      )}
    </Load>
  );
}
