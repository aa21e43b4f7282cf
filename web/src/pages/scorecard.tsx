/** The scorecard: score, levels, checks with their evidence, and quick actions to run. */
import { useState } from 'preact/hooks';
import {
  api,
  type Check,
  type Level,
  type List,
  listAll,
  type QuickAction,
  type Scorecard,
  useLoad,
} from '../api';
import { Link, navigate } from '../router';
import { Empty, Load, PageHeading, projectPath, shortSha, TableWrap, Time } from '../ui';
import { Timeline } from './timeline';

async function loadScorecard(project: string) {
  const cards = await api<List<Scorecard>>('GET', '/scorecards', { project, query: { limit: 1 } });
  const card = cards.data[0] ?? null;
  const levels = await listAll<Level>('/scorecard-levels', project, {}, 50);
  if (!card) return { card: null, levels: levels.data, checks: [], actions: [] };
  const [checks, actions] = await Promise.all([
    listAll<Check>('/checks', project, { scorecard_id: card.id }, 500),
    listAll<QuickAction>('/quick-actions', project, { scorecard_id: card.id }, 200),
  ]);
  return { card, levels: levels.data, checks: checks.data, actions: actions.data };
}

function ComputeButton({ project, label }: { project: string; label: string }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        onClick={async () => {
          setError(null);
          try {
            const ack = await api<{ id: string }>('POST', '/scorecards', { project });
            navigate(projectPath(project, 'tasks', ack.id));
          } catch (e) {
            setError((e as Error).message);
          }
        }}
      >
        {label}
      </button>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </>
  );
}

function RunAction({
  project,
  action,
  onDone,
}: {
  project: string;
  action: QuickAction;
  onDone: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [started, setStarted] = useState<string | null>(null);
  if (!action.operation)
    return <span class="muted small">{action.why_no_operation ?? 'svc cannot do this one'}</span>;
  if (action.status === 'running' || action.status === 'done')
    return action.task_id ? (
      <Link href={projectPath(project, 'tasks', action.task_id)}>{action.status}: see the task</Link>
    ) : (
      <span>{action.status}</span>
    );
  return (
    <>
      <button
        type="button"
        class="small"
        onClick={async () => {
          setError(null);
          try {
            const ack = await api<{ id: string }>(
              'POST',
              `/quick-actions/${encodeURIComponent(action.id)}/runs`,
              { project },
            );
            setStarted(ack.id);
            onDone();
          } catch (e) {
            setError((e as Error).message);
          }
        }}
      >
        Run: {action.title}
      </button>
      {started ? (
        <span role="status">
          {' '}
          Started: <Link href={projectPath(project, 'tasks', started)}>follow it</Link>
        </span>
      ) : null}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </>
  );
}

export function ScorecardPage({ project }: { project: string }) {
  const loaded = useLoad(() => loadScorecard(project), [project]);
  const [result, setResult] = useState('');
  return (
    <>
      <PageHeading title="Scorecard">Scorecard</PageHeading>
      <Load loaded={loaded} what="the scorecard">
        {({ card, levels, checks, actions }) =>
          !card ? (
            <section class="empty-state" aria-labelledby="none-h">
              <h2 id="none-h">No scorecard yet</h2>
              <p>
                A scorecard rates how ready the repository is for reviews (lockfile, CI, branch protection,
                the review check being required…) and suggests one-click next steps. Setup computes the first
                one; you can compute it now.
              </p>
              <ComputeButton project={project} label="Compute the scorecard" />
              <h3>The levels to climb</h3>
              <ol>
                {levels.map((l) => (
                  <li key={l.id}>
                    <strong>{l.name}</strong>: {l.description}
                  </li>
                ))}
              </ol>
            </section>
          ) : (
            <>
              <section aria-labelledby="score-h" class="summary">
                <h2 id="score-h">
                  Score {card.score ?? '—'}
                  {card.score !== null ? ' / 100' : ''} · level {card.level.level} ({card.level.name})
                </h2>
                <p>
                  Checks:{' '}
                  {(['pass', 'fail', 'unknown'] as const).map((r, i) => (
                    <span key={r}>
                      {i > 0 ? ', ' : ''}
                      <button
                        type="button"
                        class="link"
                        onClick={() => {
                          setResult(r);
                          document.getElementById('checks')?.scrollIntoView();
                        }}
                        aria-label={`${card.counts[r]} ${r}: show these checks`}
                      >
                        {card.counts[r]} {r}
                      </button>
                    </span>
                  ))}
                  . Computed <Time iso={card.computed_at} /> ({card.trigger}) at{' '}
                  <code>{shortSha(card.commit_sha)}</code>
                  {card.task_id ? (
                    <>
                      {' '}
                      by <Link href={projectPath(project, 'tasks', card.task_id)}>this task</Link>
                    </>
                  ) : null}
                  .
                </p>
                {card.next_level ? (
                  <p>
                    Next: level {card.next_level.level} ({card.next_level.name}) needs{' '}
                    {card.next_level.needs.map((n, i) => (
                      <span key={n}>
                        {i > 0 ? ', ' : ''}
                        <code>{n}</code>
                      </span>
                    ))}
                    .
                  </p>
                ) : (
                  <p>The top level is reached.</p>
                )}
                {card.gaps.length > 0 ? (
                  <div class="notice">
                    <strong>Could not read:</strong>
                    <ul>
                      {card.gaps.map((g) => (
                        <li key={g.code}>
                          <code>{g.code}</code>: {g.message}
                        </li>
                      ))}
                    </ul>
                  </div>
                ) : null}
                <ComputeButton project={project} label="Recompute the scorecard" />
              </section>
              <section aria-labelledby="qa-h">
                <h2 id="qa-h">Quick actions</h2>
                {actions.length === 0 ? (
                  <Empty>No quick action suggested: nothing svc can do for you right now.</Empty>
                ) : (
                  <ul class="cards">
                    {actions.map((a) => (
                      <li key={a.id} class="card">
                        <h3>{a.title}</h3>
                        <p>{a.does}</p>
                        <p class="muted small">
                          Makes <code>{a.check}</code> pass · status {a.status}
                          {a.result?.pull_request ? (
                            <>
                              {' · '}
                              <a
                                href={String((a.result.pull_request as { url?: string }).url ?? '#')}
                                rel="noreferrer"
                              >
                                its pull request
                              </a>
                            </>
                          ) : null}
                        </p>
                        <RunAction project={project} action={a} onDone={loaded.reload} />
                      </li>
                    ))}
                  </ul>
                )}
              </section>
              <section aria-labelledby="levels-h">
                <h2 id="levels-h">Levels</h2>
                <ol class="levels">
                  {levels.map((l) => (
                    <li key={l.id} class={l.reached ? 'reached' : 'not-reached'}>
                      <span aria-hidden="true">{l.reached ? '✔ ' : '○ '}</span>
                      <strong>
                        Level {l.level}: {l.name}
                      </strong>{' '}
                      <span class="muted">({l.reached ? 'reached' : 'not reached'})</span> — {l.description}
                    </li>
                  ))}
                </ol>
              </section>
              <section aria-labelledby="checks-h" id="checks">
                <h2 id="checks-h">Checks</h2>
                <label>
                  Show{' '}
                  <select value={result} onChange={(e) => setResult((e.target as HTMLSelectElement).value)}>
                    <option value="">every check</option>
                    <option value="fail">failing</option>
                    <option value="unknown">unknown</option>
                    <option value="pass">passing</option>
                  </select>
                </label>
                <TableWrap>
                  <table>
                    <caption>Checks of scorecard {card.id}</caption>
                    <thead>
                      <tr>
                        <th scope="col">Check</th>
                        <th scope="col">Result</th>
                        <th scope="col">Evidence</th>
                        <th scope="col">Remedy</th>
                      </tr>
                    </thead>
                    <tbody>
                      {checks
                        .filter((c) => !result || c.result === result)
                        .map((c) => (
                          <tr key={c.id}>
                            <td>
                              {c.title}
                              <div class="muted small">
                                <code>{c.check}</code> · {c.category} · weight {c.weight}
                              </div>
                            </td>
                            <td>
                              <span class={`result r-${c.result}`}>
                                <span aria-hidden="true">
                                  {c.result === 'pass' ? '✔ ' : c.result === 'fail' ? '✖ ' : '? '}
                                </span>
                                {c.result}
                              </span>
                            </td>
                            <td class="small">
                              {c.evidence.note}
                              {c.evidence.paths?.length ? (
                                <div>
                                  {c.evidence.paths.map((p) => (
                                    <code key={p}>{p} </code>
                                  ))}
                                </div>
                              ) : null}
                              {c.evidence.numbers ? (
                                <div>
                                  {Object.entries(c.evidence.numbers)
                                    .map(([k, v]) => `${k}: ${v}`)
                                    .join(', ')}
                                </div>
                              ) : null}
                            </td>
                            <td class="small">{c.result === 'pass' ? '—' : c.remedy}</td>
                          </tr>
                        ))}
                    </tbody>
                  </table>
                </TableWrap>
              </section>
              <Timeline project={project} subjectType="scorecard" subjectId={card.id} />
            </>
          )
        }
      </Load>
    </>
  );
}
