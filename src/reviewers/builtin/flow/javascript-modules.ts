/**
 * What a JavaScript or TypeScript file imports from other files of its repository and what it
 * exports, read from its top-level statements. A helper exported from `./utils` whose parameter
 * reaches a shell sink is a sink for the files that import it (one import deep): the engine reads
 * the module (./imported-helpers.ts there), and the importing file finds its calls through the
 * names it bound here.
 */
import type { SgNode } from '@ast-grep/napi';

/** A name bound to something a relative module exports: `run` in `import { run } from './sh'`. */
export interface ImportBinding {
  /** The module as written: `./sh`, `../lib/shell`. */
  specifier: string;
  /** The export it names: a name, `default`, or `*` for the whole module (`import * as sh`). */
  imported: string;
  /** The identifier the file binds (its declaration). */
  local: SgNode;
}

const RELATIVE = /^['"](\.{1,2}\/[^'"]*)['"]$/;
const REQUIRE = /^require\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)$/;

/** The relative module a `require('./x')` call or an import's source string names, if any. */
function relativeSpecifier(node: SgNode | null): string | null {
  if (!node) return null;
  const text = node.text();
  return (node.kind() === 'string' ? RELATIVE.exec(text) : REQUIRE.exec(text))?.[1] ?? null;
}

/** The names the file binds to exports of relative modules, from its top-level statements. */
export function relativeImports(root: SgNode): ImportBinding[] {
  const found: ImportBinding[] = [];
  for (const statement of root.children()) {
    const kind = statement.kind();
    if (kind === 'import_statement') importBindings(statement, found);
    else if (kind === 'lexical_declaration' || kind === 'variable_declaration') {
      for (const declarator of statement.children().filter((c) => c.kind() === 'variable_declarator'))
        requireBindings(declarator, found);
    }
  }
  return found;
}

function importBindings(statement: SgNode, found: ImportBinding[]): void {
  const specifier = relativeSpecifier(statement.field('source'));
  if (!specifier) return;
  const clause = statement.children().find((c) => c.kind() === 'import_clause');
  if (!clause) return;
  for (const part of clause.children()) {
    if (part.kind() === 'identifier') found.push({ specifier, imported: 'default', local: part });
    else if (part.kind() === 'namespace_import') {
      const local = part.children().find((c) => c.kind() === 'identifier');
      if (local) found.push({ specifier, imported: '*', local });
    } else if (part.kind() === 'named_imports') {
      for (const spec of part.children().filter((c) => c.kind() === 'import_specifier')) {
        const name = spec.field('name');
        const local = spec.field('alias') ?? name;
        if (name && local) found.push({ specifier, imported: name.text(), local });
      }
    }
  }
}

/** `const sh = require('./sh')`, `const { run, exec: x } = require('./sh')`, `const run = require('./sh').run`. */
function requireBindings(declarator: SgNode, found: ImportBinding[]): void {
  const name = declarator.field('name');
  let value = declarator.field('value');
  if (!name || !value) return;
  while (value.kind() === 'await_expression' || value.kind() === 'parenthesized_expression') {
    const inner: SgNode | undefined = value.namedChildren()[0];
    if (!inner) return;
    value = inner;
  }
  let member: string | null = null;
  if (value.kind() === 'member_expression') {
    member = value.field('property')?.text() ?? null;
    value = value.field('object') ?? value;
  }
  const specifier = relativeSpecifier(value.kind() === 'call_expression' ? value : null);
  if (!specifier) return;
  if (name.kind() === 'identifier') {
    found.push({ specifier, imported: member ?? '*', local: name });
    return;
  }
  if (name.kind() !== 'object_pattern' || member) return;
  for (const entry of name.children()) {
    if (entry.kind() === 'shorthand_property_identifier_pattern')
      found.push({ specifier, imported: entry.text(), local: entry });
    else if (entry.kind() === 'pair_pattern') {
      const key = entry.field('key');
      const local = entry.field('value');
      if (key && local?.kind() === 'identifier') found.push({ specifier, imported: key.text(), local });
    }
  }
}

/**
 * The names other files import `fn` by: `export function run`, `export const run = ...`,
 * `exports.run = function`, `module.exports = { run }`, `export { run as exec }`,
 * `module.exports = run` / `export default run` (as `default`). `exported` holds the file's
 * export lists by local name (exportLists).
 */
export function exportedNames(
  fn: SgNode,
  localName: string | null,
  exported: Map<string, string[]>,
): string[] {
  const names = new Set<string>(localName ? (exported.get(localName) ?? []) : []);
  let holder = fn.parent();
  if (holder?.kind() === 'variable_declarator') holder = holder.parent()?.parent() ?? null;
  if (holder?.kind() === 'export_statement') {
    const isDefault = holder.children().some((c) => c.kind() === 'default');
    if (isDefault) names.add('default');
    else if (localName) names.add(localName);
  }
  // `module.exports = { run(cmd) {...} }`, `module.exports = { run: function (cmd) {...} }`
  const entry = fn.kind() === 'method_definition' ? fn : fn.parent()?.kind() === 'pair' ? fn.parent() : null;
  const object = entry?.parent();
  if (entry && object?.kind() === 'object' && object.parent()?.kind() === 'assignment_expression') {
    const target = object.parent()?.field('left')?.text();
    const key = (entry.field('key') ?? entry.field('name'))?.text().replace(/^['"]|['"]$/g, '');
    if (target === 'module.exports' && key) names.add(key);
  }
  const assignment = fn.parent();
  if (assignment?.kind() === 'assignment_expression') {
    const target = assignment.field('left')?.text() ?? '';
    const m = /^(?:module\.)?exports\.([A-Za-z_$][\w$]*)$/.exec(target);
    if (m?.[1]) names.add(m[1]);
    if (target === 'module.exports') names.add('default');
  }
  return [...names];
}

/**
 * The file's export lists, by the local name they export: `export { run, sh as exec }`,
 * `module.exports = { run, exec: sh }`, `exports.exec = sh`, `module.exports = run`.
 */
export function exportLists(root: SgNode): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  const add = (local: string, name: string) => {
    const list = lists.get(local);
    if (list) list.push(name);
    else lists.set(local, [name]);
  };
  for (const statement of root.children()) {
    if (statement.kind() === 'export_statement') {
      const clause = statement.children().find((c) => c.kind() === 'export_clause');
      if (!clause || statement.field('source')) continue;
      for (const spec of clause.children().filter((c) => c.kind() === 'export_specifier')) {
        const name = spec.field('name');
        if (name) add(name.text(), (spec.field('alias') ?? name).text());
      }
      continue;
    }
    if (statement.kind() !== 'expression_statement') continue;
    const assignment = statement.namedChildren()[0];
    if (assignment?.kind() !== 'assignment_expression') continue;
    const target = assignment.field('left')?.text() ?? '';
    const value = assignment.field('right');
    if (!value) continue;
    const member = /^(?:module\.)?exports\.([A-Za-z_$][\w$]*)$/.exec(target)?.[1];
    if (member && value.kind() === 'identifier') add(value.text(), member);
    if (target !== 'module.exports') continue;
    if (value.kind() === 'identifier') add(value.text(), 'default');
    if (value.kind() !== 'object') continue;
    for (const entry of value.namedChildren()) {
      if (entry.kind() === 'shorthand_property_identifier') add(entry.text(), entry.text());
      else if (entry.kind() === 'pair') {
        const key = entry.field('key');
        const local = entry.field('value');
        if (key && local?.kind() === 'identifier') add(local.text(), key.text());
      }
    }
  }
  return lists;
}
