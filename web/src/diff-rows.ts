/**
 * Which diff lines to show around findings: a few before each finding's first line and after
 * its last, with a gap row for each run left out. Plain TypeScript (no JSX, no DOM) so the
 * suite tests it directly.
 */

/** Lines of context shown before a finding's first line and after its last. */
export const BEFORE = 3;
export const AFTER = 3;

export interface DiffRowLine {
  kind: 'add' | 'del' | 'context';
  old_line: number | null;
  new_line: number | null;
  text: string;
}

export type Row<L extends DiffRowLine = DiffRowLine> =
  | { kind: 'line'; line: L }
  | { kind: 'gap'; hidden: number };

/**
 * The rows to show: every diff line within reach of a finding, and a gap row for each run of
 * lines left out or for a jump to another hunk. A deleted line has no new-file number; it
 * stands at the place of the next new-file line.
 */
export function visibleRows<L extends DiffRowLine>(
  file: { hunks: { lines: L[] }[] },
  findings: { line: number; end_line: number }[],
): Row<L>[] {
  const windows = findings.map((f) => [f.line - BEFORE, Math.max(f.end_line, f.line) + AFTER] as const);
  const near = (n: number) => windows.some(([from, to]) => n >= from && n <= to);
  const rows: Row<L>[] = [];
  let hidden = 0;
  let newHunk = false;
  file.hunks.forEach((hunk, h) => {
    newHunk = h > 0;
    const places: number[] = [];
    let upcoming = Number.POSITIVE_INFINITY;
    for (let i = hunk.lines.length - 1; i >= 0; i--) {
      upcoming = hunk.lines[i]?.new_line ?? upcoming;
      places[i] = upcoming;
    }
    hunk.lines.forEach((line, i) => {
      if (!near(places[i] ?? upcoming)) {
        hidden++;
        return;
      }
      if (hidden > 0 || (newHunk && rows.length > 0)) rows.push({ kind: 'gap', hidden });
      hidden = 0;
      newHunk = false;
      rows.push({ kind: 'line', line });
    });
  });
  return rows;
}
