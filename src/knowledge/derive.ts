/**
 * Derives the repository knowledge record (`svc.json`: what every reviewer is told about a
 * repository) from the tree's paths and the texts of a few configuration files. Pure: no I/O, and
 * bad input is never an exception. Nothing is invented: a fact that cannot be read is absent and
 * a gap says why. Every fact names its evidence (`source`: a path, or `path#field`).
 *
 * The caller reads the texts of `knowledgeFilesWanted(paths)` at the commit and passes them in;
 * gaps:
 * - `knowledge_file_unreadable`: a wanted file whose text is null;
 * - `knowledge_file_not_read`: wanted files absent from `texts` (the caller did not read them);
 * - `knowledge_files_capped`: more than 200 files were wanted, the rest were not read;
 * - `knowledge_file_invalid`: a manifest or configuration file that does not parse;
 * - `no_manifest_found`, `runtime_version_unknown`, `ci_workflow_unreadable`,
 *   `repo_knowledge_file_invalid`.
 */
import type { FileRole } from '../core/file-roles';
import { languageForPath } from '../core/languages';
import {
  type KnowledgeLanguage,
  REPO_KNOWLEDGE_FILE,
  REPO_KNOWLEDGE_VERSION,
  type RepoKnowledge,
} from '../core/repo-knowledge';
import { ciProvider, readCi } from './ci';
import { deriveConventions } from './conventions';
import { applyDeclared, readDeclared } from './declared';
import { derivePackageManagers, MANIFESTS } from './managers';
import { RUNNER_FILES } from './runner-configs';
import { deriveRuntimes, VERSION_FILES } from './runtimes';
import { basename, depth, GIT_ATTRIBUTES, isOwnConfig, type KnowledgeGap, Sources } from './sources';
import { deriveTooling, isRequirementsFile } from './tooling';

export type { KnowledgeGap } from './sources';

const MAX_WANTED = 200;

/** Configuration files whose text is read, wherever they are in the repository's own directories. */
const READ_NAMES = new Set([
  ...MANIFESTS.filter((m) => m !== 'setup.py' && !m.startsWith('settings.gradle')),
  ...VERSION_FILES,
  'tox.ini',
  'biome.json',
  'biome.jsonc',
  '.golangci.yml',
  '.golangci.yaml',
  'ruff.toml',
  '.ruff.toml',
]);

/** Task runners' configuration, read at the root only: CI runs `make`, `just` or `pre-commit` from there. */
const ROOT_RUNNER_FILES = new Set(RUNNER_FILES);

/** Which files to read, most important first: the root's own, CI, then by depth. */
function wantedFiles(paths: readonly string[]): string[] {
  const tier = (p: string) =>
    p === REPO_KNOWLEDGE_FILE || p === GIT_ATTRIBUTES ? 0 : ciProvider(p) ? 1 : depth(p) === 0 ? 2 : 3;
  return [...new Set(paths)]
    .filter(
      (p) =>
        p === REPO_KNOWLEDGE_FILE ||
        p === GIT_ATTRIBUTES ||
        ciProvider(p) !== null ||
        ROOT_RUNNER_FILES.has(p) ||
        ((READ_NAMES.has(basename(p)) || isRequirementsFile(p)) && isOwnConfig(p)),
    )
    .sort((a, b) => tier(a) - tier(b) || depth(a) - depth(b) || a.localeCompare(b));
}

/** Paths (from `paths`) whose text deriveKnowledge needs: manifests, version files, tool configs, CI workflows, svc.json. Keep it small (config files only, never source files); cap at 200. */
export function knowledgeFilesWanted(paths: readonly string[]): string[] {
  return wantedFiles(paths).slice(0, MAX_WANTED);
}

function readGaps(all: string[], texts: ReadonlyMap<string, string | null>): KnowledgeGap[] {
  const wanted = all.slice(0, MAX_WANTED);
  const gaps: KnowledgeGap[] = wanted
    .filter((p) => texts.has(p) && texts.get(p) === null)
    .map((p) => ({
      code: 'knowledge_file_unreadable',
      message: `${p} could not be read; nothing was derived from it`,
    }));
  const missing = wanted.filter((p) => !texts.has(p));
  if (missing.length > 0) {
    const named = missing.slice(0, 10).join(', ');
    const more = missing.length > 10 ? ` and ${missing.length - 10} more` : '';
    gaps.push({
      code: 'knowledge_file_not_read',
      message: `${missing.length} wanted file(s) were not read, so nothing was derived from them: ${named}${more}`,
    });
  }
  if (all.length > MAX_WANTED) {
    gaps.push({
      code: 'knowledge_files_capped',
      message: `${all.length} configuration files were found; only the first ${MAX_WANTED} (the root's, CI, then the shallowest) were read`,
    });
  }
  return gaps;
}

function deriveLanguages(roles: ReadonlyMap<string, FileRole>): KnowledgeLanguage[] {
  const counts = new Map<string, number>();
  for (const [path, role] of roles) {
    // Fixtures are test data: a Python file a JavaScript project's tests read is not Python the
    // repository runs (and needs no Python version stated).
    if (role === 'vendored' || role === 'generated' || role === 'fixture') continue;
    const language = languageForPath(path);
    if (language) counts.set(language, (counts.get(language) ?? 0) + 1);
  }
  return [...counts]
    .map(([name, files]) => ({ name, files }))
    .sort((a, b) => b.files - a.files || a.name.localeCompare(b.name));
}

/** The knowledge record. Every fact names its evidence (`source`: a path, or `path#field`). */
export function deriveKnowledge(input: {
  commit: string;
  paths: readonly string[];
  texts: ReadonlyMap<string, string | null>;
}): { content: RepoKnowledge; gaps: KnowledgeGap[] } {
  const all = wantedFiles(input.paths);
  const gaps = readGaps(all, input.texts);
  const src = new Sources(input.paths, input.texts, all.slice(0, MAX_WANTED), gaps);
  const roles = new Map(input.paths.map((p) => [p, src.roleOf(p)] as const));
  const languages = deriveLanguages(roles);

  const runtimes = deriveRuntimes(src, new Map(languages.map((l) => [l.name, l.files])));
  const packageManagers = derivePackageManagers(src);
  if (src.ownFilesNamed(MANIFESTS).length === 0) {
    gaps.push({
      code: 'no_manifest_found',
      message: `No package manifest in the repository's own directories (looked for ${MANIFESTS.join(', ')})`,
    });
  }
  const ci = readCi(src);
  const derived: RepoKnowledge = {
    version: REPO_KNOWLEDGE_VERSION,
    commit: input.commit,
    languages,
    runtimes,
    package_managers: packageManagers,
    tooling: deriveTooling(src, ci),
    ci: ci.map((f) => f.workflow),
    conventions: deriveConventions(src, roles),
    declared: null,
  };
  const declared = src.has(REPO_KNOWLEDGE_FILE) ? readDeclared(src.text(REPO_KNOWLEDGE_FILE), gaps) : null;
  const content = declared ? { ...applyDeclared(derived, declared.parsed), declared: declared.raw } : derived;
  return { content, gaps };
}
