/**
 * The environment variables svc's own code reads, found by parsing src/ and bin/ (comments and
 * the reviewed-code examples in them are not reads). A read is `process.env.X`, `env.X`,
 * `env['X']`, `something.env.X`, or commander's `.env('X')`; a file that reads `env[name]` with a
 * computed name reads the variable-shaped string literals it holds (`value('GITHUB_APP_ID')`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lang, parse, type SgNode } from '@ast-grep/napi';
import { repoRoot } from './markdown';

const VARIABLE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;
const ENV_OBJECT = /(^|\.)env$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const stringValue = (node: SgNode | null): string | null =>
  node?.kind() === 'string' ? node.text().slice(1, -1) : null;

function readsIn(file: string): string[] {
  const lang = file.endsWith('.ts') ? Lang.TypeScript : Lang.JavaScript;
  const root = parse(lang, readFileSync(file, 'utf8')).root();
  const names: string[] = [];
  for (const member of root.findAll({ rule: { kind: 'member_expression' } })) {
    const object = member.field('object')?.text() ?? '';
    if (ENV_OBJECT.test(object)) names.push(member.field('property')?.text() ?? '');
  }
  let computed = false;
  for (const subscript of root.findAll({ rule: { kind: 'subscript_expression' } })) {
    if (!ENV_OBJECT.test(subscript.field('object')?.text() ?? '')) continue;
    const name = stringValue(subscript.field('index'));
    if (name === null) computed = true;
    else names.push(name);
  }
  for (const call of root.findAll('$OPTION.env($NAME)')) names.push(stringValue(call.getMatch('NAME')) ?? '');
  if (computed) {
    for (const literal of root.findAll({ rule: { kind: 'string_fragment' } })) {
      if (literal.text().includes('_')) names.push(literal.text());
    }
  }
  return names.filter((name) => VARIABLE.test(name));
}

/** Each variable read, with the files that read it. */
export function environmentReads(): Map<string, string[]> {
  const reads = new Map<string, string[]>();
  for (const dir of ['src', 'bin']) {
    for (const file of sourceFiles(join(repoRoot, dir))) {
      for (const name of new Set(readsIn(file))) {
        reads.set(name, [...(reads.get(name) ?? []), file.slice(repoRoot.length)]);
      }
    }
  }
  return reads;
}
