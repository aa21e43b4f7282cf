/**
 * A file's findings beside the diff lines they point at: the lines the review read around each
 * finding (a few before, a few after), the finding's card right under its last line, and the
 * lines between findings folded. The diff comes from the pass that reported them; when it
 * cannot be read (the repository moved, the commits are gone) the findings are listed by line
 * number, saying why.
 */
import type { ComponentChildren } from 'preact';
import { api, type DiffFile, type Finding, type List, useLoad } from '../api';
import { type Row, visibleRows } from '../diff-rows';
import { Markdown } from '../markdown';
import { Link } from '../router';
import { projectPath, Sev } from '../ui';
import { DispositionButton } from './findings';

type Line = DiffFile['hunks'][number]['lines'][number];

export function FindingCard({
  project,
  finding: f,
  onChange,
}: {
  project: string;
  finding: Finding;
  onChange: () => void;
}) {
  return (
    <div class="finding-card">
      <div class="finding-head">
        <Sev s={f.severity} /> <Link href={projectPath(project, 'findings', f.id)}>{f.title}</Link>{' '}
        <span class={`st st-${f.status}`}>{f.status}</span>{' '}
        <span class="muted small">
          line {f.line}
          {f.end_line > f.line ? `–${f.end_line}` : ''}
        </span>
      </div>
      <Markdown text={f.body} />
      {f.suggestion ? <pre class="code">{f.suggestion}</pre> : null}
      <div class="muted small">
        <code>{f.rule}</code> · by {f.reviewers.join(', ')}
        {f.dismissed_reason ? ` · dismissed: “${f.dismissed_reason}”` : ''}
      </div>
      <DispositionButton project={project} finding={f} onDone={onChange} />
    </div>
  );
}

/** The findings by line number, without code: when the diff cannot be shown. */
function ByLineNumber({
  project,
  findings,
  onChange,
}: {
  project: string;
  findings: Finding[];
  onChange: () => void;
}) {
  return (
    <ol class="lines">
      {findings.map((f) => (
        <li key={f.id} class={`line-finding sev-border-${f.severity} lf-${f.status}`}>
          <div class="gutter">
            L{f.line}
            {f.end_line > f.line ? `–${f.end_line}` : ''}
          </div>
          <FindingCard project={project} finding={f} onChange={onChange} />
        </li>
      ))}
    </ol>
  );
}

function DiffTable({
  path,
  rows,
  children,
}: {
  path: string;
  rows: Row<Line>[];
  children: (line: Line) => ComponentChildren;
}) {
  return (
    <table class="diff">
      <caption class="visually-hidden">Changes to {path} around its findings</caption>
      <thead class="visually-hidden">
        <tr>
          <th scope="col">Old line</th>
          <th scope="col">New line</th>
          <th scope="col">Code</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row, i) =>
          row.kind === 'gap' ? (
            <tr key={`gap${i}`} class="diff-gap">
              <td colSpan={3}>
                {row.hidden > 0 ? `… ${row.hidden} line${row.hidden === 1 ? '' : 's'} not shown` : '…'}
              </td>
            </tr>
          ) : (
            [
              <tr key={`l${i}`} class={`diff-${row.line.kind}`}>
                <td class="ln">{row.line.old_line ?? ''}</td>
                <td class="ln">{row.line.new_line ?? ''}</td>
                <td class="code-cell">
                  <span class="sign" aria-hidden="true">
                    {row.line.kind === 'add' ? '+' : row.line.kind === 'del' ? '-' : ' '}
                  </span>
                  <span class="visually-hidden">
                    {row.line.kind === 'add' ? 'added: ' : row.line.kind === 'del' ? 'removed: ' : ''}
                  </span>
                  {row.line.text}
                </td>
              </tr>,
              children(row.line),
            ]
          ),
        )}
      </tbody>
    </table>
  );
}

export function FileFindings({
  project,
  passId,
  path,
  findings,
  onChange,
}: {
  project: string;
  passId: string | null;
  path: string;
  findings: Finding[];
  onChange: () => void;
}) {
  const loaded = useLoad(
    async () =>
      passId
        ? ((
            await api<List<DiffFile>>('GET', `/review-results/${encodeURIComponent(passId)}/diff`, {
              project,
              query: { path, limit: 1 },
            })
          ).data[0] ?? null)
        : null,
    [project, passId, path],
  );
  if (loaded.data === undefined && !loaded.error)
    return (
      <p class="muted small" role="status">
        Loading the diff…
      </p>
    );
  const file = loaded.data ?? null;
  const why = loaded.error
    ? `The diff could not be read (${loaded.error.message}); the findings are listed by line.`
    : !file
      ? 'This file is not in the reviewed diff; the findings are listed by line.'
      : file.skipped
        ? `The diff of this file was not read in full (${file.skipped.message}); the findings are listed by line.`
        : null;
  if (why || !file)
    return (
      <>
        <p class="muted small">{why}</p>
        <ByLineNumber project={project} findings={findings} onChange={onChange} />
      </>
    );
  // Each finding goes under its last line; one whose lines the diff does not show goes first.
  const shownNew = new Set(file.hunks.flatMap((h) => h.lines.map((l) => l.new_line)));
  const under = (f: Finding) => Math.max(f.line, f.end_line);
  const placed = findings.filter((f) => shownNew.has(under(f)));
  const unplaced = findings.filter((f) => !shownNew.has(under(f)));
  return (
    <>
      {unplaced.length > 0 ? (
        <>
          <p class="muted small">Not on a line of this diff (the file changed since):</p>
          <ByLineNumber project={project} findings={unplaced} onChange={onChange} />
        </>
      ) : null}
      <DiffTable path={path} rows={visibleRows(file, placed)}>
        {(line) =>
          placed
            .filter((f) => line.new_line !== null && under(f) === line.new_line)
            .map((f) => (
              <tr key={f.id} class={`diff-finding sev-border-${f.severity} lf-${f.status}`}>
                <td colSpan={3}>
                  <FindingCard project={project} finding={f} onChange={onChange} />
                </td>
              </tr>
            ))
        }
      </DiffTable>
    </>
  );
}
