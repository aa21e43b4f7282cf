/** The console's choice of diff lines around findings (web/src/diff-rows.ts). */
import { describe, expect, it } from 'vitest';
import { type DiffRowLine, visibleRows } from '../../web/src/diff-rows';

const add = (n: number): DiffRowLine => ({ kind: 'add', old_line: null, new_line: n, text: `line ${n}` });
const ctx = (n: number): DiffRowLine => ({ kind: 'context', old_line: n, new_line: n, text: `line ${n}` });
const del = (old: number): DiffRowLine => ({
  kind: 'del',
  old_line: old,
  new_line: null,
  text: `old ${old}`,
});
const shown = (rows: ReturnType<typeof visibleRows>) =>
  rows.map((r) => (r.kind === 'gap' ? `…${r.hidden}` : (r.line.new_line ?? `-${r.line.old_line}`)));

describe('visibleRows', () => {
  it('shows three lines before and after a finding and folds the rest with their count', () => {
    const file = { hunks: [{ lines: Array.from({ length: 40 }, (_, i) => add(i + 1)) }] };
    expect(shown(visibleRows(file, [{ line: 20, end_line: 21 }]))).toEqual([
      '…16',
      17,
      18,
      19,
      20,
      21,
      22,
      23,
      24,
    ]);
  });

  it('joins findings whose windows meet, and folds between those that do not', () => {
    const file = { hunks: [{ lines: Array.from({ length: 30 }, (_, i) => add(i + 1)) }] };
    expect(
      shown(
        visibleRows(file, [
          { line: 2, end_line: 2 },
          { line: 8, end_line: 8 },
          { line: 25, end_line: 25 },
        ]),
      ),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, '…10', 22, 23, 24, 25, 26, 27, 28]);
  });

  it('keeps a deleted line with the new line it precedes', () => {
    const file = { hunks: [{ lines: [ctx(9), del(10), add(10), ctx(11)] }] };
    expect(shown(visibleRows(file, [{ line: 10, end_line: 10 }]))).toEqual([9, '-10', 10, 11]);
    // Far from the finding, the deleted line is folded with its neighbours.
    const far = { hunks: [{ lines: [del(1), add(1), ...Array.from({ length: 10 }, (_, i) => ctx(i + 2))] }] };
    expect(shown(visibleRows(far, [{ line: 10, end_line: 10 }]))).toEqual(['…7', 7, 8, 9, 10, 11]);
  });

  it('marks the jump between hunks even when nothing between them is folded', () => {
    const file = { hunks: [{ lines: [add(3)] }, { lines: [add(40)] }] };
    expect(
      shown(
        visibleRows(file, [
          { line: 3, end_line: 3 },
          { line: 40, end_line: 40 },
        ]),
      ),
    ).toEqual([3, '…0', 40]);
  });

  it('shows nothing without findings', () => {
    expect(visibleRows({ hunks: [{ lines: [add(1)] }] }, [])).toEqual([]);
  });
});
