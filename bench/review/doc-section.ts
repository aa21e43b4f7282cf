/**
 * docs/benchmarks.md is shared by several benchmark scripts: each one owns the text between
 * `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` and replaces only that, keeping the others'.
 * Sections stay in ORDER; a file written before the markers existed (bench:api's whole output)
 * becomes the api section.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const ORDER = [
  'api',
  'start',
  'review',
  'webhook-flood',
  'webhook-acks',
  'slow-clients',
  'soak',
  'deadlines',
] as const;
export type SectionName = (typeof ORDER)[number];

const open = (name: string) => `<!-- bench:${name} -->`;
const close = (name: string) => `<!-- /bench:${name} -->`;

function block(name: string, body: string): string {
  return `${open(name)}\n${body.trim()}\n${close(name)}`;
}

/** Replaces (or adds) section `name` of the file at `path` with `body`. */
export function writeSection(path: string, name: SectionName, body: string): void {
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : '';
  if (doc.trim() !== '' && !doc.includes('<!-- bench:')) doc = `${block('api', doc)}\n`;
  const start = doc.indexOf(open(name));
  const end = doc.indexOf(close(name));
  if (start >= 0 && end > start) {
    doc = doc.slice(0, start) + block(name, body) + doc.slice(end + close(name).length);
  } else {
    // Before the first section that comes after this one, else at the end.
    const later = ORDER.slice(ORDER.indexOf(name) + 1)
      .map((n) => doc.indexOf(open(n)))
      .filter((i) => i >= 0);
    const at = later.length > 0 ? Math.min(...later) : -1;
    doc =
      at >= 0
        ? `${doc.slice(0, at)}${block(name, body)}\n\n${doc.slice(at)}`
        : `${doc.trimEnd()}${doc.trim() ? '\n\n' : ''}${block(name, body)}\n`;
  }
  writeFileSync(path, doc.endsWith('\n') ? doc : `${doc}\n`);
}
