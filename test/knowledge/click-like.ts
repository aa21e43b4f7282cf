/**
 * The click-like fixture (test/fixtures/knowledge/click-like) as a code host would list and read
 * it: tests, lint and type checks all run through tox and pre-commit, workflows pin actions by SHA.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'knowledge', 'click-like');

function walk(dir: string, at = dir): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
    const full = join(at, entry.name);
    return entry.isDirectory() ? walk(dir, full) : [relative(dir, full)];
  });
}

/** Path → text of every file of the fixture. */
export const CLICK_LIKE: Record<string, string> = Object.fromEntries(
  walk(DIR).map((p) => [p, readFileSync(join(DIR, p), 'utf8')]),
);
