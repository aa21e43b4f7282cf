/**
 * Package managers: one entry per project root of an ecosystem, with its manifest and the
 * lockfile committed beside it (null: none is committed, itself a fact a reviewer needs).
 *
 * Rules, per ecosystem:
 * - JavaScript: package.json's `packageManager` field (`pnpm@9.1.0`) wins; else the lockfile
 *   beside it names the manager (package-lock.json/npm-shrinkwrap.json npm, yarn.lock yarn,
 *   pnpm-lock.yaml pnpm, bun.lock/bun.lockb bun); else npm, the client that ships with Node and
 *   what `install` means for a package.json that names no other (source: the package.json).
 * - Python: pyproject `[tool.poetry]` poetry, uv.lock or `[tool.uv]` uv, pdm.lock or `[tool.pdm]`
 *   pdm, else pip; a Pipfile pipenv; requirements.txt or setup.py alone pip.
 * - go.mod go (go.sum), pom.xml maven, build.gradle(.kts)/settings.gradle(.kts) gradle
 *   (gradle.lockfile), Cargo.toml cargo, Gemfile bundler, composer.json composer.
 * A nested manifest under a root of the same ecosystem (a workspace member, a maven module) is
 * part of that root unless it has its own lockfile or `packageManager` field.
 */
import type { KnowledgePackageManager } from '../core/repo-knowledge';
import { basename, dirname, field, joinPath, type Sources, stringField } from './sources';

const JS_LOCKFILES: [string, string][] = [
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
  ['yarn.lock', 'yarn'],
  ['pnpm-lock.yaml', 'pnpm'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
];

export const MANIFESTS = [
  'package.json',
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'Pipfile',
  'requirements.txt',
  'go.mod',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'Cargo.toml',
  'Gemfile',
  'composer.json',
];

interface Candidate extends KnowledgePackageManager {
  ecosystem: string;
  /** Own lockfile or explicit field: a root even when nested under another. */
  explicit: boolean;
}

export function derivePackageManagers(src: Sources): KnowledgePackageManager[] {
  const own = src.ownFilesNamed(MANIFESTS);
  const inDir = (dir: string, name: string) => (src.has(joinPath(dir, name)) ? joinPath(dir, name) : null);
  const candidates: Candidate[] = [];

  for (const manifest of own.filter((p) => basename(p) === 'package.json')) {
    const dir = dirname(manifest);
    const declared = stringField(src.json(manifest), 'packageManager');
    const declaredName = declared ? /^(@?[\w.-]+?)(?:@|$)/.exec(declared)?.[1] : undefined;
    const present = JS_LOCKFILES.map(([file, name]) => ({ path: inDir(dir, file), name })).filter(
      (l) => l.path,
    );
    if (declaredName) {
      const lockfile = present.find((l) => l.name === declaredName)?.path ?? null;
      candidates.push({
        ecosystem: 'js',
        name: declaredName,
        manifest,
        lockfile,
        source: `${manifest}#packageManager`,
        explicit: true,
      });
    } else if (present[0]) {
      const lock = present[0];
      candidates.push({
        ecosystem: 'js',
        name: lock.name,
        manifest,
        lockfile: lock.path,
        source: lock.path as string,
        explicit: true,
      });
    } else {
      candidates.push({
        ecosystem: 'js',
        name: 'npm',
        manifest,
        lockfile: null,
        source: manifest,
        explicit: false,
      });
    }
  }

  const pythonDirs = new Set(
    own
      .filter((p) => ['pyproject.toml', 'Pipfile', 'requirements.txt', 'setup.py'].includes(basename(p)))
      .map(dirname),
  );
  for (const dir of [...pythonDirs]) {
    const pyproject = inDir(dir, 'pyproject.toml');
    const doc = pyproject ? src.toml(pyproject) : null;
    const pipfile = inDir(dir, 'Pipfile');
    const add = (
      name: string,
      manifest: string,
      lockfile: string | null,
      source: string,
      explicit: boolean,
    ) => candidates.push({ ecosystem: 'python', name, manifest, lockfile, source, explicit });
    if (pyproject && field(doc, 'tool', 'poetry') !== undefined) {
      const lock = inDir(dir, 'poetry.lock');
      add('poetry', pyproject, lock, `${pyproject}#tool.poetry`, true);
    } else if (pyproject && (inDir(dir, 'uv.lock') || field(doc, 'tool', 'uv') !== undefined)) {
      const lock = inDir(dir, 'uv.lock');
      add('uv', pyproject, lock, lock ?? `${pyproject}#tool.uv`, true);
    } else if (pyproject && (inDir(dir, 'pdm.lock') || field(doc, 'tool', 'pdm') !== undefined)) {
      const lock = inDir(dir, 'pdm.lock');
      add('pdm', pyproject, lock, lock ?? `${pyproject}#tool.pdm`, true);
    } else if (pipfile) {
      const lock = inDir(dir, 'Pipfile.lock');
      add('pipenv', pipfile, lock, pipfile, true);
    } else {
      const manifest = pyproject ?? inDir(dir, 'requirements.txt') ?? (inDir(dir, 'setup.py') as string);
      add('pip', manifest, null, manifest, false);
    }
  }

  const simple: [string[], string, string | null][] = [
    [['go.mod'], 'go', 'go.sum'],
    [['pom.xml'], 'maven', null],
    [
      ['settings.gradle', 'settings.gradle.kts', 'build.gradle', 'build.gradle.kts'],
      'gradle',
      'gradle.lockfile',
    ],
    [['Cargo.toml'], 'cargo', 'Cargo.lock'],
    [['Gemfile'], 'bundler', 'Gemfile.lock'],
    [['composer.json'], 'composer', 'composer.lock'],
  ];
  for (const [names, name, lockName] of simple) {
    const dirs = new Set(own.filter((p) => names.includes(basename(p))).map(dirname));
    for (const dir of dirs) {
      const manifest = names.map((n) => inDir(dir, n)).find((p) => p !== null) as string;
      const lockfile = lockName ? inDir(dir, lockName) : null;
      // Every go.mod is a module of its own, whatever directory it is in.
      const explicit = name === 'go' || lockfile !== null;
      candidates.push({ ecosystem: name, name, manifest, lockfile, source: manifest, explicit });
    }
  }

  // Shallowest first, so a root is kept before the members under it are considered.
  candidates.sort(
    (a, b) => depthOf(a.manifest) - depthOf(b.manifest) || (a.manifest ?? '').localeCompare(b.manifest ?? ''),
  );
  const kept: Candidate[] = [];
  for (const c of candidates) {
    const dir = dirname(c.manifest ?? '');
    const underRoot = kept.some(
      (k) => k.ecosystem === c.ecosystem && isUnder(dir, dirname(k.manifest ?? '')),
    );
    if (!underRoot || c.explicit) kept.push(c);
  }
  return kept
    .slice(0, 50)
    .map(({ name, manifest, lockfile, source }) => ({ name, manifest, lockfile, source }));
}

const depthOf = (path: string | null) => (path ? path.split('/').length : 0);

/** Whether directory `dir` is `root` or inside it ('' is the repository root). */
const isUnder = (dir: string, root: string) => root === '' || dir === root || dir.startsWith(`${root}/`);
