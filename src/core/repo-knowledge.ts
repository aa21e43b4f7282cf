/**
 * The repository knowledge record (the spec's `svc.json`): what every reviewer is told about a
 * repository. Derived from the tree at one commit (src/knowledge/derive.ts), returned by the REST
 * API as-is, hence snake_case. Every fact names its evidence in `source`: a path, or `path#field`.
 */

/** Where a repository declares its own knowledge; its fields override the derived ones. */
export const REPO_KNOWLEDGE_FILE = 'svc.json';

export const REPO_KNOWLEDGE_VERSION = 1;

export interface KnowledgeLanguage {
  /** A language id of LANGUAGE_BY_EXTENSION (`typescript`, `python`, ...). */
  name: string;
  /** How many files of the tree have its extensions (vendored and generated files not counted). */
  files: number;
}

export interface KnowledgeRuntime {
  /** `node`, `python`, `go`, `java`, `rust`, `ruby`, `php`, or a name the repository declared. */
  name: string;
  /** As written (`>=20.12`, `3.11`, `lts/iron`): a range or a version, never normalised to one. */
  version: string;
  source: string;
  /** true when it comes from the repository's own svc.json rather than being derived. */
  declared: boolean;
}

export interface KnowledgePackageManager {
  /** `npm`, `yarn`, `pnpm`, `bun`, `pip`, `poetry`, `uv`, `pipenv`, `pdm`, `go`, `maven`, `gradle`, `cargo`, `bundler`, `composer`. */
  name: string;
  manifest: string | null;
  /** The committed lockfile; null when none is committed. */
  lockfile: string | null;
  source: string;
}

export interface KnowledgeTool {
  name: string;
  /** Its configuration file (or `pyproject.toml#tool.x`), or null when it runs on its defaults. */
  config: string | null;
  source: string;
  /**
   * Where CI runs it: CI files whose commands run the tool, and `package.json#scripts.<name>`
   * for scripts that run it and that CI runs (directly or through other scripts). Empty: nothing
   * committed enforces it.
   */
  enforced_in: string[];
  /**
   * How CI reaches it through task runners, one chain per way, when it does
   * (`.github/workflows/ci.yml: tox -e typing -> tox.ini [testenv:typing]: mypy`); absent when
   * CI runs it directly or not at all.
   */
  enforced_via?: string[];
}

export interface KnowledgeTooling {
  linters: KnowledgeTool[];
  formatters: KnowledgeTool[];
  type_checkers: KnowledgeTool[];
  test_runners: KnowledgeTool[];
}

export type KnowledgeToolKind = keyof KnowledgeTooling;

export type CiProvider = 'github_actions' | 'gitlab_ci' | 'circleci' | 'other';

export interface KnowledgeCiWorkflow {
  path: string;
  provider: CiProvider;
  /** Events that start it (GitHub `on`); empty when the file names none. */
  triggers: string[];
  /** Its shell commands, one per line, trimmed, at most 50. */
  runs: string[];
  /**
   * The actions its steps and jobs use, as written (`actions/checkout@v4`, or pinned to a commit
   * SHA); absent when it uses none. Quick actions follow how the repository pins them.
   */
  uses?: string[];
}

export interface KnowledgeConventions {
  /**
   * Where files of each role live, most files first: directory prefixes ending in `/` (`test/`), where
   * `*` stands for any one directory, or name globs under a directory; at most 20 each.
   */
  test_locations: string[];
  source_roots: string[];
  generated_paths: string[];
  vendored_paths: string[];
}

export interface RepoKnowledge {
  version: typeof REPO_KNOWLEDGE_VERSION;
  commit: string;
  languages: KnowledgeLanguage[];
  runtimes: KnowledgeRuntime[];
  package_managers: KnowledgePackageManager[];
  tooling: KnowledgeTooling;
  ci: KnowledgeCiWorkflow[];
  conventions: KnowledgeConventions;
  /** The repository's own svc.json, parsed; null when it has none or it is invalid. */
  declared: Record<string, unknown> | null;
}
