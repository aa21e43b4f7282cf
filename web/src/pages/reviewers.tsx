/** Reviewers with their governed model pins, and the models measured for each. */
import { api, type List, listAll, type Reviewer, type ReviewerModel, useLoad } from '../api';
import { Link } from '../router';
import { Empty, findingsHref, fmtMs, fmtUsd, Load, PageHeading, projectPath, TableWrap, Time } from '../ui';
import { Timeline } from './timeline';

export function ReviewersPage({ project }: { project: string }) {
  const loaded = useLoad(() => listAll<Reviewer>('/reviewers', project, {}, 1000), [project]);
  return (
    <>
      <PageHeading title="Reviewers">Reviewers</PageHeading>
      <p class="muted">Shared by every project of the workspace; most used first.</p>
      <Load loaded={loaded} what="reviewers">
        {({ data }) =>
          data.length === 0 ? (
            <Empty>No reviewers.</Empty>
          ) : (
            <TableWrap>
              <table>
                <caption>Reviewers ({data.length})</caption>
                <thead>
                  <tr>
                    <th scope="col">Reviewer</th>
                    <th scope="col">Engine</th>
                    <th scope="col">Model pin</th>
                    <th scope="col">Reviews that used it</th>
                    <th scope="col">Source</th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((r) => (
                    <tr key={r.id}>
                      <td>
                        <Link href={projectPath(project, 'reviewers', r.id)}>{r.name}</Link>{' '}
                        <code class="small">{r.id}</code>
                        {r.description ? <div class="muted small">{r.description}</div> : null}
                      </td>
                      <td>{r.engine === 'builtin' ? 'rules' : 'model'}</td>
                      <td>
                        <code>{r.model_pin ?? '—'}</code>
                      </td>
                      <td>{r.popularity}</td>
                      <td>{r.source}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </Load>
    </>
  );
}

export function ReviewerPage({ project, id }: { project: string; id: string }) {
  const loaded = useLoad(async () => {
    const enc = encodeURIComponent(id);
    const [reviewer, models] = await Promise.all([
      api<Reviewer>('GET', `/reviewers/${enc}`, { project }),
      api<List<ReviewerModel>>('GET', `/reviewers/${enc}/models`, { project, query: { limit: 200 } }),
    ]);
    return { reviewer, models: models.data };
  }, [project, id]);
  return (
    <Load loaded={loaded} what="the reviewer">
      {({ reviewer, models }) => (
        <>
          <PageHeading title={reviewer.name}>{reviewer.name}</PageHeading>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{reviewer.id}</code>
            </dd>
            <dt>Engine</dt>
            <dd>{reviewer.engine === 'builtin' ? 'rules (no model)' : 'a model'}</dd>
            <dt>Governed model pin</dt>
            <dd>
              <code>{reviewer.model_pin ?? '—'}</code>
            </dd>
            <dt>Skill revision</dt>
            <dd>
              {reviewer.skill_revision_id ? <code>{reviewer.skill_revision_id}</code> : 'the catalog skill'}
            </dd>
            <dt>Reviews that used it</dt>
            <dd>{reviewer.popularity}</dd>
            {reviewer.description ? (
              <>
                <dt>What it does</dt>
                <dd>{reviewer.description}</dd>
              </>
            ) : null}
          </dl>
          <section aria-labelledby="models-h">
            <h2 id="models-h">Measured models</h2>
            {models.length === 0 ? (
              <Empty>No model measured yet.</Empty>
            ) : (
              <TableWrap>
                <table>
                  <caption>Models measured for {reviewer.name} (current pin first)</caption>
                  <thead>
                    <tr>
                      <th scope="col">Model</th>
                      <th scope="col">Runs</th>
                      <th scope="col">Findings</th>
                      <th scope="col">Failures</th>
                      <th scope="col">Mean duration</th>
                      <th scope="col">Known spend</th>
                      <th scope="col">Last run</th>
                    </tr>
                  </thead>
                  <tbody>
                    {models.map((m) => (
                      <tr key={m.model}>
                        <td>
                          <code>{m.model}</code>
                          {m.pinned ? <span class="tag tag-pin">current pin</span> : null}
                        </td>
                        <td>{m.runs}</td>
                        <td>{m.findings}</td>
                        <td>{m.failures}</td>
                        <td>{fmtMs(m.avg_ms)}</td>
                        <td>{fmtUsd(m.cost_usd)}</td>
                        <td>
                          <Time iso={m.measured_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            <p class="muted small">
              Findings in this project are in <Link href={findingsHref(project, {})}>the ledger</Link>; each
              names the reviewers that reported it.
            </p>
          </section>
          <Timeline project={project} subjectType="reviewer" subjectId={reviewer.id} />
        </>
      )}
    </Load>
  );
}
