/**
 * The repository's own svc.json at its root: what it declares about itself, which overrides what
 * is derived. The merge rule, field by field:
 * - `runtimes`: each declared item (`{ name, version, source? }`) is kept, marked `declared: true`,
 *   with `source` defaulting to `svc.json#runtimes[i]`; every derived runtime of a name the file
 *   declares is dropped (declaring `node` replaces engines.node and .nvmrc alike). Declared
 *   runtimes come first, derived runtimes of other names follow.
 * - `package_managers` and each list of `tooling` (`linters`, `formatters`, `type_checkers`,
 *   `test_runners`): the same, by `name` within the list; a declared item's omitted fields are
 *   null (`manifest`, `lockfile`, `config`) or empty (`enforced_in`), its source `svc.json#...`.
 * - `conventions.test_locations`, `.source_roots`, `.generated_paths`, `.vendored_paths`: a
 *   declared list replaces the derived list whole (at most 20 kept).
 * - Nothing else is overridden: `version`, `commit`, `languages` and `ci` describe the tree at the
 *   commit and are always derived; the whole file stays visible as `declared`.
 * A file that is not JSON, not an object, or has one of those fields in another shape is invalid:
 * nothing of it is applied, `declared` is null and the gap `repo_knowledge_file_invalid` says why.
 */
import { z } from 'zod';
import {
  type KnowledgeConventions,
  type KnowledgeTooling,
  REPO_KNOWLEDGE_FILE,
  type RepoKnowledge,
} from '../core/repo-knowledge';
import type { KnowledgeGap } from './sources';

const name = z.string().trim().min(1);
const runtime = z.object({ name, version: z.string().trim().min(1), source: z.string().min(1).optional() });
const manager = z.object({
  name,
  manifest: z.string().nullable().optional(),
  lockfile: z.string().nullable().optional(),
  source: z.string().min(1).optional(),
});
const tool = z.object({
  name,
  config: z.string().nullable().optional(),
  source: z.string().min(1).optional(),
  enforced_in: z.array(z.string()).optional(),
});
const locations = z.array(z.string().min(1)).optional();
const declaredFile = z.looseObject({
  runtimes: z.array(runtime).optional(),
  package_managers: z.array(manager).optional(),
  tooling: z
    .looseObject({
      linters: z.array(tool).optional(),
      formatters: z.array(tool).optional(),
      type_checkers: z.array(tool).optional(),
      test_runners: z.array(tool).optional(),
    })
    .optional(),
  conventions: z
    .looseObject({
      test_locations: locations,
      source_roots: locations,
      generated_paths: locations,
      vendored_paths: locations,
    })
    .optional(),
});
type DeclaredFile = z.infer<typeof declaredFile>;

/** The parsed svc.json, or null with a gap when it is not valid (null text: absent or unreadable). */
export function readDeclared(
  text: string | null,
  gaps: KnowledgeGap[],
): { raw: Record<string, unknown>; parsed: DeclaredFile } | null {
  if (text === null) return null;
  const invalid = (why: string) => {
    gaps.push({
      code: 'repo_knowledge_file_invalid',
      message: `${REPO_KNOWLEDGE_FILE} was not applied (${why}); the knowledge is derived from the tree alone`,
    });
    return null;
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return invalid(`not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return invalid('not a JSON object');
  const parsed = declaredFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return invalid(`${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}`);
  }
  return { raw: raw as Record<string, unknown>, parsed: parsed.data };
}

const TOOL_KINDS = ['linters', 'formatters', 'type_checkers', 'test_runners'] as const;
const CONVENTION_LISTS = ['test_locations', 'source_roots', 'generated_paths', 'vendored_paths'] as const;

/** Replaces derived items by declared items of the same name (see the module comment). */
function byName<T extends { name: string }>(derived: T[], declared: T[] | undefined): T[] {
  if (!declared) return derived;
  const names = new Set(declared.map((d) => d.name));
  return [...declared, ...derived.filter((d) => !names.has(d.name))];
}

export function applyDeclared(knowledge: RepoKnowledge, declared: DeclaredFile): RepoKnowledge {
  const at = (field: string, i: number) => `${REPO_KNOWLEDGE_FILE}#${field}[${i}]`;
  const tooling = { ...knowledge.tooling } as KnowledgeTooling;
  for (const kind of TOOL_KINDS) {
    const items = declared.tooling?.[kind]?.map((t, i) => ({
      name: t.name,
      config: t.config ?? null,
      source: t.source ?? at(`tooling.${kind}`, i),
      enforced_in: t.enforced_in ?? [],
    }));
    tooling[kind] = byName(knowledge.tooling[kind], items);
  }
  const conventions = { ...knowledge.conventions } as KnowledgeConventions;
  for (const list of CONVENTION_LISTS) {
    const value = declared.conventions?.[list];
    if (value) conventions[list] = value.slice(0, 20);
  }
  return {
    ...knowledge,
    runtimes: byName(
      knowledge.runtimes,
      declared.runtimes?.map((r, i) => ({
        name: r.name,
        version: r.version,
        source: r.source ?? at('runtimes', i),
        declared: true,
      })),
    ),
    package_managers: byName(
      knowledge.package_managers,
      declared.package_managers?.map((m, i) => ({
        name: m.name,
        manifest: m.manifest ?? null,
        lockfile: m.lockfile ?? null,
        source: m.source ?? at('package_managers', i),
      })),
    ),
    tooling,
    conventions,
  };
}
