/** A task (setup, review, scorecard, quick action) with its latest run's receipt, followed live. */
import { useEffect } from 'preact/hooks';
import { api, type RunReceipt, type Task, useLoad } from '../api';
import { Link } from '../router';
import { fmtUsd, Load, PageHeading, projectPath, Time } from '../ui';
import { Timeline } from './timeline';

export function RunReceiptView({ run }: { run: RunReceipt }) {
  return (
    <section aria-labelledby={`run-${run.id}`} class="run">
      <h2 id={`run-${run.id}`}>Latest run</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`run-status rs-${run.status}`}>{run.status}</span>
        </dd>
        <dt>Run id</dt>
        <dd>
          <code>{run.id}</code>
        </dd>
        <dt>Queued</dt>
        <dd>
          <Time iso={run.created_at} />
        </dd>
        {run.finished_at ? (
          <>
            <dt>Finished</dt>
            <dd>
              <Time iso={run.finished_at} />
            </dd>
          </>
        ) : null}
        <dt>Cost</dt>
        <dd>{fmtUsd(run.cost_usd)}</dd>
      </dl>
      {run.error ? (
        <div class="error" role="alert">
          <strong>Failed: {run.error.code}</strong> — {run.error.message}
        </div>
      ) : null}
      {run.gaps.length > 0 ? (
        <div class="notice">
          <strong>Gaps (what fell short):</strong>
          <ul>
            {run.gaps.map((g) => (
              <li key={g.code + g.message}>
                <code>{g.code}</code>: {g.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

export function TaskPage({ project, id }: { project: string; id: string }) {
  const loaded = useLoad(
    () => api<Task>('GET', `/tasks/${encodeURIComponent(id)}`, { project }),
    [project, id],
  );
  const status = loaded.data?.run?.status;
  useEffect(() => {
    if (status !== 'pending' && status !== 'running') return;
    const t = setTimeout(loaded.reload, 2000);
    return () => clearTimeout(t);
  });
  return (
    <Load loaded={loaded} what="the task">
      {(task) => (
        <>
          <PageHeading title={task.title}>{task.title}</PageHeading>
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{task.kind}</dd>
            <dt>Task id</dt>
            <dd>
              <code>{task.id}</code>
            </dd>
            <dt>Created</dt>
            <dd>
              <Time iso={task.created_at} />
            </dd>
            {task.paused_reason ? (
              <>
                <dt>Paused</dt>
                <dd>{task.paused_reason}</dd>
              </>
            ) : null}
          </dl>
          {task.kind === 'review' ? (
            <p>
              <Link href={projectPath(project, 'reviews', task.id)}>Open the review and its findings</Link>
            </p>
          ) : null}
          {task.kind === 'scorecard' || task.kind === 'quick_action' ? (
            <p>
              <Link href={projectPath(project, 'scorecard')}>Open the scorecard</Link>
            </p>
          ) : null}
          {task.run ? <RunReceiptView run={task.run} /> : <p class="muted">No run yet.</p>}
          {status === 'pending' || status === 'running' ? (
            <p class="muted" role="status">
              Following the run: this page refreshes every 2 seconds.
            </p>
          ) : null}
          <Timeline project={project} subjectType="task" subjectId={task.id} hideWhenEmpty />
        </>
      )}
    </Load>
  );
}
