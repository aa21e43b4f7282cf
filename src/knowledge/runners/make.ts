/**
 * make: a target, its prerequisites (as `make <prerequisite>` commands) and its recipe with one
 * level of variables; `make` alone runs the first target.
 */
import type { Sources } from '../sources';
import { flagValues, MAX_LINE, positional, type Target, type TaskRunner, textOf } from './shared';

/** `targets: prerequisites ; recipe`, read by index rather than by a pattern that could backtrack. */
function makeRule(line: string): { targets: string[]; prereqs: string[]; recipe: string | null } | null {
  const colon = line.indexOf(':');
  if (colon <= 0 || line[colon + 1] === '=' || /^[\s%]/.test(line)) return null;
  const head = line.slice(0, colon);
  if (/[=#]/.test(head)) return null;
  let rest = line.slice(line[colon + 1] === ':' ? colon + 2 : colon + 1);
  const hash = rest.indexOf('#');
  const semicolon = rest.indexOf(';');
  const recipe =
    semicolon !== -1 && (hash === -1 || semicolon < hash) ? rest.slice(semicolon + 1).trim() : null;
  rest = rest.slice(
    0,
    semicolon !== -1 && (hash === -1 || semicolon < hash) ? semicolon : hash === -1 ? undefined : hash,
  );
  return {
    targets: head.trim().split(/\s+/),
    prereqs: rest.trim().split(/\s+/).filter(Boolean),
    recipe: recipe || null,
  };
}

export function makeRunner(src: Sources): TaskRunner | null {
  const file = ['GNUmakefile', 'makefile', 'Makefile'].find((f) => textOf(src, f) !== null);
  if (!file) return null;
  const lines = (textOf(src, file) as string).replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  const vars = new Map<string, string>([['MAKE', 'make']]);
  const rules = new Map<string, { prereqs: string[]; recipe: string[] }>();
  let order: string[] = [];
  let current: { prereqs: string[]; recipe: string[] }[] = [];
  for (const line of lines) {
    if (line.length > MAX_LINE) continue;
    if (line.startsWith('\t')) {
      for (const r of current) r.recipe.push(line.trim());
      continue;
    }
    if (/^\s*(#|$)/.test(line)) continue;
    const assign = /^(?:export\s+|override\s+)?([A-Za-z_][\w.-]*)\s*(?:\?|::?|\+|!)?=\s*(.*)$/.exec(line);
    if (assign) {
      vars.set(assign[1] as string, (assign[2] as string).trim());
      current = [];
      continue;
    }
    const rule = makeRule(line);
    if (!rule) {
      current = [];
      continue;
    }
    const body = { prereqs: rule.prereqs, recipe: rule.recipe ? [rule.recipe] : [] };
    current = [];
    for (const target of rule.targets) {
      if (target.startsWith('.') || target.includes('$')) continue;
      const known = rules.get(target);
      // A target named again adds prerequisites (its recipe comes from where it has one).
      if (known) {
        known.prereqs.push(...body.prereqs);
        if (known.recipe.length === 0) current.push(known);
      } else {
        const own = { prereqs: [...body.prereqs], recipe: [...body.recipe] };
        rules.set(target, own);
        current.push(own);
        order = [...order, target];
      }
    }
  }
  const expand = (text: string) =>
    text.replace(/\$[({]([A-Za-z_][\w.-]*)[)}]/g, (m, name: string) => vars.get(name) ?? m);
  const target = (name: string): Target | null => {
    const rule = rules.get(name);
    if (!rule) return null;
    return {
      at: `${file}#${name}`,
      label: `${file} ${name}`,
      commands: [
        ...rule.prereqs.filter((p) => rules.has(p)).map((p) => `make ${p}`),
        ...rule.recipe
          .map((l) =>
            expand(l)
              .replace(/^[@+-]+/, '')
              .trim(),
          )
          .filter((l) => l !== ''),
      ],
    };
  };
  return {
    select(word, args) {
      if (!['make', 'gmake'].includes(word)) return null;
      // Another directory or makefile is not this one.
      if (flagValues(args, ['-C', '-f'], ['--directory', '--file', '--makefile']).length > 0) return [];
      const names = positional(args, new Set(['-j', '--jobs', '-l', '-o', '-W'])).filter(
        (a) => !a.includes('=') && !/^\d+$/.test(a),
      );
      const wanted = names.length > 0 ? names : order.slice(0, 1);
      return wanted.flatMap((n) => target(n) ?? []);
    },
    all: () => [...rules.keys()].flatMap((n) => target(n) ?? []),
  };
}
