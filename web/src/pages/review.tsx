/** One review: its run, its lineup, and its findings beside the lines they point at, file by file. */
import { useEffect } from 'preact/hooks';
import { api, type Finding, type List, type Review, type ReviewResult, useLoad } from '../api';
import { Link } from '../router';
import { SEVERITY_RANK } from '../severity';
import { Empty, fmtUsd, Load, PageHeading, projectPath, shortSha, Time } from '../ui';
import { FileFindings } from './diff';
import { RunReceiptView } from './task';
import { Timeline } from './timeline';

function byFile(findings: Finding[]): [string, Finding[]][] {
  const files = new Map<string, Finding[]>();
  for (const f of findings) {
    const list = files.get(f.path) ?? [];
    list.push(f);
    files.set(f.path, list);
  }
  // Within a file the diff's order (by line); the files themselves worst first, then by path.
  for (const list of files.values())
    list.sort((a, b) => a.line - b.line || SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
  const worst = (list: Finding[]) => Math.min(...list.map((f) => SEVERITY_RANK[f.severity]));
  return [...files.entries()].sort(([a, fa], [b, fb]) => worst(fa) - worst(fb) || a.localeCompare(b));
}

export function ReviewPage({ project, id }: { project: string; id: string }) {
  const loaded = useLoad(async () => {
    const [review, results] = await Promise.all([
      api<Review>('GET', `/reviews/${encodeURIComponent(id)}`, { project }),
      api<List<ReviewResult>>('GET', '/review-results', { project, query: { task_id: id, limit: 1 } }).catch(
        () => null,
      ),
    ]);
    return { review, result: results?.data[0] ?? null };
  }, [project, id]);
  const status = loaded.data?.review.run?.status;
  // Follow a review that is still running.
  useEffect(() => {
    if (status !== 'pending' && status !== 'running') return;
    const t = setTimeout(loaded.reload, 3000);
    return () => clearTimeout(t);
  });
  return (
    <Load loaded={loaded} what="the review">
      {({ review, result }) => {
        const findings = review.findings ?? [];
        return (
          <>
            <PageHeading title={`Review ${review.id}`}>
              Review{' '}
              {review.pr
                ? `of pull request #${review.pr}`
                : `of ${shortSha(review.base)}…${shortSha(review.head)}`}
            </PageHeading>
            <dl class="facts">
              <dt>Review id</dt>
              <dd>
                <code>{review.id}</code> (
                <Link href={projectPath(project, 'tasks', review.id)}>as a task</Link>)
              </dd>
              {result?.pull_request_id ? (
                <>
                  <dt>Pull request</dt>
                  <dd>
                    <Link href={projectPath(project, 'pull-requests', result.pull_request_id)}>
                      #{review.pr}
                    </Link>
                  </dd>
                </>
              ) : null}
              {result ? (
                <>
                  <dt>Compared</dt>
                  <dd>
                    <code>{shortSha(result.base_sha)}</code> … <code>{shortSha(result.head_sha)}</code>
                  </dd>
                  <dt>Lineup</dt>
                  <dd>
                    {result.lineup.length === 0
                      ? '—'
                      : result.lineup.map((l, i) => {
                          const rid = String(l.reviewer_id ?? l.id ?? '?');
                          return (
                            <span key={rid + String(i)}>
                              {i > 0 ? ', ' : ''}
                              <Link href={projectPath(project, 'reviewers', rid)}>{rid}</Link>
                              {l.model ? <span class="muted"> on {String(l.model)}</span> : null}
                            </span>
                          );
                        })}
                  </dd>
                </>
              ) : review.reviewers ? (
                <>
                  <dt>Lineup</dt>
                  <dd>
                    {review.reviewers
                      .map((r) => r.reviewer_id + (r.model ? ` on ${r.model}` : ''))
                      .join(', ')}
                  </dd>
                </>
              ) : null}
              <dt>Delivery</dt>
              <dd>{review.delivery === 'codehost' ? 'posted on the pull request' : 'read here only'}</dd>
              <dt>Cost</dt>
              <dd>{fmtUsd(review.run?.cost_usd)}</dd>
              <dt>Started</dt>
              <dd>
                <Time iso={review.created_at} />
              </dd>
            </dl>
            {review.run ? <RunReceiptView run={review.run} /> : <Empty>This review has not run yet.</Empty>}
            <section aria-labelledby="findings-h">
              <h2 id="findings-h">
                Findings
                {review.findings ? ` (${findings.length}${review.findings_truncated ? '+' : ''})` : ''}
              </h2>
              {review.findings === null ? (
                <Empty>The findings appear once the run is done.</Empty>
              ) : findings.length === 0 ? (
                <Empty>This review found nothing.</Empty>
              ) : (
                <>
                  <p class="muted small">
                    Each finding sits under the lines it points at, in the diff the review read, file by file.
                  </p>
                  {review.findings_truncated ? (
                    <p class="notice">
                      More findings than one page:{' '}
                      <Link
                        href={`${projectPath(project, 'findings')}?task_id=${encodeURIComponent(review.id)}`}
                      >
                        see them all in the ledger
                      </Link>
                      .
                    </p>
                  ) : null}
                  {byFile(findings).map(([path, list]) => (
                    <section key={path} class="file" aria-label={`File ${path}`}>
                      <h3 class="file-path">
                        <code>{path}</code>{' '}
                        <span class="muted small">
                          {list.length} finding{list.length === 1 ? '' : 's'}
                        </span>
                      </h3>
                      <FileFindings
                        project={project}
                        passId={result?.id ?? null}
                        path={path}
                        findings={list}
                        onChange={loaded.reload}
                      />
                    </section>
                  ))}
                </>
              )}
            </section>
            <Timeline project={project} subjectType="task" subjectId={review.id} hideWhenEmpty />
          </>
        );
      }}
    </Load>
  );
}
