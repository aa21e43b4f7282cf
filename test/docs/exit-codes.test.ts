/**
 * The README's exit-code table for `svc review` is what CI scripts are written against: it lists
 * every code the CLI exits with, each once (it once listed 3 twice and left out 2).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';

describe('README exit-code table', () => {
  it('lists every exit code of the CLI once, in order', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const table = readme.split('| exit code | meaning |')[1]?.split('\n\n')[0] ?? '';
    const codes = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(codes).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });
});
