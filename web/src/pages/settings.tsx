/** A project's settings (and the workspace's check conclusions), edited in place. */
import { useState } from 'preact/hooks';
import { api, type Project, type Settings, useLoad } from '../api';
import { Link } from '../router';
import { type Draft, type FieldSpec, parseDraft, specFor, toDraft } from '../setting-fields';
import { FormMessage, Load, PageHeading, projectPath, Time, timelineHref } from '../ui';
import { forgetConclusions } from './pulls';

/** One setting's field: the input its shape needs, what it expects, and its own error. */
function Field({
  name,
  spec,
  draft,
  doc,
  fallback,
  error,
  set,
}: {
  name: string;
  spec: FieldSpec;
  draft: Draft;
  doc: string | undefined;
  fallback: unknown;
  error: string | undefined;
  set: (d: Draft) => void;
}) {
  const id = `set-${name.replace(/\W/g, '-')}`;
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const describedBy = error ? `${errorId} ${helpId}` : helpId;
  const invalid = error ? true : undefined;
  const text = (e: Event) => set((e.target as HTMLInputElement).value);
  const help = (
    <p id={helpId} class="muted small field-help">
      {doc ? `${doc} ` : ''}
      <strong>Expects:</strong> {spec.shape} Default: <code>{JSON.stringify(fallback)}</code>.
    </p>
  );
  const problem = error ? (
    <p id={errorId} class="field-error small" role="alert">
      {error}
    </p>
  ) : null;
  if (spec.kind === 'boolean')
    return (
      <div class="field">
        <label class="inline" for={id}>
          <input
            id={id}
            type="checkbox"
            checked={draft === true}
            aria-describedby={describedBy}
            onChange={(e) => set((e.target as HTMLInputElement).checked)}
          />{' '}
          <code>{name}</code>
        </label>
        {problem}
        {help}
      </div>
    );
  if (spec.kind === 'span') {
    const span = draft as { start: string; end: string };
    return (
      <fieldset class="field" aria-describedby={describedBy}>
        <legend>
          <code>{name}</code>
        </legend>
        <label>
          Runs may start from
          <input
            type="text"
            inputMode="text"
            value={span.start}
            placeholder="2026-12-01T09:00:00Z"
            aria-invalid={invalid}
            onInput={(e) => set({ ...span, start: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          until
          <input
            type="text"
            value={span.end}
            placeholder="2026-12-05T18:00:00Z"
            aria-invalid={invalid}
            onInput={(e) => set({ ...span, end: (e.target as HTMLInputElement).value })}
          />
        </label>
        {problem}
        {help}
      </fieldset>
    );
  }
  return (
    <div class="field">
      <label for={id}>
        <code>{name}</code>
      </label>
      {spec.kind === 'number' ? (
        <input
          id={id}
          type="text"
          inputMode="decimal"
          value={String(draft)}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          placeholder={spec.nullable ? 'none' : undefined}
          onInput={text}
        />
      ) : spec.kind === 'text' && spec.multiline ? (
        <textarea
          id={id}
          rows={3}
          value={String(draft)}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={text}
        />
      ) : spec.kind === 'choice' ? (
        <select id={id} value={String(draft)} aria-describedby={describedBy} onChange={text}>
          {spec.options.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type="text"
          value={String(draft)}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          placeholder={spec.kind === 'json' || spec.nullable ? 'none' : undefined}
          onInput={text}
        />
      )}
      {problem}
      {help}
    </div>
  );
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
  const keys = Object.keys(settings.values).sort();
  const specs = Object.fromEntries(
    keys.map((k) => [k, specFor(k, settings.values[k], settings.defaults[k])]),
  ) as Record<string, FieldSpec>;
  const [draft, setDraft] = useState<Record<string, Draft>>(() =>
    Object.fromEntries(keys.map((k) => [k, toDraft(specs[k] as FieldSpec, settings.values[k])])),
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <form
      aria-label={label}
      class="settings"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setMessage(null);
        const patch: Record<string, unknown> = {};
        const wrong: Record<string, string> = {};
        for (const k of keys) {
          const parsed = parseDraft(specs[k] as FieldSpec, draft[k] ?? '');
          if (!parsed.ok) wrong[k] = parsed.error;
          else if (JSON.stringify(parsed.value) !== JSON.stringify(settings.values[k]))
            patch[k] = parsed.value;
        }
        setErrors(wrong);
        const nWrong = Object.keys(wrong).length;
        if (nWrong > 0) {
          setMessage({
            ok: false,
            text: `Nothing saved: ${nWrong === 1 ? 'one field needs' : `${nWrong} fields need`} fixing (${Object.keys(wrong).join(', ')}).`,
          });
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
      {keys.map((k) => (
        <Field
          key={k}
          name={k}
          spec={specs[k] as FieldSpec}
          draft={draft[k] ?? ''}
          doc={settings.docs[k]}
          fallback={settings.defaults[k]}
          error={errors[k]}
          set={(v) => setDraft({ ...draft, [k]: v })}
        />
      ))}
      <button type="submit">Save {label.toLowerCase()}</button>
      <FormMessage message={message} />
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
