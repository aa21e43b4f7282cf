/** What a review covered: every changed file is reviewed or left out by a named reason, counted. */
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../eval/evaluate';
import type { Diff } from '../../src/core/review';
import { fileNotAnalyzedGap } from '../../src/core/runs';
import { coverageText, notAnalyzedSummary, reviewCoverage } from '../../src/review/coverage';
import { ReviewerGaps } from '../../src/review/reviewer-gaps';
import type { ReviewFile } from '../../src/reviewers/types';

const code = 'export const a = 1;\n';
const diffFile = (path: string) => snippetDiffFile(path, code);

describe('reviewCoverage', () => {
  it('counts files reviewed by role and each file left out by why', () => {
    const files = {
      app: diffFile('src/app.ts'),
      test: diffFile('test/app.test.ts'),
      gen: diffFile('src/gen/api.ts'),
      ignored: diffFile('legacy/old.ts'),
      image: { ...diffFile('logo.png'), binary: true },
      huge: { ...diffFile('data.json'), skipped: { code: 'file_too_large', message: 'too large' } },
      bundle: diffFile('dist/bundle.js'),
      broken: diffFile('src/broken.ts'),
      partly: diffFile('src/partly.ts'),
      gone: { ...diffFile('src/gone.ts'), change: 'deleted' as const },
      renamed: { ...diffFile('src/moved.ts'), changedLines: [] },
    };
    const diff: Diff = { base: 'b'.repeat(40), head: 'h'.repeat(40), files: Object.values(files), gaps: [] };
    const given = (d: (typeof files)[keyof typeof files], role?: ReviewFile['role']): ReviewFile => ({
      diff: d,
      content: code,
      ...(role ? { role } : {}),
    });
    const reviewFiles = [
      given(files.app, 'production'),
      given(files.test, 'test'),
      given(files.gen, 'generated'),
      given(files.image),
      given(files.huge),
      given(files.bundle),
      given(files.broken),
      given(files.partly),
      given(files.gone),
      given(files.renamed),
    ];
    const gaps = [
      fileNotAnalyzedGap(
        { path: 'src/broken.ts', reason: 'not parsed as typescript', lines_left_out: 4, lines: 4 },
        '',
      ),
      fileNotAnalyzedGap(
        { path: 'src/partly.ts', reason: 'not parseable as typescript', lines_left_out: 1, lines: 4 },
        '',
      ),
      {
        code: 'builtin_file_too_large',
        message: 'dist/bundle.js: too large',
        file: { path: 'dist/bundle.js', reason: 'too large', lines_left_out: 9, lines: 9, share: 1 },
      },
    ];
    const coverage = reviewCoverage({
      base: 'a'.repeat(40),
      head: 'h'.repeat(40),
      mergeBase: 'm'.repeat(40),
      diff,
      files: reviewFiles,
      gaps,
    });
    expect(coverage).toMatchObject({
      base: 'a'.repeat(40),
      merge_base: 'm'.repeat(40),
      compared_from: 'm'.repeat(40),
      changed_files: 11,
      deleted_files: 1,
      // app, test and the partly parsed file
      reviewed_files: 3,
      reviewed_by_role: { production: 2, test: 1 },
    });
    const counts = Object.fromEntries(Object.entries(coverage.left_out).map(([k, v]) => [k, v.count]));
    expect(counts).toEqual({
      role: 1,
      ignored: 1,
      size: 2,
      binary: 1,
      parse_failure: 2,
      not_diffed: 0,
      no_added_lines: 1,
    });
    expect(coverage.left_out.parse_failure.files).toEqual([
      { path: 'src/broken.ts', share: 1 },
      { path: 'src/partly.ts', share: 0.25 },
    ]);
    const text = coverageText(coverage).join('\n');
    expect(text).toContain('Reviewed 3 of 11 changed file(s) (2 production, 1 test); 1 deleted.');
    expect(text).toContain('parse failure: src/partly.ts (25% not analyzed)');
  });
});

describe('ReviewerGaps', () => {
  it('names a file not analyzed once, with every reviewer that could not read it', () => {
    const gap = fileNotAnalyzedGap(
      { path: 'a.ts', reason: 'not parseable as typescript', lines_left_out: 2, lines: 8 },
      '',
    );
    const gaps = new ReviewerGaps();
    gaps.add('security', [gap, { code: 'other', message: 'x' }]);
    gaps.add('correctness', [gap]);
    expect(gaps.list().map((g) => [g.code, g.message])).toEqual([
      [
        'files_not_analyzed',
        'security, correctness: a.ts: not parseable as typescript; 2 of 8 line(s) (25%) not analyzed',
      ],
      ['other', 'security: x'],
    ]);
    expect(gaps.list()[0]?.file?.share).toBe(0.25);
  });
});

describe('notAnalyzedSummary', () => {
  it('names each file left out with its share, and nothing when every file was read', () => {
    const gap = fileNotAnalyzedGap(
      { path: 'src/a.ts', reason: 'not parseable as typescript', lines_left_out: 5, lines: 20 },
      '',
    );
    expect(notAnalyzedSummary([gap, { code: 'other', message: 'x' }])).toBe(
      'Not analyzed (files_not_analyzed): `src/a.ts` (25%, not parseable as typescript); no finding can be reported there.',
    );
    expect(notAnalyzedSummary([{ code: 'other', message: 'x' }])).toBe('');
  });
});
