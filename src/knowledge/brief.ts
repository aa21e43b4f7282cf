/**
 * What reviewers are told from a project's repository knowledge: a short text for model
 * reviewers' prompts, and, for rule reviewers, the paths the repository declares as tests,
 * generated or vendored code (they change which rules run there and how severe a finding is).
 */
import type { GitAttributeRule } from '../core/file-roles';
import type { KnowledgeConventions, KnowledgeTool, RepoKnowledge } from '../core/repo-knowledge';

const tools = (label: string, list: KnowledgeTool[]) =>
  list.length === 0
    ? []
    : [
        `- ${label}: ${list
          .map(
            (t) =>
              `${t.name}${t.config ? ` (${t.config})` : ''}${t.enforced_in.length > 0 ? ', enforced in CI' : ''}`,
          )
          .join('; ')}`,
      ];

/** The knowledge as a few lines of markdown; empty when there is nothing to say. */
export function knowledgeBrief(knowledge: RepoKnowledge): string {
  const { conventions: c, tooling } = knowledge;
  const lines = [
    ...(knowledge.runtimes.length > 0
      ? [
          `- Runtimes: ${knowledge.runtimes.map((r) => `${r.name} ${r.version}${r.declared ? ' (declared)' : ''}`).join('; ')}`,
        ]
      : []),
    ...(knowledge.package_managers.length > 0
      ? [
          `- Package managers: ${knowledge.package_managers
            .map((m) => `${m.name}${m.lockfile ? ` (lockfile ${m.lockfile})` : ' (no lockfile committed)'}`)
            .join('; ')}`,
        ]
      : []),
    ...tools('Linters', tooling.linters),
    ...tools('Formatters', tooling.formatters),
    ...tools('Type checkers', tooling.type_checkers),
    ...tools('Test runners', tooling.test_runners),
    ...(c.test_locations.length > 0 ? [`- Tests live in: ${c.test_locations.join(', ')}`] : []),
    ...(c.source_roots.length > 0 ? [`- Sources live in: ${c.source_roots.join(', ')}`] : []),
    ...(c.generated_paths.length > 0 ? [`- Generated code: ${c.generated_paths.join(', ')}`] : []),
    ...(c.vendored_paths.length > 0 ? [`- Vendored code: ${c.vendored_paths.join(', ')}`] : []),
  ];
  return lines.join('\n');
}

/** A convention entry as a glob: a directory (`qa/`) covers everything below it. */
const asGlob = (entry: string) => (entry.endsWith('/') ? `${entry}**` : entry);

export interface DeclaredRoles {
  /** Extra test globs, as `.svc.yml`'s `paths.tests`. */
  tests: string[];
  /** Generated and vendored paths, as `.gitattributes` would mark them. */
  attributes: GitAttributeRule[];
}

/**
 * The roles the repository's own `svc.json` declares. Derived conventions are left out: they
 * were read from the same conventions the file roles already apply.
 */
export function declaredRoles(knowledge: RepoKnowledge): DeclaredRoles {
  const declared = knowledge.declared?.conventions;
  const says = (key: keyof KnowledgeConventions) =>
    typeof declared === 'object' && declared !== null && key in declared ? knowledge.conventions[key] : [];
  return {
    tests: says('test_locations').map(asGlob),
    attributes: [
      ...says('generated_paths').map((p) => ({ glob: asGlob(p), role: 'generated' as const, set: true })),
      ...says('vendored_paths').map((p) => ({ glob: asGlob(p), role: 'vendored' as const, set: true })),
    ],
  };
}
