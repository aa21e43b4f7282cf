/**
 * What a Python file imports from other modules of its repository, read from its top-level
 * statements, and where those modules may be. A helper in `utils.py` whose parameter reaches a
 * shell sink is a sink for the files that import it (one import deep): the engine reads the
 * module (../imported-helpers.ts), and the importing file finds its calls through the names it
 * bound here (./python-callers.ts, `pythonCallersOfImported`).
 *
 * Relative imports (`from .utils import run`, `from . import utils`, `from ..lib.shell import sh`)
 * name their module exactly. Absolute ones (`from app.utils import run`) may name a module of the
 * repository or an installed package: they are looked for under the importer's directories and
 * the repository root, and count only when such a file exists at head.
 */
import { posix } from 'node:path';
import type { SgNode } from '@ast-grep/napi';

/** A name bound to something another module defines: `run` in `from .utils import run`. */
export interface PythonImportBinding {
  /** The module, dotted as written (`.utils`, `..lib.shell`, `app.utils`). */
  specifier: string;
  /** The function it names, or `*` when the name is bound to the module itself (`from . import utils`). */
  imported: string;
  /** The identifier the file binds. */
  local: SgNode;
}

const MODULE_NAME = /^\.*[A-Za-z_][\w.]*$|^\.+$/;
/** The standard library's and common packages' top-level names: never looked for in the repository. */
const NOT_IN_REPOSITORY = new Set([
  'os',
  'sys',
  'subprocess',
  'shlex',
  'json',
  're',
  'typing',
  'collections',
  'pathlib',
  'logging',
  'asyncio',
  'functools',
  'itertools',
  'datetime',
  'flask',
  'django',
  'fastapi',
  'starlette',
  'werkzeug',
  'jinja2',
  'sqlalchemy',
  'requests',
  'httpx',
  'pydantic',
  'git',
  'paramiko',
]);

const joinModule = (base: string, name: string): string =>
  base.endsWith('.') || base === '' ? `${base}${name}` : `${base}.${name}`;

/** The names the file binds to functions or modules of other modules, from its top-level statements. */
export function pythonImportBindings(root: SgNode): PythonImportBinding[] {
  const found: PythonImportBinding[] = [];
  for (const statement of root.children()) {
    if (statement.kind() !== 'import_from_statement') continue;
    const module = statement.field('module_name')?.text() ?? '';
    if (!MODULE_NAME.test(module) || NOT_IN_REPOSITORY.has(module.split('.')[0] ?? '')) continue;
    for (const part of statement.children()) {
      if (part.id() === statement.field('module_name')?.id()) continue;
      let name: SgNode | null = null;
      let local: SgNode | null = null;
      if (part.kind() === 'dotted_name') {
        name = part;
        local = part.find({ rule: { kind: 'identifier' } });
      } else if (part.kind() === 'aliased_import') {
        name = part.field('name');
        local = part.field('alias');
      }
      if (!name || !local || name.text().includes('.')) continue;
      // `from . import utils`: the name may be a module of the package, or a function of its __init__.
      if (/^\.+$/.test(module))
        found.push({ specifier: joinModule(module, name.text()), imported: '*', local });
      found.push({ specifier: module, imported: name.text(), local });
    }
  }
  return found;
}

const FROM_IMPORT = /^from[ \t]+(\.+[\w.]*|[A-Za-z_][\w.]*)[ \t]+import[ \t]+\(?([\w, \t]+)/gm;

/**
 * The modules a file's top-level `from ... import` statements name, read from its text (the
 * engine asks before the file is parsed), relative ones first: `from . import utils` names both
 * the package (`.`) and its module `.utils`. The same specifiers as `pythonImportBindings` gives.
 */
export function pythonImportSpecifiers(content: string): string[] {
  const specifiers: string[] = [];
  for (const match of content.matchAll(FROM_IMPORT)) {
    const module = match[1] as string;
    if (NOT_IN_REPOSITORY.has(module.split('.')[0] ?? '')) continue;
    if (/^\.+$/.test(module)) {
      for (const name of (match[2] ?? '').split(',')) {
        const first = name.trim().split(/\s+/)[0];
        if (first && /^\w+$/.test(first)) specifiers.push(joinModule(module, first));
      }
    }
    specifiers.push(module);
  }
  return [...new Set([...specifiers.filter((s) => s.startsWith('.')), ...specifiers])];
}

/** The paths a module may be at, most likely first (`.utils` from `app/views.py`: `app/utils.py`). */
export function pythonCandidatePaths(importer: string, specifier: string): string[] {
  const dots = /^\.*/.exec(specifier)?.[0].length ?? 0;
  const parts = specifier.slice(dots).split('.').filter(Boolean);
  const asFiles = (dir: string): string[] => {
    if (parts.length === 0) return [posix.join(dir, '__init__.py')];
    const stem = posix.join(dir, ...parts);
    return [`${stem}.py`, posix.join(stem, '__init__.py')];
  };
  if (dots > 0) {
    // `.` is the importer's package, each further dot one package up; none above the repository.
    const packages = posix
      .dirname(importer)
      .split('/')
      .filter((d) => d !== '.' && d !== '');
    if (dots - 1 > packages.length) return [];
    return asFiles(packages.slice(0, packages.length - (dots - 1)).join('/'));
  }
  // Absolute: under each directory above the importer (nearest first), then `src/`.
  const out: string[] = [];
  for (let dir = posix.dirname(importer); ; dir = posix.dirname(dir)) {
    out.push(...asFiles(dir === '.' ? '' : dir));
    if (dir === '.' || dir === '/' || dir === '') break;
  }
  out.push(...asFiles('src'));
  return [...new Set(out.map((p) => posix.normalize(p)))];
}
