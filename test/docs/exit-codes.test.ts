/**
 * The exit-code table for `svc review` (docs/cli.md) is what CI scripts are written against: it
 * lists every code the CLI exits with, each once (it once listed 3 twice and left out 2).
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { readDoc, tableRows } from './markdown';

describe('the CLI exit-code table', () => {
  it('lists every exit code of the CLI once, in order', () => {
    const rows = tableRows(readDoc('docs/cli.md'), 'Review a branch: `svc review`');
    const codes = rows.filter((row) => /^\d+$/.test(row[0] ?? '')).map((row) => Number(row[0]));
    expect(codes).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });

  it('is the table the README links to', () => {
    expect(readDoc('README.md')).toContain('](docs/cli.md#exit-codes)');
  });
});
