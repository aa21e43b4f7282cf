/** Path globs: `**` spans directories, `*` stays in one segment, a bare name matches at any depth. */
import { describe, expect, it } from 'vitest';
import { globListMatcher, matchesGlob } from '../../src/core/globs';

describe('globs', () => {
  it('match as rules and .svc.yml write them', () => {
    expect(matchesGlob('src/a/b.test.ts', '**/*.test.ts')).toBe(true);
    expect(matchesGlob('b.test.ts', '**/*.test.ts')).toBe(true);
    expect(matchesGlob('src/a/b.ts', 'src/*.ts')).toBe(false);
    expect(matchesGlob('deep/jakefile.js', '{J,j}akefile.*')).toBe(true);
    expect(matchesGlob('src/jakefile.js/x.ts', '{J,j}akefile.*')).toBe(false);
  });

  it('give a list the same answers as testing each glob', () => {
    const globs = ['**/test/**', '*.md', 'docs/**', '{G,g}ulpfile.*'];
    const matches = globListMatcher(globs);
    for (const path of [
      'a/test/x.js',
      'README.md',
      'docs/a/b.ts',
      'gulpfile.ts',
      'src/app.ts',
      'src/docs.ts',
    ]) {
      expect(matches(path), path).toBe(globs.some((g) => matchesGlob(path, g)));
    }
    expect(globListMatcher([])('anything')).toBe(false);
  });
});
