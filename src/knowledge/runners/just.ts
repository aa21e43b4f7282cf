/**
 * just: a recipe, its dependencies (as `just <dependency>` commands), aliases; `just` alone runs
 * the first recipe.
 */
import { commandLines } from '../ci';
import type { Sources } from '../sources';
import { flagValues, MAX_LINE, positional, type Target, type TaskRunner, textOf } from './shared';

export function justRunner(src: Sources): TaskRunner | null {
  const file = ['justfile', 'Justfile', '.justfile'].find((f) => textOf(src, f) !== null);
  if (!file) return null;
  const recipes = new Map<string, { deps: string[]; body: string[] }>();
  const aliases = new Map<string, string>();
  let first: string | null = null;
  let current: { deps: string[]; body: string[] } | null = null;
  for (const line of (textOf(src, file) as string).split(/\r?\n/)) {
    if (line.length > MAX_LINE) continue;
    if (/^\s+\S/.test(line)) {
      current?.body.push(line.trim());
      continue;
    }
    if (/^\s*(#|$)/.test(line)) continue;
    const alias = /^alias\s+([\w-]+)\s*:=\s*([\w-]+)/.exec(line);
    if (alias) {
      aliases.set(alias[1] as string, alias[2] as string);
      current = null;
      continue;
    }
    // `[attribute] @name params: deps`: the name, then the first colon that is not `:=`.
    const head = /^(?:\[[^\]]*\]\s*)*@?([A-Za-z_][\w-]*)/.exec(line);
    const colon = head ? line.indexOf(':', head[0].length) : -1;
    if (!head || colon === -1 || line[colon + 1] === '=' || /^(set|export|import|mod)\b/.test(line)) {
      current = null;
      continue;
    }
    const name = head[1] as string;
    const deps = [...line.slice(colon + 1).matchAll(/\(?\s*([A-Za-z_][\w-]*)/g)].map((m) => m[1] as string);
    current = { deps, body: [] };
    recipes.set(name, current);
    first ??= name;
  }
  const target = (name: string): Target | null => {
    const r = recipes.get(aliases.get(name) ?? name);
    if (!r) return null;
    const own = aliases.get(name) ?? name;
    return {
      at: `${file}#${own}`,
      label: `${file} ${own}`,
      commands: [
        ...r.deps.filter((d) => recipes.has(d)).map((d) => `just ${d}`),
        ...commandLines(r.body.join('\n')).map((l) => l.replace(/^[@-]+/, '').trim()),
      ],
    };
  };
  return {
    select(word, args) {
      if (word !== 'just') return null;
      if (flagValues(args, ['-f', '-d'], ['--justfile', '--working-directory']).length > 0) return [];
      const names = positional(args, new Set(['--set'])).filter((a) => recipes.has(aliases.get(a) ?? a));
      const wanted =
        names.length > 0 ? names : positional(args, new Set()).length === 0 && first ? [first] : [];
      return wanted.flatMap((n) => target(n) ?? []);
    },
    all: () => [...recipes.keys()].flatMap((n) => target(n) ?? []),
  };
}
