/** A project's settings (and the workspace's check conclusions), edited in place. */
import { useState } from 'preact/hooks';
import { api, type Project, type Settings, useLoad } from '../api';
import { Link } from '../router';
import { Load, PageHeading, projectPath, Time, timelineHref } from '../ui';
import { forgetConclusions } from './pulls';

type Kind = 'boolean' | 'number' | 'text' | 'json' | 'conclusion';

function kindOf(key: string, value: unknown, def: unknown): Kind {
  if (key.startsWith('svc.checks.')) return 'conclusion';
  if (typeof def === 'boolean' || typeof value === 'boolean') return 'boolean';
  if (typeof def === 'number' || typeof value === 'number') return 'number';
  if (key.endsWith('_usd') || key.endsWith('run_budget')) return 'number';
  if (typeof def === 'string') return 'text';
  return 'json';
}

function SettingsForm({
  settings,
  save,
  label,
}: {
  settings: Settings;
  save: (patch: Record<string, unknown>) => Promise<void>;
  label: string;
}) {
  const [draft, setDraft] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(
      Object.entries(settings.values).map(([k, v]) => [
        k,
        typeof v === 'boolean' ? v : v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v),
      ]),
    ),
  );
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const keys = Object.keys(settings.values).sort();
  return (
    <form
      aria-label={label}
      class="settings"
      onSubmit={async (e) => {
        e.preventDefault();
        setMessage(null);
        const patch: Record<string, unknown> = {};
        try {
          for (const k of keys) {
            const kind = kindOf(k, settings.values[k], settings.defaults[k]);
            const d = draft[k];
            let value: unknown;
            if (kind === 'boolean') value = d === true;
            else if (kind === 'number') value = d === '' ? null : Number(d);
            else if (kind === 'json') value = d === '' ? null : JSON.parse(String(d));
            else value = d;
            if (kind === 'number' && typeof value === 'number' && Number.isNaN(value))
              throw new Error(`${k}: not a number`);
            if (JSON.stringify(value) !== JSON.stringify(settings.values[k])) patch[k] = value;
          }
        } catch (err) {
          setMessage({ ok: false, text: (err as Error).message });
          return;
        }
        if (Object.keys(patch).length === 0) {
          setMessage({ ok: true, text: 'Nothing changed.' });
          return;
        }
        try {
          await save(patch);
          setMessage({ ok: true, text: `Saved ${Object.keys(patch).join(', ')}.` });
        } catch (err) {
          setMessage({ ok: false, text: (err as Error).message });
        }
      }}
    >
      {keys.map((k) => {
        const kind = kindOf(k, settings.values[k], settings.defaults[k]);
        const id = `set-${k.replace(/\W/g, '-')}`;
        const doc = settings.docs[k];
        const help = doc ? (
          <p id={`${id}-doc`} class="muted small">
            {doc} Default: <code>{JSON.stringify(settings.defaults[k])}</code>.
          </p>
        ) : null;
        const describedBy = doc ? `${id}-doc` : undefined;
        const set = (v: string | boolean) => setDraft({ ...draft, [k]: v });
        return (
          <div class="field" key={k}>
            {kind === 'boolean' ? (
              <label class="inline" for={id}>
                <input
                  id={id}
                  type="checkbox"
                  checked={draft[k] === true}
                  aria-describedby={describedBy}
                  onChange={(e) => set((e.target as HTMLInputElement).checked)}
                />{' '}
                <code>{k}</code>
              </label>
            ) : (
              <label for={id}>
                <code>{k}</code>
              </label>
            )}
            {kind === 'number' ? (
              <input
                id={id}
                type="number"
                step="any"
                min="0"
                value={String(draft[k] ?? '')}
                aria-describedby={describedBy}
                placeholder="none"
                onInput={(e) => set((e.target as HTMLInputElement).value)}
              />
            ) : kind === 'text' ? (
              <textarea
                id={id}
                rows={3}
                value={String(draft[k] ?? '')}
                aria-describedby={describedBy}
                onInput={(e) => set((e.target as HTMLTextAreaElement).value)}
              />
            ) : kind === 'json' ? (
              <input
                id={id}
                type="text"
                value={String(draft[k] ?? '')}
                aria-describedby={describedBy}
                placeholder="none (JSON)"
                onInput={(e) => set((e.target as HTMLInputElement).value)}
              />
            ) : kind === 'conclusion' ? (
              <select
                id={id}
                value={String(draft[k])}
                aria-describedby={describedBy}
                onChange={(e) => set((e.target as HTMLSelectElement).value)}
              >
                {['action_required', 'failure', 'neutral', 'success'].map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : null}
            {help}
          </div>
        );
      })}
      <button type="submit">Save {label.toLowerCase()}</button>
      {message ? (
        <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      ) : null}
    </form>
  );
}

export function SettingsPage({ project }: { project: string }) {
  const enc = encodeURIComponent(project);
  const loaded = useLoad(async () => {
    const [p, settings, workspace, setup] = await Promise.all([
      api<Project>('GET', `/projects/${enc}`, { project }),
      api<Settings>('GET', `/projects/${enc}/settings`, { project }),
      api<Settings>('GET', '/settings').catch(() => null),
      api<{ status: string; task_id: string | null; missing: { code: string; message: string }[] }>(
        'GET',
        `/projects/${enc}/setup`,
        { project },
      ).catch(() => null),
    ]);
    return { p, settings, workspace, setup };
  }, [project]);
  const [setupError, setSetupError] = useState<string | null>(null);
  return (
    <Load loaded={loaded} what="the settings">
      {({ p, settings, workspace, setup }) => (
        <>
          <PageHeading title={`${p.name} settings`}>{p.name}: settings</PageHeading>
          <dl class="facts">
            <dt>Repository</dt>
            <dd>
              <code>{p.repository.full_name}</code> (installation {p.repository.installation_id})
            </dd>
            <dt>Project id</dt>
            <dd>
              <code>{p.id}</code>
            </dd>
            <dt>Registered</dt>
            <dd>
              <Time iso={p.created_at} />
            </dd>
            <dt>Setup</dt>
            <dd>
              {setup ? (
                <>
                  {setup.status}
                  {setup.task_id ? (
                    <>
                      {' '}
                      (<Link href={projectPath(project, 'tasks', setup.task_id)}>its task</Link>)
                    </>
                  ) : null}
                  {setup.missing.length > 0 ? (
                    <ul class="small">
                      {setup.missing.map((m) => (
                        <li key={m.code}>
                          <code>{m.code}</code>: {m.message}
                        </li>
                      ))}
                    </ul>
                  ) : null}
                </>
              ) : (
                '—'
              )}{' '}
              <button
                type="button"
                class="small"
                onClick={async () => {
                  setSetupError(null);
                  try {
                    await api('POST', `/projects/${enc}/setup`, { project });
                    loaded.reload();
                  } catch (e) {
                    setSetupError((e as Error).message);
                  }
                }}
              >
                Run setup again
              </button>
              {setupError ? (
                <p class="error" role="alert">
                  {setupError}
                </p>
              ) : null}
            </dd>
          </dl>
          <section aria-labelledby="ps-h">
            <h2 id="ps-h">Project settings</h2>
            <SettingsForm
              key={settings.owner_id}
              settings={settings}
              label="Project settings"
              save={async (patch) => {
                await api('PATCH', `/projects/${enc}/settings`, { project, body: patch });
                loaded.reload();
              }}
            />
            <p>
              <Link href={timelineHref(project, 'project_settings', project)}>
                Who changed these settings, and when
              </Link>
            </p>
          </section>
          {workspace ? (
            <section aria-labelledby="ws-h">
              <h2 id="ws-h">Workspace: check conclusions</h2>
              <p class="muted">
                What the <code>Service / Review</code> check concludes for every project of the workspace.
              </p>
              <SettingsForm
                key={workspace.owner_id}
                settings={workspace}
                label="Workspace settings"
                save={async (patch) => {
                  await api('PATCH', '/settings', { body: patch });
                  forgetConclusions();
                  loaded.reload();
                }}
              />
            </section>
          ) : null}
        </>
      )}
    </Load>
  );
}
