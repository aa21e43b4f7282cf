/**
 * docs/configuration.md is the one list of what can be configured. An operator who reads it must
 * find every environment variable svc reads, and nothing svc ignores; every setting must show the
 * default the code applies.
 */
import { describe, expect, it } from 'vitest';
import { PROJECT_SETTINGS, WORKSPACE_SETTINGS } from '../../src/core/settings';
import { environmentReads } from './env-reads';
import { codeNames, headings, readDoc, tableRows } from './markdown';

const reference = readDoc('docs/configuration.md');
const VARIABLE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/** The variables named in the first column of the reference's tables. */
function documentedVariables(): Set<string> {
  const names = headings(reference)
    .filter((h) => h.level === 2)
    .flatMap((h) => tableRows(reference, h.text))
    .flatMap((row) => codeNames(row[0] ?? '').map((name) => name.split('=')[0] ?? ''));
  return new Set(names.filter((name) => VARIABLE.test(name)));
}

describe('the configuration reference', () => {
  const documented = documentedVariables();
  const reads = environmentReads();

  it('finds the reads it is checked against (the scan itself works)', () => {
    // Read directly, through commander's .env() and through a helper that indexes env by name.
    expect(reads.get('SVC_DATA_DIR')).toContain('src/config.ts');
    expect(reads.get('SVC_URL')).toContain('src/cli/main.ts');
    expect(reads.get('GITHUB_APP_ID')).toContain('src/codehost/github/config.ts');
    // Text about reviewed code, in comments, is not a read.
    expect(reads.has('JWT_SECRET')).toBe(false);
  });

  it('lists every environment variable the code reads', () => {
    const missing = [...reads.keys()].filter((name) => !documented.has(name)).sort();
    expect(missing, `read by ${missing.map((n) => `${n}: ${reads.get(n)?.join(', ')}`).join('; ')}`).toEqual(
      [],
    );
  });

  it('lists only variables the code reads', () => {
    expect([...documented].filter((name) => !reads.has(name)).sort()).toEqual([]);
  });

  it('gives every setting its scope and the default the code applies', () => {
    const rows = tableRows(reference, 'Project and workspace settings').slice(1);
    const table = new Map(rows.map((row) => [codeNames(row[0] ?? '')[0], row]));
    const settings = [
      ...Object.entries(PROJECT_SETTINGS).map(([key, s]) => ({ key, scope: 'project', default: s.default })),
      ...Object.entries(WORKSPACE_SETTINGS).map(([key, s]) => ({
        key,
        scope: 'workspace',
        default: s.default,
      })),
    ];
    expect([...table.keys()].sort()).toEqual(settings.map((s) => s.key).sort());
    for (const setting of settings) {
      const row = table.get(setting.key) ?? [];
      expect(row[1], setting.key).toBe(setting.scope);
      const shown = typeof setting.default === 'string' ? setting.default : JSON.stringify(setting.default);
      expect(codeNames(row[2] ?? '')[0], setting.key).toBe(setting.default === '' ? '""' : shown);
    }
  });
});
