/** Timelines: what happened to one object, to the project, and what is new since last read. */
import { useState } from 'preact/hooks';
import {
  api,
  keyNames,
  type List,
  listAll,
  NOTIFICATION_KINDS,
  type NotificationKind,
  type Plan,
  type Preference,
  type PullRequest,
  type TimelineEvent,
  useLoad,
} from '../api';
import { Link, navigate } from '../router';
import {
  Empty,
  FormMessage,
  Load,
  NotAvailable,
  PageHeading,
  projectPath,
  TableWrap,
  Time,
  timelineHref,
} from '../ui';

/** Where the console shows an object, when it has a page for it (a run: its task's page). */
export function subjectHref(
  project: string,
  type: string,
  id: string,
  payload: Record<string, unknown> = {},
): string | null {
  switch (type) {
    case 'run':
      return typeof payload.task_id === 'string' ? projectPath(project, 'tasks', payload.task_id) : null;
    case 'finding':
      return projectPath(project, 'findings', id);
    case 'pull_request':
      return projectPath(project, 'pull-requests', id);
    case 'reviewer':
      return projectPath(project, 'reviewers', id);
    case 'scorecard':
      return projectPath(project, 'scorecard');
    case 'task':
      return projectPath(project, 'tasks', id);
    case 'project':
    case 'project_settings':
      return projectPath(project, 'settings');
    case 'dashboard':
      return projectPath(project, 'dashboards', id);
    case 'plan':
      return projectPath(project, 'plans');
    default:
      return null;
  }
}

function payloadSummary(payload: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof payload.reason === 'string') parts.push(`reason: “${payload.reason}”`);
  const before = payload.before as Record<string, unknown> | null | undefined;
  const after = payload.after as Record<string, unknown> | null | undefined;
  if (after && typeof after === 'object') {
    for (const [k, v] of Object.entries(after)) {
      const was = before && typeof before === 'object' ? before[k] : undefined;
      parts.push(
        was === undefined
          ? `${k}: ${JSON.stringify(v)}`
          : `${k}: ${JSON.stringify(was)} → ${JSON.stringify(v)}`,
      );
    }
  }
  for (const [k, v] of Object.entries(payload)) {
    if (k === 'reason' || k === 'before' || k === 'after') continue;
    parts.push(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  const text = parts.join('; ');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Who did it: the key's name (its id on hover), or svc itself. */
function Actor({ id, names }: { id: string | null; names: Map<string, string> | undefined }) {
  if (!id) return <span class="muted">svc</span>;
  const name = names?.get(id);
  return name ? <span title={id}>{name}</span> : <code>{id}</code>;
}

export function EventsTable({
  project,
  events,
  caption,
  showSubject,
}: {
  project: string;
  events: TimelineEvent[];
  caption: string;
  showSubject: boolean;
}) {
  const names = useLoad(keyNames, []);
  return (
    <TableWrap>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            {showSubject ? <th scope="col">Object</th> : null}
            <th scope="col">What happened</th>
            <th scope="col">By</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => {
            const href = subjectHref(project, e.subject_type, e.subject_id, e.payload);
            return (
              <tr key={e.id}>
                <td>
                  <Time iso={e.occurred_at} />
                </td>
                {showSubject ? (
                  <td>
                    {e.subject_type.replace(/_/g, ' ')}{' '}
                    {href ? <Link href={href}>{e.subject_id}</Link> : <code>{e.subject_id}</code>}
                    <div class="small">
                      <Link href={timelineHref(project, e.subject_type, e.subject_id)}>its timeline</Link>
                    </div>
                  </td>
                ) : null}
                <td>{e.kind.replace(/_/g, ' ')}</td>
                <td>
                  <Actor id={e.actor} names={names.data} />
                </td>
                <td class="small">{payloadSummary(e.payload)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** The timeline of one object, newest first, embedded in its page. */
export function Timeline({
  project,
  subjectType,
  subjectId,
  hideWhenEmpty,
}: {
  project: string;
  subjectType: string;
  subjectId: string;
  hideWhenEmpty?: boolean;
}) {
  const loaded = useLoad(
    () =>
      api<List<TimelineEvent>>('GET', '/timeline-events', {
        project,
        query: { subject_type: subjectType, subject_id: subjectId, limit: 50 },
      }),
    [project, subjectType, subjectId],
  );
  if (hideWhenEmpty && loaded.data && loaded.data.data.length === 0) return null;
  return (
    <section aria-labelledby={`tl-${subjectId}`}>
      <h2 id={`tl-${subjectId}`}>Timeline</h2>
      <Load loaded={loaded} what="the timeline">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>Nothing has happened to it yet.</Empty>
          ) : (
            <>
              <EventsTable
                project={project}
                events={list.data}
                caption="What happened, newest first"
                showSubject={false}
              />
              {list.next_cursor ? (
                <Link href={timelineHref(project, subjectType, subjectId)}>The whole timeline</Link>
              ) : null}
            </>
          )
        }
      </Load>
    </section>
  );
}

const TYPES = [
  '',
  'pull_request',
  'finding',
  'run',
  'swarm',
  'dashboard',
  'metric_record',
  'reviewer',
  'scorecard',
  'plan',
  'learning',
  'project',
  'project_settings',
  'key',
  'workspace_settings',
];

export function TimelinePage({ project, query }: { project: string; query: URLSearchParams }) {
  const subjectType = query.get('subject_type') ?? '';
  const subjectId = query.get('subject_id') ?? '';
  const kind = query.get('kind') ?? '';
  const [more, setMore] = useState<{ key: string; events: TimelineEvent[]; cursor: string | null } | null>(
    null,
  );
  const key = `${subjectType}|${subjectId}|${kind}`;
  const loaded = useLoad(
    () =>
      api<List<TimelineEvent>>('GET', '/timeline-events', {
        project,
        query: { subject_type: subjectType, subject_id: subjectId, kind, limit: 100 },
      }),
    [project, key],
  );
  const extra = more?.key === key ? more : null;
  const cursor = extra ? extra.cursor : (loaded.data?.next_cursor ?? null);
  const [draft, setDraft] = useState({ subjectType, subjectId, kind, key });
  if (draft.key !== key) setDraft({ subjectType, subjectId, kind, key });
  const subjectLink = subjectType && subjectId ? subjectHref(project, subjectType, subjectId) : null;
  return (
    <>
      <PageHeading title="Timeline">
        Timeline{subjectId ? ` of ${subjectType.replace(/_/g, ' ')} ${subjectId}` : ''}
      </PageHeading>
      {subjectLink ? (
        <p>
          <Link href={subjectLink}>Open the {subjectType.replace(/_/g, ' ')}</Link>
        </p>
      ) : null}
      <form
        class="filters"
        aria-label="Filter the timeline"
        onSubmit={(e) => {
          e.preventDefault();
          const q = new URLSearchParams();
          if (draft.subjectType) q.set('subject_type', draft.subjectType);
          if (draft.subjectId) q.set('subject_id', draft.subjectId);
          if (draft.kind) q.set('kind', draft.kind);
          const s = q.toString();
          navigate(`${projectPath(project, 'timeline')}${s ? `?${s}` : ''}`);
        }}
      >
        <label>
          Object type
          <select
            value={draft.subjectType}
            onChange={(e) => setDraft({ ...draft, subjectType: (e.target as HTMLSelectElement).value })}
          >
            {[...new Set([...TYPES, subjectType])].map((t) => (
              <option key={t} value={t}>
                {t === '' ? 'any' : t.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Object id
          <input
            type="text"
            value={draft.subjectId}
            onInput={(e) => setDraft({ ...draft, subjectId: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          Event kind
          <input
            type="text"
            value={draft.kind}
            placeholder="dismissed"
            onInput={(e) => setDraft({ ...draft, kind: (e.target as HTMLInputElement).value })}
          />
        </label>
        <div class="actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      <Load loaded={loaded} what="the timeline">
        {(list) => {
          const events = [...list.data, ...(extra?.events ?? [])];
          return events.length === 0 ? (
            <Empty>No events match.</Empty>
          ) : (
            <>
              <EventsTable
                project={project}
                events={events}
                caption="Timeline events, newest first"
                showSubject={!subjectId}
              />
              {cursor ? (
                <button
                  type="button"
                  onClick={async () => {
                    const next = await api<List<TimelineEvent>>('GET', '/timeline-events', {
                      project,
                      query: { subject_type: subjectType, subject_id: subjectId, kind, limit: 100, cursor },
                    });
                    setMore({
                      key,
                      events: [...(extra?.events ?? []), ...next.data],
                      cursor: next.next_cursor,
                    });
                  }}
                >
                  Load more events
                </button>
              ) : null}
            </>
          );
        }}
      </Load>
    </>
  );
}

/** A notification in words: what happened and what to do about it. */
function notificationText(e: TimelineEvent): string {
  const p = e.payload;
  const counts = p.counts as { opened_p0?: number } | undefined;
  if (e.subject_type === 'pull_request' && counts?.opened_p0)
    return `${counts.opened_p0} new P0 finding${counts.opened_p0 === 1 ? '' : 's'} on a pull request.`;
  if (e.subject_type === 'plan') return 'A plan was reviewed and awaits your approval.';
  if (e.subject_type === 'run' && p.kind === 'quick_action')
    return e.kind === 'completed' ? 'A quick action finished.' : `A quick action ended ${e.kind}.`;
  if (e.subject_type === 'run') {
    const after = p.after as { error_code?: string | null } | undefined;
    return `A ${String(p.kind ?? '').replace(/_/g, ' ')} run failed${after?.error_code ? ` (${after.error_code})` : ''}.`;
  }
  return e.kind.replace(/_/g, ' ');
}

function NotificationChoices({
  project,
  pref,
  onSaved,
}: {
  project: string;
  pref: Preference;
  onSaved: () => void;
}) {
  const kinds = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];
  const [chosen, setChosen] = useState<NotificationKind[]>(pref.notify ?? kinds);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <details class="prefs-wrap">
      <summary>What you are notified of</summary>
      <form
        class="prefs"
        aria-label="Notification preferences"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await api('PATCH', `/preferences/${encodeURIComponent(pref.id)}`, {
              project,
              body: { notify: chosen },
            });
            setMessage({ ok: true, text: 'Saved.' });
            onSaved();
          } catch (err) {
            setMessage({ ok: false, text: (err as Error).message });
          }
        }}
      >
        <fieldset>
          <legend>Notify me of</legend>
          {kinds.map((k) => (
            <label key={k} class="inline">
              <input
                type="checkbox"
                checked={chosen.includes(k)}
                onChange={(e) =>
                  setChosen(
                    (e.target as HTMLInputElement).checked ? [...chosen, k] : chosen.filter((c) => c !== k),
                  )
                }
              />{' '}
              {NOTIFICATION_KINDS[k]}
            </label>
          ))}
        </fieldset>
        <p class="muted small">
          Everything else (runs starting, settings edits, notes) stays on the timeline.
        </p>
        <button type="submit">Save notification preferences</button>
        <FormMessage message={message} />
      </form>
    </details>
  );
}

export function NotificationsPage({ project }: { project: string }) {
  const loaded = useLoad(async () => {
    const pref = await api<Preference>('GET', '/preferences/me', { project });
    const since = pref.notifications_read_at ?? pref.notifications_cleared_at ?? undefined;
    // The service picks them (GET /timeline-events?only=notifications), as it counts the unread ones.
    const events = await api<List<TimelineEvent>>('GET', '/timeline-events', {
      project,
      query: { limit: 200, since, only: 'notifications' },
    });
    // What each notification is about, by name rather than id.
    const [prs, plans] = await Promise.all([
      listAll<PullRequest>('/pull-requests', project, {}, 1000).catch(() => ({ data: [] as PullRequest[] })),
      listAll<Plan>('/plans', project, {}, 500).catch(() => ({ data: [] as Plan[] })),
    ]);
    const names = new Map<string, string>([
      ...prs.data.map((p): [string, string] => [p.id, `#${p.number} ${p.title}`]),
      ...plans.data.map((p): [string, string] => [p.id, p.summary ?? p.repo_artifact_path ?? p.id]),
    ]);
    return { pref, since, names, events: events.data.filter((e) => !since || e.created_at > since) };
  }, [project]);
  const [error, setError] = useState<Error | null>(null);
  return (
    <>
      <PageHeading title="Notifications">Notifications</PageHeading>
      {loaded.error?.notAvailable ? (
        <>
          <NotAvailable what="Notifications (preferences)" detail={loaded.error.message} />
          <p>
            Meanwhile, <Link href={projectPath(project, 'timeline')}>the project timeline</Link> shows
            everything that happened.
          </p>
        </>
      ) : (
        <Load loaded={loaded} what="notifications">
          {({ pref, since, names, events }) => (
            <>
              <p>
                {since ? (
                  <>
                    What needs you since you last marked notifications read (<Time iso={since} />
                    ).
                  </>
                ) : (
                  'What needs you in this project (nothing marked read yet).'
                )}{' '}
                <Link href={projectPath(project, 'timeline')}>The timeline</Link> has everything else.
              </p>
              <NotificationChoices project={project} pref={pref} onSaved={loaded.reload} />
              <div class="actions">
                <button
                  type="button"
                  disabled={events.length === 0}
                  onClick={async () => {
                    setError(null);
                    try {
                      await api('PATCH', `/preferences/${encodeURIComponent(pref.id)}`, {
                        project,
                        body: { notifications_read_at: 'now' },
                      });
                      loaded.reload();
                    } catch (e) {
                      setError(e as Error);
                    }
                  }}
                >
                  Mark all as read
                </button>
              </div>
              {error ? (
                <p class="error" role="alert">
                  {error.message}
                </p>
              ) : null}
              {events.length === 0 ? (
                <Empty>
                  Nothing needs you. New P0s, failed runs, plans to approve and quick action results show
                  here.
                </Empty>
              ) : (
                <ul class="notifications">
                  {events.map((e) => {
                    const href = subjectHref(project, e.subject_type, e.subject_id, e.payload);
                    return (
                      <li key={e.id} class="card">
                        <p>
                          <strong>{notificationText(e)}</strong>
                        </p>
                        <p class="muted small">
                          <Time iso={e.occurred_at} /> · {e.subject_type.replace(/_/g, ' ')}{' '}
                          {href ? (
                            <Link href={href}>{names.get(e.subject_id) ?? e.subject_id}</Link>
                          ) : (
                            <code>{e.subject_id}</code>
                          )}
                        </p>
                      </li>
                    );
                  })}
                </ul>
              )}
            </>
          )}
        </Load>
      )}
    </>
  );
}
