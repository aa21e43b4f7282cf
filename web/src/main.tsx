/** The console: the key gate, the frame (banner, project navigation) and the routes. */
import './styles.css';
import { type ComponentType, render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  api,
  changes,
  clearAuthFailure,
  getKey,
  type List,
  lastAuthFailure,
  onKeyChange,
  type Preference,
  type Project,
  setKey,
  type TimelineEvent,
  useLoad,
} from './api';
import { FindingPage, FindingsPage } from './pages/findings';
import { Home } from './pages/home';
import { PlansPage } from './pages/plans';
import { ProjectPulls, PullRequestPage } from './pages/pulls';
import { ReviewPage } from './pages/review';
import { ReviewerPage, ReviewersPage } from './pages/reviewers';
import { ScorecardPage } from './pages/scorecard';
import { SettingsPage } from './pages/settings';
import { TaskPage } from './pages/task';
import { NotificationsPage, TimelinePage } from './pages/timeline';
import { Link, match, navigate, useLocation } from './router';
import { PageHeading, projectPath } from './ui';

/** A page loaded on first visit (the charting library comes with it). */
function lazyPage<P>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return (props: P) => {
    const [, setReady] = useState(false);
    const [failed, setFailed] = useState<string | null>(null);
    useEffect(() => {
      if (!loaded)
        load().then(
          (c) => {
            loaded = c;
            setReady(true);
          },
          (e: Error) => setFailed(e.message),
        );
    }, []);
    if (failed)
      return (
        <p class="error" role="alert">
          Could not load this page: {failed}. Reload to try again.
        </p>
      );
    if (!loaded)
      return (
        <p class="muted" role="status">
          Loading…
        </p>
      );
    const C = loaded as ComponentType<P>;
    // biome-ignore lint/suspicious/noExplicitAny: props pass through unchanged
    return <C {...(props as any)} />;
  };
}

const DashboardsPage = lazyPage<{ project: string; id?: string }>(() =>
  import('./pages/dashboards').then((m) => m.DashboardsPage),
);

type Params = Record<string, string>;
type Route = [string, (p: Params, q: URLSearchParams) => preact.JSX.Element];

const P = (p: Params) => p.project as string;

const ROUTES: Route[] = [
  ['/', () => <Home />],
  ['/projects/:project', (p) => <ProjectPulls project={P(p)} />],
  ['/projects/:project/pull-requests', (p) => <ProjectPulls project={P(p)} />],
  ['/projects/:project/pull-requests/:id', (p) => <PullRequestPage project={P(p)} id={p.id as string} />],
  ['/projects/:project/reviews/:id', (p) => <ReviewPage project={P(p)} id={p.id as string} />],
  ['/projects/:project/findings', (p, q) => <FindingsPage project={P(p)} query={q} />],
  ['/projects/:project/findings/:id', (p) => <FindingPage project={P(p)} id={p.id as string} />],
  ['/projects/:project/reviewers', (p) => <ReviewersPage project={P(p)} />],
  ['/projects/:project/reviewers/:id', (p) => <ReviewerPage project={P(p)} id={p.id as string} />],
  ['/projects/:project/scorecard', (p) => <ScorecardPage project={P(p)} />],
  ['/projects/:project/dashboards', (p) => <DashboardsPage project={P(p)} />],
  ['/projects/:project/dashboards/:id', (p) => <DashboardsPage project={P(p)} id={p.id as string} />],
  ['/projects/:project/plans', (p) => <PlansPage project={P(p)} />],
  ['/projects/:project/timeline', (p, q) => <TimelinePage project={P(p)} query={q} />],
  ['/projects/:project/notifications', (p) => <NotificationsPage project={P(p)} />],
  ['/projects/:project/tasks/:id', (p) => <TaskPage project={P(p)} id={p.id as string} />],
  ['/projects/:project/settings', (p) => <SettingsPage project={P(p)} />],
];

function KeyForm() {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(lastAuthFailure);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="signin">
      <PageHeading title="Sign in">svc console</PageHeading>
      <form
        aria-label="Sign in"
        onSubmit={async (event) => {
          event.preventDefault();
          const key = value.trim();
          if (!key) {
            setError('Enter an API key.');
            return;
          }
          setBusy(true);
          try {
            await api('GET', '/projects', { key, query: { limit: 1 } });
            clearAuthFailure();
            setKey(key);
          } catch (e) {
            setError((e as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <p>
          Enter an API key of this svc (a workspace key <code>svc_ws_…</code>, a project key or a personal
          token). It is kept in this browser tab's session storage only, and sent to this service alone.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'api-key-error' : undefined}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
        {error ? (
          <p id="api-key-error" class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Open console'}
        </button>
        <p class="muted">
          No key? The first start of <code>svc serve</code> prints one; <code>npx svc keys create</code> mints
          another.
        </p>
      </form>
    </main>
  );
}

/** Unread notifications (what the caller chose to be told of) since their read marker. */
function NotificationsLink({ project }: { project: string }) {
  const [writes, setWrites] = useState(0);
  useEffect(() => {
    const bump = () => setWrites((n) => n + 1);
    changes.addEventListener('change', bump);
    return () => changes.removeEventListener('change', bump);
  }, []);
  const path = useLocation().path;
  const loaded = useLoad(async () => {
    const pref = await api<Preference>('GET', '/preferences/me', { project });
    if (typeof pref.unread_notifications === 'number')
      return { unread: pref.unread_notifications, more: false };
    const since = pref.notifications_read_at ?? pref.notifications_cleared_at ?? undefined;
    const events = await api<List<TimelineEvent>>('GET', '/timeline-events', {
      project,
      query: { limit: 100, since, only: 'notifications' },
    });
    const unread = events.data.filter((e) => !since || e.created_at > since).length;
    return { unread, more: events.next_cursor !== null };
  }, [project, path, writes]);
  const n = loaded.data?.unread ?? 0;
  const label = loaded.data ? `${n}${loaded.data.more ? '+' : ''}` : '';
  return (
    <Link href={projectPath(project, 'notifications')}>
      Notifications
      {loaded.data && n > 0 ? (
        <>
          {' '}
          <span class="badge">{label}</span>
          <span class="visually-hidden"> unread</span>
        </>
      ) : null}
    </Link>
  );
}

const SECTIONS: [string, string][] = [
  ['', 'Pull requests'],
  ['findings', 'Findings'],
  ['scorecard', 'Scorecard'],
  ['dashboards', 'Dashboards'],
  ['reviewers', 'Reviewers'],
  ['plans', 'Plans'],
  ['timeline', 'Timeline'],
  ['settings', 'Settings'],
];

function safeDecode(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function Frame() {
  const loc = useLocation();
  const projects = useLoad(() => api<List<Project>>('GET', '/projects', { query: { limit: 200 } }), []);
  const parts = loc.path.split('/');
  const current = parts[1] === 'projects' && parts[2] ? safeDecode(parts[2]) : null;
  const section = current ? (loc.path.split('/')[3] ?? '') : null;
  let page: preact.JSX.Element | null = null;
  for (const [pattern, view] of ROUTES) {
    const params = match(pattern, loc.path);
    if (params) {
      page = view(params, loc.query);
      break;
    }
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="banner">
        <Link href="/" class="brand">
          svc console
        </Link>
        <label class="project-pick">
          <span>Project</span>
          <select
            value={current ?? ''}
            onChange={(e) => {
              const id = (e.target as HTMLSelectElement).value;
              navigate(id ? projectPath(id) : '/');
            }}
          >
            <option value="">All projects</option>
            {(projects.data?.data ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.repository.full_name})
              </option>
            ))}
          </select>
        </label>
        {current ? <NotificationsLink project={current} /> : null}
        <button
          type="button"
          class="link"
          onClick={() => {
            setKey(null);
            navigate('/');
          }}
        >
          Sign out
        </button>
      </header>
      {current ? (
        <nav aria-label="Project sections" class="sections">
          <ul>
            {SECTIONS.map(([path, label]) => {
              const active = path === '' ? section === '' || section === 'pull-requests' : section === path;
              return (
                <li key={label}>
                  <Link
                    href={path ? projectPath(current, path) : projectPath(current)}
                    aria-current={active ? 'page' : undefined}
                  >
                    {label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
      ) : null}
      <main id="main">
        {page ?? (
          <>
            <PageHeading title="Not found">Page not found</PageHeading>
            <p>
              The console has no page at <code>{loc.path}</code>. <Link href="/">Back to the projects</Link>.
            </p>
          </>
        )}
      </main>
    </>
  );
}

function App() {
  const [key, setKeyState] = useState(getKey());
  useEffect(() => {
    const off = onKeyChange(() => setKeyState(getKey()));
    return () => {
      off();
    };
  }, []);
  return key ? <Frame /> : <KeyForm />;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
