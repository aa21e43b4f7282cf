/**
 * Dashboards drawn as charts (uPlot, loaded with this page only), each panel with its numbers as
 * a table too, and an editor for the boards. Until the service implements dashboards (501) the
 * page says so.
 */
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import {
  ApiFailure,
  api,
  type Chart,
  type Dashboard,
  type List,
  type Panel,
  type Preference,
  SEVERITIES,
  type Severity,
  type Unit,
  useLoad,
} from '../api';
import { Link, navigate } from '../router';
import { severityColor } from '../severity';
import {
  Empty,
  ErrorBox,
  findingsHref,
  Load,
  NotAvailable,
  PageHeading,
  projectPath,
  TableWrap,
} from '../ui';

/** Each metric and the groupings the service accepts for it (src/metrics/catalogue.ts). */
const GROUPINGS: Record<string, string[]> = {
  reviews: ['none', 'status'],
  findings: ['none', 'severity', 'reviewer', 'rule'],
  fix_rate: ['none'],
  dismissal_rate: ['none', 'reviewer', 'rule'],
  review_latency: ['none'],
  time_to_fix: ['none'],
  spend: ['none'],
  custom: ['none'],
};
const METRICS = Object.keys(GROUPINGS);
const CHARTS: Chart[] = ['line', 'bar', 'number', 'table'];
/** Series that are not severities: none of them red, orange or grey, so no colour means two things. */
const COLORS = ['#0b57d0', '#0e7c86', '#7c3aed', '#9a6700', '#db2777', '#1a7f37'];
/** Units whose values add up across series, so their bars stack; the others are drawn as lines. */
const ADDITIVE: Unit[] = ['count', 'usd'];

/** A series' colour: a severity's own (the console's one palette), else the next of COLORS. */
function seriesColor(name: string, i: number, root: Element): string {
  if ((SEVERITIES as string[]).includes(name)) return severityColor(name as Severity, root);
  return COLORS[i % COLORS.length] as string;
}

export function formatValue(value: number | null | undefined, unit: Unit): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  switch (unit) {
    case 'ratio':
      return `${(value * 100).toFixed(1)}%`;
    case 'ms':
      return value < 1000
        ? `${Math.round(value)} ms`
        : value < 120_000
          ? `${(value / 1000).toFixed(1)} s`
          : `${(value / 60_000).toFixed(1)} min`;
    case 'usd':
      return `$${value.toFixed(2)}`;
    default:
      return Number.isInteger(value) ? String(value) : value.toFixed(2);
  }
}

/** Where the records behind a metric are. */
function evidenceHref(project: string, metric: string): string {
  switch (metric) {
    case 'findings':
      return findingsHref(project, {});
    case 'fix_rate':
    case 'time_to_fix':
      return findingsHref(project, { status: 'fixed' });
    case 'dismissal_rate':
      return findingsHref(project, { status: 'dismissed' });
    case 'spend':
      return projectPath(project, 'reviewers');
    default:
      return projectPath(project);
  }
}

function days(panel: Panel): string[] {
  const all = new Set<string>();
  for (const s of panel.series) for (const p of s.points) all.add(p.day);
  return [...all].sort();
}

/**
 * Bars of several series are stacked (each day's bar split by series, bottom-up in their order),
 * so no series hides behind another; a unit that does not add up (ratios, durations) is drawn as
 * lines instead. Every point is drawn, so a series of one day shows.
 */
function Plot({ panel, labelId }: { panel: Panel; labelId: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const xs = days(panel);
    const raw = panel.series.map((s) => {
      const byDay = new Map(s.points.map((p) => [p.day, p.value]));
      return xs.map((d) => byDay.get(d) ?? null);
    });
    const bars = panel.chart === 'bar' && (panel.series.length === 1 || ADDITIVE.includes(panel.unit));
    // Stacked: series i is drawn from the sum of the series before it to that sum plus its own.
    const bottoms = raw.map((_, i) =>
      xs.map((_d, j) => raw.slice(0, i).reduce((n, r) => n + (r[j] ?? 0), 0)),
    );
    const tops = raw.map((r, i) => r.map((v, j) => (v === null ? null : (bottoms[i]?.[j] ?? 0) + v)));
    const barPaths = bars
      ? uPlot.paths.bars?.({
          size: [0.6, 48],
          disp: {
            y0: { unit: 1, values: (_u, si) => bottoms[si - 1] ?? [] },
            y1: { unit: 1, values: (_u, si) => tops[si - 1] ?? [] },
          },
        })
      : undefined;
    const data: uPlot.AlignedData = [
      xs.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000),
      ...(bars ? tops : raw),
    ];
    const width = () => Math.max(240, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        legend: { show: panel.series.length > 1 },
        cursor: { drag: { x: false, y: false } },
        scales: {
          // Half a day of room on each side keeps the first and last bar or point whole.
          x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
          y: {
            range: (_u, _min, max) =>
              panel.unit === 'ratio' ? [0, 1] : [0, max !== null && max > 0 ? max * 1.1 : 1],
          },
        },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => formatValue(t, panel.unit)), size: 60 }],
        series: [
          {},
          ...panel.series.map((s, i) => {
            const color = seriesColor(s.name, i, el);
            return {
              label: s.name,
              stroke: color,
              width: bars ? 0 : 2,
              ...(bars
                ? { fill: color, paths: barPaths, points: { show: false } }
                : { points: { show: true, size: 7, fill: color, stroke: color } }),
              // The legend says the series' own value, not where its stacked bar ends.
              value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) =>
                formatValue(idx === null ? null : (raw[i]?.[idx] ?? null), panel.unit),
              spanGaps: false,
            };
          }),
        ],
      },
      data,
      el,
    );
    const canvas = el.querySelector('canvas');
    canvas?.setAttribute('aria-hidden', 'true');
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [panel]);
  return <div ref={ref} class="plot" role="img" aria-labelledby={labelId} />;
}

function DataTable({ panel, caption }: { panel: Panel; caption: string }) {
  const xs = days(panel);
  return (
    <TableWrap>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {panel.series.map((s) => (
              <th key={s.name} scope="col">
                {s.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {xs.map((d) => (
            <tr key={d}>
              <th scope="row">{d}</th>
              {panel.series.map((s) => (
                <td key={s.name}>{formatValue(s.points.find((p) => p.day === d)?.value, panel.unit)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function PanelView({ project, panel, index }: { project: string; panel: Panel; index: number }) {
  const id = `panel-${index}`;
  const points = panel.series.reduce((n, s) => n + s.points.filter((p) => p.value !== null).length, 0);
  const describe = `${panel.metric.replace(/_/g, ' ')}${panel.group_by && panel.group_by !== 'none' ? ` by ${panel.group_by}` : ''}, last ${panel.range_days} days`;
  return (
    <section class="panel" aria-labelledby={id}>
      <h2 id={id}>{panel.title}</h2>
      <p class="muted small">
        {describe}.{' '}
        {panel.summary !== null ? (
          <>
            Summary: <strong>{formatValue(panel.summary, panel.unit)}</strong>.{' '}
          </>
        ) : null}
        <Link href={evidenceHref(project, panel.metric)}>See the records behind it</Link>
      </p>
      {panel.chart === 'number' && panel.summary === null ? (
        <Empty>No value in this range yet.</Empty>
      ) : panel.chart === 'number' ? (
        <Link
          class="big-number"
          href={evidenceHref(project, panel.metric)}
          aria-label={`${panel.title}: ${formatValue(panel.summary, panel.unit)}, see the records`}
        >
          {formatValue(panel.summary, panel.unit)}
        </Link>
      ) : panel.chart === 'table' ? (
        <DataTable panel={panel} caption={panel.title} />
      ) : points === 0 ? (
        <Empty>No data in this range yet.</Empty>
      ) : (
        <>
          <Plot panel={panel} labelId={id} />
          <details>
            <summary>{panel.title}: the numbers</summary>
            <DataTable panel={panel} caption={`${panel.title}, by day`} />
          </details>
        </>
      )}
    </section>
  );
}

interface PanelDraft {
  title: string;
  metric: string;
  group_by: string;
  range_days: number;
  chart: Chart;
  owner?: string;
  key?: string;
}

function Editor({
  project,
  dashboard,
  onDone,
}: {
  project: string;
  dashboard: Dashboard | null;
  onDone: (id: string) => void;
}) {
  const [name, setName] = useState(dashboard?.name ?? '');
  const [description, setDescription] = useState(dashboard?.description ?? '');
  const [panels, setPanels] = useState<PanelDraft[]>(
    dashboard?.panels?.map((p) => ({
      title: p.title,
      metric: p.metric,
      group_by: p.group_by ?? 'none',
      range_days: p.range_days,
      chart: p.chart,
      owner: p.owner,
      key: p.key,
    })) ?? [
      {
        title: 'Findings by severity',
        metric: 'findings',
        group_by: 'severity',
        range_days: 30,
        chart: 'bar',
      },
    ],
  );
  const [error, setError] = useState<string | null>(null);
  const update = (i: number, change: Partial<PanelDraft>) =>
    setPanels(panels.map((p, j) => (i === j ? { ...p, ...change } : p)));
  return (
    <form
      aria-label={dashboard ? 'Edit dashboard' : 'New dashboard'}
      class="editor"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        const body = {
          name: name.trim(),
          description: description.trim() || undefined,
          panels: panels.map(({ owner, key, ...p }) => ({
            ...p,
            range_days: Number(p.range_days),
            ...(p.metric === 'custom' ? { owner, key } : {}),
          })),
        };
        try {
          const saved = dashboard
            ? await api<Dashboard>('PATCH', `/dashboards/${encodeURIComponent(dashboard.id)}`, {
                project,
                body,
              })
            : await api<Dashboard>('POST', '/dashboards', { project, body });
          onDone(saved.id);
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      <label for="db-name">Dashboard name</label>
      <input
        id="db-name"
        type="text"
        required
        value={name}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
      />
      <label for="db-desc">Description</label>
      <input
        id="db-desc"
        type="text"
        value={description}
        onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
      />
      {panels.map((p, i) => (
        <fieldset key={String(i)}>
          <legend>Panel {i + 1}</legend>
          <label>
            Title
            <input
              type="text"
              required
              value={p.title}
              onInput={(e) => update(i, { title: (e.target as HTMLInputElement).value })}
            />
          </label>
          <label>
            Metric
            <select
              value={p.metric}
              onChange={(e) => {
                const metric = (e.target as HTMLSelectElement).value;
                update(i, {
                  metric,
                  group_by: GROUPINGS[metric]?.includes(p.group_by) ? p.group_by : 'none',
                });
              }}
            >
              {METRICS.map((m) => (
                <option key={m} value={m}>
                  {m.replace(/_/g, ' ')}
                </option>
              ))}
            </select>
          </label>
          <label>
            Group by
            <select
              value={p.group_by}
              onChange={(e) => update(i, { group_by: (e.target as HTMLSelectElement).value })}
            >
              {(GROUPINGS[p.metric] ?? ['none']).map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </label>
          {p.metric === 'custom' ? (
            <>
              <label>
                Records owner
                <input
                  type="text"
                  required
                  value={p.owner ?? ''}
                  onInput={(e) => update(i, { owner: (e.target as HTMLInputElement).value })}
                />
              </label>
              <label>
                Records key
                <input
                  type="text"
                  required
                  value={p.key ?? ''}
                  onInput={(e) => update(i, { key: (e.target as HTMLInputElement).value })}
                />
              </label>
            </>
          ) : null}
          <label>
            Days
            <input
              type="number"
              min="1"
              max="365"
              value={p.range_days}
              onInput={(e) => update(i, { range_days: Number((e.target as HTMLInputElement).value) })}
            />
          </label>
          <label>
            Chart
            <select
              value={p.chart}
              onChange={(e) => update(i, { chart: (e.target as HTMLSelectElement).value as Chart })}
            >
              {CHARTS.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            class="secondary small"
            onClick={() => setPanels(panels.filter((_, j) => j !== i))}
          >
            Remove panel {i + 1}
          </button>
        </fieldset>
      ))}
      <div class="actions">
        <button
          type="button"
          class="secondary"
          onClick={() =>
            setPanels([
              ...panels,
              { title: '', metric: 'reviews', group_by: 'none', range_days: 30, chart: 'line' },
            ])
          }
        >
          Add a panel
        </button>
        <button type="submit">{dashboard ? 'Save dashboard' : 'Create dashboard'}</button>
      </div>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

export function DashboardsPage({ project, id }: { project: string; id?: string }) {
  const list = useLoad(
    () => api<List<Dashboard>>('GET', '/dashboards', { project, query: { limit: 200 } }),
    [project],
  );
  const pref = useLoad(
    () => api<Preference>('GET', '/preferences/me', { project }).catch(() => null),
    [project],
  );
  const chosen =
    id ??
    (pref.data?.dashboard_id && list.data?.data.some((d) => d.id === pref.data?.dashboard_id)
      ? pref.data.dashboard_id
      : undefined) ??
    list.data?.data.find((d) => d.is_default)?.id ??
    list.data?.data[0]?.id;
  const board = useLoad(
    () =>
      chosen
        ? api<Dashboard>('GET', `/dashboards/${encodeURIComponent(chosen)}`, { project })
        : Promise.resolve(null),
    [project, chosen],
  );
  const [editing, setEditing] = useState<'new' | 'edit' | null>(null);
  // The board opened here becomes the one the page opens with next time.
  const openedId = board.data?.id;
  const prefId = pref.data?.id;
  const lastOpened = pref.data?.dashboard_id;
  useEffect(() => {
    if (!openedId || !prefId || lastOpened === openedId) return;
    api('PATCH', `/preferences/${encodeURIComponent(prefId)}`, {
      project,
      body: { dashboard_id: openedId },
    }).catch(() => {});
  }, [project, openedId, prefId, lastOpened]);
  if (list.error?.notAvailable || board.error?.notAvailable) {
    return (
      <>
        <PageHeading title="Dashboards">Dashboards</PageHeading>
        <NotAvailable what="Dashboards" detail={(list.error ?? board.error)?.message} />
        <p>
          Meanwhile the numbers are in <Link href={projectPath(project)}>the pull requests</Link> and{' '}
          <Link href={findingsHref(project, {})}>the findings ledger</Link>.
        </p>
      </>
    );
  }
  const saved = (newId: string) => {
    setEditing(null);
    list.reload();
    board.reload();
    navigate(projectPath(project, 'dashboards', newId));
  };
  return (
    <>
      <PageHeading title={board.data?.name ?? 'Dashboards'}>{board.data?.name ?? 'Dashboards'}</PageHeading>
      <Load loaded={list} what="dashboards">
        {({ data }) => (
          <nav aria-label="Dashboards" class="tabs">
            <ul>
              {data.map((d) => (
                <li key={d.id}>
                  <Link
                    href={projectPath(project, 'dashboards', d.id)}
                    aria-current={d.id === chosen ? 'page' : undefined}
                  >
                    {d.name}
                    {d.is_default ? ' (default)' : ''}
                  </Link>
                </li>
              ))}
            </ul>
            <button type="button" class="secondary small" onClick={() => setEditing('new')}>
              New dashboard
            </button>
            {board.data ? (
              <button type="button" class="secondary small" onClick={() => setEditing('edit')}>
                Edit this dashboard
              </button>
            ) : null}
          </nav>
        )}
      </Load>
      {editing ? (
        <Editor
          project={project}
          dashboard={editing === 'edit' ? (board.data ?? null) : null}
          onDone={saved}
        />
      ) : null}
      {board.error ? (
        <ErrorBox
          error={
            board.error instanceof ApiFailure ? board.error : new ApiFailure(0, 'client', String(board.error))
          }
          what="the dashboard"
        />
      ) : board.data === null ? (
        <Empty>No dashboard yet: create one.</Empty>
      ) : board.data === undefined ? (
        list.data ? (
          <p class="muted" role="status">
            Loading the dashboard…
          </p>
        ) : null
      ) : (
        <>
          {board.data.description ? <p>{board.data.description}</p> : null}
          {(board.data.panels ?? []).length === 0 ? (
            <Empty>This dashboard has no panels.</Empty>
          ) : (
            <div class="panels">
              {(board.data.panels ?? []).map((p, i) => (
                <PanelView key={`${board.data?.id}-${String(i)}`} project={project} panel={p} index={i} />
              ))}
            </div>
          )}
        </>
      )}
    </>
  );
}
