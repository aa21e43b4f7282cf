/** Monday morning: every project, the blocked pull requests of all of them first. */
import { useState } from 'preact/hooks';
import { api, type List, type Project, useLoad } from '../api';
import { Link, navigate } from '../router';
import { CountLinks, Empty, ErrorBox, Load, PageHeading, projectPath, TableWrap } from '../ui';
import { loadOverview, type Overview, PullTable } from './pulls';

interface ProjectOverview {
  project: Project;
  overview: Overview | null;
  error: Error | null;
}

async function loadHome(): Promise<ProjectOverview[]> {
  const projects = await api<List<Project>>('GET', '/projects', { query: { limit: 200 } });
  return Promise.all(
    projects.data.map((project) =>
      loadOverview(project.id).then(
        (overview) => ({ project, overview, error: null }),
        (error: Error) => ({ project, overview: null, error }),
      ),
    ),
  );
}

export function Home() {
  const loaded = useLoad(loadHome, []);
  return (
    <>
      <PageHeading title="Projects">Projects</PageHeading>
      <Load loaded={loaded} what="projects">
        {(items) => {
          if (items.length === 0)
            return (
              <>
                <Empty>No projects yet. Register a repository to start.</Empty>
                <NewProject onCreated={loaded.reload} />
              </>
            );
          const blocked = items.flatMap((i) =>
            (i.overview?.rows ?? [])
              .filter((r) => r.blocked && r.pr.state === 'open')
              .map((r) => ({ project: i.project, row: r })),
          );
          return (
            <>
              <section aria-labelledby="blocked-h">
                <h2 id="blocked-h">Blocked pull requests ({blocked.length})</h2>
                {blocked.length === 0 ? (
                  <Empty>Nothing is blocked: no open pull request has an open P0 finding.</Empty>
                ) : (
                  items
                    .filter((i) => blocked.some((b) => b.project.id === i.project.id))
                    .map((i) => (
                      <PullTable
                        key={i.project.id}
                        project={i.project.id}
                        rows={blocked.filter((b) => b.project.id === i.project.id).map((b) => b.row)}
                        caption={`Blocked in ${i.project.name} (open P0: the check fails)`}
                      />
                    ))
                )}
              </section>
              <section aria-labelledby="projects-h">
                <h2 id="projects-h">All projects</h2>
                <TableWrap>
                  <table>
                    <caption>Projects ({items.length})</caption>
                    <thead>
                      <tr>
                        <th scope="col">Project</th>
                        <th scope="col">Repository</th>
                        <th scope="col">Open pull requests</th>
                        <th scope="col">Blocked</th>
                        <th scope="col">Open findings</th>
                        <th scope="col">Automatic review</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map(({ project, overview, error }) => {
                        const open = overview?.rows.filter((r) => r.pr.state === 'open') ?? [];
                        const nBlocked = open.filter((r) => r.blocked).length;
                        return (
                          <tr key={project.id} class={nBlocked > 0 ? 'blocked' : undefined}>
                            <td>
                              <Link href={projectPath(project.id)}>{project.name}</Link>
                              <div class="muted small">
                                <Link href={projectPath(project.id, 'settings')}>settings</Link>
                                {' · '}
                                <Link href={projectPath(project.id, 'scorecard')}>scorecard</Link>
                                {' · '}
                                <Link href={projectPath(project.id, 'dashboards')}>dashboards</Link>
                              </div>
                            </td>
                            <td>
                              <code>{project.repository.full_name}</code>
                            </td>
                            <td>
                              {overview ? (
                                <Link
                                  href={projectPath(project.id)}
                                  aria-label={`${open.length} open pull requests in ${project.name}`}
                                >
                                  {open.length}
                                </Link>
                              ) : (
                                '—'
                              )}
                            </td>
                            <td>
                              {overview ? (
                                <Link
                                  href={projectPath(project.id)}
                                  aria-label={`${nBlocked} blocked pull requests in ${project.name}`}
                                  class={nBlocked > 0 ? 'count sev-P0' : 'count zero'}
                                >
                                  {nBlocked}
                                </Link>
                              ) : null}
                            </td>
                            <td>
                              {overview ? (
                                <CountLinks
                                  project={project.id}
                                  counts={overview.totals}
                                  filters={{}}
                                  label={`in ${project.name}`}
                                />
                              ) : error ? (
                                <ErrorBox error={error as never} what="its pull requests" />
                              ) : null}
                            </td>
                            <td>
                              {project.settings['svc.review.enabled'] === false ? 'off' : 'on'}
                              {project.settings['svc.brakes.paused'] === true ? (
                                <span class="tag tag-blocked">paused</span>
                              ) : null}
                            </td>
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </TableWrap>
              </section>
              <NewProject onCreated={loaded.reload} />
            </>
          );
        }}
      </Load>
    </>
  );
}

interface Installation {
  id: number;
  kind: string;
  account: string;
}

function NewProject({ onCreated }: { onCreated: () => void }) {
  const installations = useLoad(() => api<List<Installation>>('GET', '/installations'), []);
  const [name, setName] = useState('');
  const [repo, setRepo] = useState('');
  const [installation, setInstallation] = useState('');
  const [setup, setSetup] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const choices = installations.data?.data ?? [];
  // The first installation until one is picked: the select always shows what will be sent, after an error too.
  const chosen = installation || String(choices[0]?.id ?? '');
  return (
    <details class="new-project">
      <summary>Register a repository as a project</summary>
      <form
        aria-label="Register a repository"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const created = await api<{ project: Project; setup?: { task: { id: string } } }>(
              'POST',
              '/projects',
              {
                body: {
                  name: name.trim(),
                  repository: {
                    full_name: repo.trim(),
                    installation_id: Number(chosen || 1),
                  },
                  setup,
                },
              },
            );
            onCreated();
            navigate(
              created.setup
                ? projectPath(created.project.id, 'tasks', created.setup.task.id)
                : projectPath(created.project.id),
            );
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="np-name">Project name</label>
        <input
          id="np-name"
          type="text"
          required
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <label for="np-repo">Repository (owner/repo)</label>
        <input
          id="np-repo"
          type="text"
          required
          pattern="[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+"
          value={repo}
          onInput={(e) => setRepo((e.target as HTMLInputElement).value)}
        />
        <label for="np-inst">Installation</label>
        <select
          id="np-inst"
          value={chosen}
          onChange={(e) => setInstallation((e.target as HTMLSelectElement).value)}
        >
          {choices.map((i) => (
            <option key={i.id} value={String(i.id)}>
              {i.id}: {i.kind} ({i.account})
            </option>
          ))}
        </select>
        <label class="inline">
          <input
            type="checkbox"
            checked={setup}
            onChange={(e) => setSetup((e.target as HTMLInputElement).checked)}
          />{' '}
          Run setup now (reads the repository)
        </label>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          Register project
        </button>
      </form>
    </details>
  );
}
