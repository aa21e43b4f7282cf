/** Diffs for the LLM engine tests, built from hunks written as unified-diff lines. */
import type { Diff, DiffFile, DiffLine, Hunk, LineRange } from '../../../src/core/review';
import type { ReviewInput } from '../../../src/reviewers/types';

/** `newStart`/`oldStart` and lines prefixed '+', '-' or ' ', as in a unified diff. */
export function hunk(oldStart: number, newStart: number, lines: string[]): Hunk {
  let oldLine = oldStart;
  let newLine = newStart;
  const out: DiffLine[] = lines.map((l) => {
    const marker = l[0];
    const text = l.slice(1);
    if (marker === '+') return { kind: 'add', text, oldLine: null, newLine: newLine++ };
    if (marker === '-') return { kind: 'del', text, oldLine: oldLine++, newLine: null };
    return { kind: 'context', text, oldLine: oldLine++, newLine: newLine++ };
  });
  const oldLines = out.filter((l) => l.kind !== 'add').length;
  const newLines = out.filter((l) => l.kind !== 'del').length;
  return {
    oldStart,
    oldLines,
    newStart,
    newLines,
    header: `@@ -${oldStart},${oldLines} +${newStart},${newLines} @@`,
    lines: out,
  };
}

function changedLines(hunks: Hunk[]): LineRange[] {
  const added = hunks.flatMap((h) =>
    h.lines.flatMap((l) => (l.kind === 'add' && l.newLine !== null ? [l.newLine] : [])),
  );
  added.sort((a, b) => a - b);
  const ranges: LineRange[] = [];
  for (const line of added) {
    const last = ranges.at(-1);
    if (last && line === last.end + 1) last.end = line;
    else ranges.push({ start: line, end: line });
  }
  return ranges;
}

export function file(path: string, hunks: Hunk[], change: DiffFile['change'] = 'modified'): DiffFile {
  return {
    path,
    oldPath: null,
    change,
    binary: false,
    oldMode: null,
    newMode: null,
    language: path.endsWith('.ts') ? 'typescript' : null,
    additions: hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === 'add').length, 0),
    deletions: hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === 'del').length, 0),
    changedLines: changedLines(hunks),
    hunks,
    skipped: null,
  };
}

/** A new file of `count` added lines, each about `width` characters. */
export function addedFile(path: string, count: number, width = 60): DiffFile {
  const lines = Array.from(
    { length: count },
    (_, i) => `+const v${i} = ${JSON.stringify('x'.repeat(Math.max(0, width - 20)))};`,
  );
  return file(path, [hunk(0, 1, lines)], 'added');
}

export function diffOf(files: DiffFile[]): Diff {
  return { base: 'a'.repeat(40), head: 'b'.repeat(40), files, gaps: [] };
}

export function reviewInput(files: DiffFile[], extra: Partial<ReviewInput> = {}): ReviewInput {
  return {
    diff: diffOf(files),
    files: files.map((f) => ({ diff: f, content: null })),
    guidance: '',
    learnings: [],
    signal: new AbortController().signal,
    ...extra,
  };
}

/** src/app.ts: lines 10-12 added, 20 added, in two hunks. */
export function appFile(): DiffFile {
  return file('src/app.ts', [
    hunk(8, 8, [
      ' function a() {',
      ' const x = 1;',
      '+const y = eval(input);',
      '+const z = y + 1;',
      '+return z;',
      ' }',
    ]),
    hunk(15, 18, [' // b', ' function b() {', '-  old();', '+  fresh();', ' }']),
  ]);
}
