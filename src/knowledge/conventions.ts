/**
 * Where tests, source, generated and vendored files live, summarised from the file roles of
 * every path (src/core/file-roles.ts) to a few locations a reader can check:
 * - a file whose directory gives it its role (`test/`, `vendor/`, `dist/`) is placed at the
 *   shallowest such directory: `packages/a/test/x.ts` → `packages/a/test/`;
 * - a file whose name gives it its role is placed by a name glob under its top directory
 *   (`src/**\/*.test.ts`, `*_test.go` at the root), or by its own path (`package-lock.json`);
 * - a source file is placed at its first `src`/`lib`/`source` directory (within three levels),
 *   else at the package directory of a monorepo container (`packages/a/`), else at its top
 *   directory; a file at the root is `./`.
 * Locations that differ only in one directory that is not their last are merged with `*`
 * (`packages/a/test/` + `packages/b/test/` → `packages/*\/test/`), a location inside another is
 * dropped, and the rest are listed by how many files they hold, at most 20.
 */
import type { FileRole } from '../core/file-roles';
import { roleOfPath } from '../core/file-roles';
import { languageForPath } from '../core/languages';
import type { KnowledgeConventions } from '../core/repo-knowledge';
import { basename, dirname, joinPath, type Sources } from './sources';

const MAX_LOCATIONS = 20;
const SOURCE_DIRS = new Set(['src', 'lib', 'source', 'sources']);
const CONTAINERS = new Set([
  'packages',
  'apps',
  'libs',
  'modules',
  'services',
  'plugins',
  'crates',
  'projects',
]);

interface Location {
  segments: string[];
  /** A directory (`test/`) rather than a glob or path ending in a file name. */
  dir: boolean;
  files: number;
}

const render = (l: Location) =>
  l.segments.length === 0 ? './' : `${l.segments.join('/')}${l.dir ? '/' : ''}`;

/** The name glob that gives `name` its role in `dir` (`*.test.ts`, `test_*.py`), or the name itself. */
function namePattern(name: string, dir: string, role: FileRole, src: Sources): string {
  const probe = (candidate: string) =>
    roleOfPath(joinPath(dir, candidate), { attributes: src.attributes }) === role;
  const suffixes: string[] = [];
  const prefixes: string[] = [];
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let i = 1; i < name.length; i++) {
    const c = name[i] as string;
    const camel = /[A-Z]/.test(c) && /[a-z]/.test(name[i - 1] as string);
    if ('._-'.includes(c) || camel) suffixes.push(name.slice(i));
    if ('_-'.includes(c) && i + 1 < dot) prefixes.push(name.slice(0, i + 1));
  }
  for (const suffix of suffixes.sort((a, b) => a.length - b.length)) {
    if (probe(`__svc_probe__${suffix}`)) return `*${suffix}`;
  }
  for (const prefix of prefixes.sort((a, b) => a.length - b.length)) {
    if (probe(`${prefix}__svc_probe__${ext}`)) return `${prefix}*${ext}`;
  }
  return name;
}

function locate(path: string, role: FileRole, src: Sources): Location {
  const segments = path.split('/');
  const dirs = segments.slice(0, -1);
  if (role === 'production') {
    const sourceAt = dirs.slice(0, 3).findIndex((s) => SOURCE_DIRS.has(s));
    if (sourceAt !== -1) return { segments: dirs.slice(0, sourceAt + 1), dir: true, files: 1 };
    if (dirs.length >= 2 && CONTAINERS.has(dirs[0] as string))
      return { segments: dirs.slice(0, 2), dir: true, files: 1 };
    return { segments: dirs.slice(0, 1), dir: true, files: 1 };
  }
  for (let i = 1; i <= dirs.length; i++) {
    if (src.dirRole(dirs.slice(0, i).join('/')) === role)
      return { segments: dirs.slice(0, i), dir: true, files: 1 };
  }
  const name = basename(path);
  const pattern = namePattern(name, dirname(path), role, src);
  if (pattern === name || dirs.length === 0) return { segments: [...dirs, pattern], dir: false, files: 1 };
  return { segments: [dirs[0] as string, '**', pattern], dir: false, files: 1 };
}

/** Merges locations that differ in one segment other than the last into one with `*` there. */
function generalise(locations: Location[]): Location[] {
  let current = locations;
  let changed = true;
  while (changed) {
    changed = false;
    const maxLength = Math.max(0, ...current.map((l) => l.segments.length));
    for (let i = maxLength - 2; i >= 0; i--) {
      const groups = new Map<string, Location[]>();
      for (const l of current) {
        if (l.segments.length < 2 || i >= l.segments.length - 1 || l.segments[i] === '**') {
          groups.set(`\u0001${render(l)}`, [l]);
          continue;
        }
        const key = `${l.dir}\u0000${l.segments.map((s, j) => (j === i ? '\u0002' : s)).join('/')}`;
        groups.set(key, [...(groups.get(key) ?? []), l]);
      }
      const next: Location[] = [];
      for (const group of groups.values()) {
        const first = group[0] as Location;
        if (group.length < 2) {
          next.push(first);
          continue;
        }
        const segments = [...first.segments];
        segments[i] = '*';
        next.push({ segments, dir: first.dir, files: group.reduce((n, l) => n + l.files, 0) });
        changed = true;
      }
      current = next;
    }
  }
  return current;
}

/** Whether directory location `outer` contains `inner` (a `*` segment matches any one directory). */
function contains(outer: Location, inner: Location): boolean {
  if (!outer.dir || outer.segments.length === 0 || outer === inner) return false;
  if (inner.segments.length < outer.segments.length) return false;
  if (inner.segments.length === outer.segments.length && !inner.dir) return false;
  return outer.segments.every((s, i) => s === '*' || s === inner.segments[i]);
}

function summarise(paths: string[], role: FileRole, src: Sources): string[] {
  const byKey = new Map<string, Location>();
  for (const path of paths) {
    const l = locate(path, role, src);
    const key = render(l);
    const known = byKey.get(key);
    if (known) known.files += 1;
    else byKey.set(key, l);
  }
  const merged = generalise([...byKey.values()]);
  const kept = merged.filter(
    (l) => !merged.some((o) => o !== l && contains(o, l) && render(o) !== render(l)),
  );
  for (const l of kept) {
    l.files += merged.filter((o) => o !== l && contains(l, o)).reduce((n, o) => n + o.files, 0);
  }
  return kept
    .sort((a, b) => b.files - a.files || render(a).localeCompare(render(b)))
    .slice(0, MAX_LOCATIONS)
    .map(render);
}

export function deriveConventions(src: Sources, roles: ReadonlyMap<string, FileRole>): KnowledgeConventions {
  const of = (role: FileRole, codeOnly: boolean) =>
    [...roles].filter(([p, r]) => r === role && (!codeOnly || languageForPath(p) !== null)).map(([p]) => p);
  return {
    test_locations: summarise(of('test', true), 'test', src),
    source_roots: summarise(of('production', true), 'production', src),
    generated_paths: summarise(of('generated', false), 'generated', src),
    vendored_paths: summarise(of('vendored', false), 'vendored', src),
  };
}
