/**
 * Just enough Markdown for the docs tests: a page's headings as GitHub anchors them, its tables
 * by section, and its relative links. Code blocks are skipped, so a `# comment` in a shell
 * example is not a heading.
 */
import { readFileSync } from 'node:fs';

export const repoRoot = new URL('../../', import.meta.url).pathname;

export function readDoc(path: string): string {
  return readFileSync(`${repoRoot}${path}`, 'utf8');
}

/** The page's lines outside fenced code blocks. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

export interface Heading {
  level: number;
  text: string;
  anchor: string;
}

export function headings(markdown: string): Heading[] {
  const seen = new Map<string, number>();
  return proseLines(markdown).flatMap((line) => {
    const m = /^(#{1,6}) (.+?)\s*$/.exec(line);
    if (!m) return [];
    const text = (m[2] ?? '').replace(/`/g, '');
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return [{ level: (m[1] ?? '').length, text, anchor: count === 0 ? base : `${base}-${count}` }];
  });
}

/** The rows of every table under the `##` section titled `section` (its subsections included). */
export function tableRows(markdown: string, section: string): string[][] {
  const rows: string[][] = [];
  let inside = false;
  for (const line of proseLines(markdown)) {
    const heading = /^(#{1,6}) (.+?)\s*$/.exec(line);
    if (heading && (heading[1] ?? '').length <= 2) inside = heading[2] === section;
    if (!inside || !line.startsWith('|') || /^\|[-| :]+\|$/.test(line)) continue;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The names in backticks in a cell: `` `A` / `B` `` is A and B. */
export function codeNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
}

/** Relative link targets in the page's prose: `file.md#anchor`, `#anchor`, `../src/x.ts`. */
export function relativeLinks(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) =>
    [...line.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1] ?? '')
      .filter((target) => !/^[a-z]+:/i.test(target)),
  );
}
