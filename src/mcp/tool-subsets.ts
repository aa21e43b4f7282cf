/**
 * Which tools one MCP connection lists. All 88 operations make a schema of ~98 KB, which an agent
 * pays for in every prompt although a reviewer agent needs a dozen. A client asks for a subset
 * by area (`?tools=reviews,findings`, `svc mcp --tools reviews,findings`), by a named profile
 * (`?profile=reviewer-agent`, `svc mcp --profile reviewer-agent`), or both (their union).
 *
 * An area is a collection of the API as its path names it (`/api/v1/pull-requests/…` →
 * `pull_requests`; `skills` holds skill imports and revisions); a tool's own name selects that
 * one tool. Unknown names are an error that lists the known ones, never an empty tool set.
 * `GET /api/v1/tools` takes the same query, for clients that load the catalog themselves.
 */
import { ApiError } from '../core/errors';
import type { Operation } from '../operations/registry';

/** Collections whose tools are named after another word than their path's (`skills_import`). */
const AREA_OF_COLLECTION: Readonly<Record<string, string>> = {
  'skill-imports': 'skills',
  'skill-revisions': 'skills',
};

export function areaOf(op: Operation): string {
  const collection = op.path.replace(/^\/api\/v1\//, '').split('/')[0] ?? '';
  return AREA_OF_COLLECTION[collection] ?? collection.replace(/-/g, '_');
}

/**
 * Named profiles, as areas and tool names. `reviewer-agent`: what a coding agent fixing review
 * findings needs (the autofix contract): find the pull request and read its check and fix prompt,
 * list, read and answer findings (`wontfix:` as an event) with the code they point at, request a
 * review or a re-run, and wait on its task. `admin`: setting svc up and governing it (projects and
 * their settings, keys, installations, reviewers and skills, plans and learnings, and the tasks
 * setup starts). `all`: every tool.
 */
export const PROFILES: Readonly<Record<string, readonly string[]>> = {
  'reviewer-agent': [
    'projects_list',
    'pull_requests_list',
    'pull_requests_get',
    'pull_requests_check',
    'findings',
    'review_results_diff',
    'reviews_create',
    'reviews_get',
    'reviews_run',
    'tasks',
  ],
  admin: [
    'projects',
    'settings',
    'keys',
    'installations',
    'reviewers',
    'skills',
    'plans',
    'learnings',
    'tasks',
  ],
  all: [],
};

export interface ToolSelection {
  profile?: string | null;
  /** Areas and tool names. */
  tools?: readonly string[];
}

export class UnknownToolSelection extends Error {}

/** `a,b` and repeated values alike, trimmed, empty parts dropped. */
export function selectionList(value: unknown): string[] {
  const parts = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return parts.flatMap((part) =>
    String(part)
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
}

/**
 * The operations a selection names, in declaration order; every operation when it names none.
 * Throws UnknownToolSelection naming what is not a profile, an area or a tool.
 */
export function selectTools(operations: readonly Operation[], selection: ToolSelection): Operation[] {
  const areas = new Set(operations.map(areaOf));
  const tools = new Set(operations.map((op) => op.tool));
  const wanted = new Set<string>(selection.tools ?? []);
  const profile = selection.profile?.trim();
  if (profile) {
    const items = PROFILES[profile];
    if (!items)
      throw new UnknownToolSelection(
        `unknown tool profile ${JSON.stringify(profile)}; profiles: ${Object.keys(PROFILES).join(', ')}`,
      );
    if (items.length === 0) return [...operations];
    for (const item of items) wanted.add(item);
  }
  if (wanted.size === 0) return [...operations];
  const unknown = [...wanted].filter((name) => !areas.has(name) && !tools.has(name));
  if (unknown.length > 0)
    throw new UnknownToolSelection(
      `unknown tool area or tool name(s): ${unknown.join(', ')}; areas: ${[...areas].sort().join(', ')} (or a tool's own name)`,
    );
  return operations.filter((op) => wanted.has(areaOf(op)) || wanted.has(op.tool));
}

/**
 * The tools a request's `?profile=` and `?tools=` ask for (the MCP endpoint, the tool catalog);
 * 400 `validation_failed` naming the known names for an unknown one.
 */
export function toolsAskedBy(operations: readonly Operation[], query: unknown): Operation[] {
  const { profile, tools } = (query ?? {}) as Record<string, unknown>;
  try {
    return selectTools(operations, {
      profile: selectionList(profile).join(',') || null,
      tools: selectionList(tools),
    });
  } catch (error) {
    if (error instanceof UnknownToolSelection) throw new ApiError('validation_failed', error.message);
    throw error;
  }
}
