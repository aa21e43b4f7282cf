/**
 * How a tool names its id arguments. REST keeps the spec's names (`/findings/{id}`,
 * `/skill-revisions/{revision_id}`, a new reviewer's body `id`), but a tool's caller sees one flat
 * list of arguments per tool, where a bare `id` says nothing of what it identifies and the same
 * record was `review_id` in one tool and `id` in the next. The rule (decision proposal, issue
 * 25.4): every id argument of a tool is `<resource>_id`, the resource being the singular of the
 * collection the path names for it (`findings` → `finding_id`, `skill-revisions` →
 * `skill_revision_id`). The old name is still accepted as a deprecated alias for one version.
 */
import type { Operation } from './registry';

/** `pull-requests` → `pull_request`, `repo-knowledge` → `repo_knowledge`. */
function singular(collection: string): string {
  return collection.replace(/s$/, '').replace(/-/g, '_');
}

const isIdName = (name: string) => name === 'id' || name.endsWith('_id');

/**
 * The request fields (path, query or body) whose tool argument has another name, mapped to that
 * name. A path placeholder is named after the collection segment in front of it; a body or query
 * field `id` after the collection the operation is on (`POST /reviewers` → `reviewer_id`).
 */
export function renamedArguments(op: Operation): ReadonlyMap<string, string> {
  const renames = new Map<string, string>();
  const segments = op.path.replace(/^\/api\/v1\//, '').split('/');
  for (const [i, segment] of segments.entries()) {
    const placeholder = /^\{(\w+)\}$/.exec(segment)?.[1];
    const collection = segments[i - 1];
    if (!placeholder || !collection || !isIdName(placeholder)) continue;
    const name = `${singular(collection)}_id`;
    if (name !== placeholder) renames.set(placeholder, name);
  }
  const fields = [...Object.keys(op.query?.shape ?? {}), ...Object.keys(op.body?.shape ?? {})];
  const [collection] = segments;
  if (collection && fields.includes('id') && !renames.has('id'))
    renames.set('id', `${singular(collection)}_id`);
  return renames;
}

/**
 * The tool's arguments under their request field names (`finding_id` → the path's `id`). The old
 * name, a deprecated alias, is taken when the new one is absent; the two with different values
 * are a conflict the caller must resolve.
 */
export function requestFields(
  op: Operation,
  args: Record<string, unknown>,
): { fields: Record<string, unknown> } | { conflict: string } {
  const fields: Record<string, unknown> = { ...args };
  for (const [field, name] of renamedArguments(op)) {
    if (args[name] === undefined) continue;
    if (args[field] !== undefined && args[field] !== args[name])
      return { conflict: `pass \`${name}\` only (\`${field}\` is its deprecated alias)` };
    fields[field] = args[name];
    delete fields[name];
  }
  return { fields };
}
