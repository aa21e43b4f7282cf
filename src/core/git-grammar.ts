/**
 * The strict grammars of the values callers hand svc that end up in a git command line, a
 * code-host URL or a path under SVC_REPOS_DIR: repository full names, refs and branch names,
 * commit ids, repository-relative file paths and skill file paths. A value outside its grammar is
 * refused before it reaches git or the disk, so path traversal and git option injection are
 * impossible by construction rather than by care at every call site (the git layer still puts
 * `--end-of-options` / `--` in front of such values, as a second wall).
 *
 * Each grammar is a function answering why a value is refused (null: accepted), so the HTTP
 * schemas (400 `validation_failed`) and the code hosts (`invalid_input`) give the same reason, and
 * a zod schema built on it for the operation declarations.
 */
import { z } from 'zod';

/** Longest owner and longest repository name (GitHub's repository limit; owners are shorter there). */
export const REPO_NAME_PART_MAX = 100;
/** Longest ref svc takes; git has no fixed limit, but no branch a person names comes near this. */
export const REF_MAX = 1024;
/** Longest repository-relative path (PATH_MAX on Linux). */
export const REPO_PATH_MAX = 4096;
/** Longest path of a file inside an imported skill. */
export const SKILL_FILE_PATH_MAX = 300;

/** A full commit id: SHA-1 (40) or SHA-256 (64) lowercase hex, as git prints them. */
export const FULL_COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/**
 * A commit id as callers may type it: full or abbreviated (at least 7, git's default), either
 * letter case. Hex only, so it can never start with `-` or leave a directory.
 */
export const COMMIT_ID = /^[0-9a-fA-F]{7,64}$/;

const REPO_NAME_CHARS = /^[A-Za-z0-9_.-]+$/;

/**
 * `owner/name`: letters, digits, `_`, `.` and `-`, 1-100 characters each; no `..` anywhere, neither
 * part starts with `-`, the owner does not start with `.`. The name may (`org/.github` is a real
 * GitHub convention) but is never `.` or `.git`, so neither part walks out of or into a git dir.
 */
export function repoFullNameProblem(fullName: unknown): string | null {
  if (typeof fullName !== 'string') return 'it is not a string';
  const parts = fullName.split('/');
  if (parts.length !== 2) return 'it is not in owner/repo form (exactly one "/")';
  const [owner = '', name = ''] = parts;
  for (const [what, part] of [
    ['owner', owner],
    ['repository name', name],
  ] as const) {
    if (part === '') return `the ${what} is empty`;
    if (part.length > REPO_NAME_PART_MAX)
      return `the ${what} is longer than ${REPO_NAME_PART_MAX} characters`;
    if (!REPO_NAME_CHARS.test(part))
      return `the ${what} has a character other than letters, digits, "_", "." and "-"`;
    if (part.startsWith('-')) return `the ${what} starts with "-"`;
    if (part.includes('..')) return `the ${what} contains ".."`;
  }
  if (owner.startsWith('.')) return 'the owner starts with "."';
  if (name === '.' || name.toLowerCase() === '.git') return `the repository name "${name}" is reserved`;
  return null;
}

/**
 * A ref name by `git check-ref-format --allow-onelevel` (`main`, `feature/x`, `refs/pull/1/head`,
 * `HEAD`, a commit id), and never starting with `-`. Revision expressions (`main~1`, `a..b`,
 * `a@{1}`, `x^{tree}`) are refused: callers name refs and commits, not git syntax.
 */
export function refNameProblem(ref: unknown): string | null {
  if (typeof ref !== 'string' || ref === '') return 'it is empty';
  if (ref.length > REF_MAX) return `it is longer than ${REF_MAX} characters`;
  if (ref.startsWith('-')) return 'it starts with "-"';
  if (ref === '@') return '"@" is reserved';
  if ([...ref].some((ch) => ch <= ' ' || ch === '\x7f') || /[~^:?*[\\]/.test(ref))
    return 'it contains a space, a control character or one of ~ ^ : ? * [ \\';
  if (ref.includes('..')) return 'it contains ".."';
  if (ref.includes('@{')) return 'it contains "@{"';
  if (ref.endsWith('.')) return 'it ends with "."';
  const parts = ref.split('/');
  if (parts.some((part) => part === ''))
    return 'it has an empty path component (a leading, trailing or double "/")';
  if (parts.some((part) => part.startsWith('.'))) return 'a path component starts with "."';
  if (parts.some((part) => part.endsWith('.lock'))) return 'a path component ends with ".lock"';
  return null;
}

/** A branch to create: a ref name (above) that `git check-ref-format --branch` also takes, so not `HEAD`. */
export function branchNameProblem(branch: unknown): string | null {
  if (branch === 'HEAD') return '"HEAD" is reserved';
  return refNameProblem(branch);
}

/**
 * A file path inside a repository: relative, `/`-separated, without NUL, and without an empty,
 * `.` or `..` segment whether `/` or `\` separates it (so no reading of it, on any system, leaves
 * the repository). A leading `-` is allowed (a file may be named so): git receives paths only
 * after `--` or inside `<commit>:<path>`, never where an option could be.
 */
export function repoPathProblem(path: unknown): string | null {
  if (typeof path !== 'string' || path === '') return 'it is empty';
  if (path.length > REPO_PATH_MAX) return `it is longer than ${REPO_PATH_MAX} characters`;
  if (path.includes('\0')) return 'it contains a NUL character';
  if (path.startsWith('/') || path.startsWith('\\')) return 'it is absolute';
  const parts = path.split(/[/\\]/);
  if (parts.includes('..')) return 'it has a ".." segment';
  if (parts.includes('.')) return 'it has a "." segment';
  if (parts.includes('')) return 'it has an empty segment (a trailing or double separator)';
  return null;
}

/**
 * A file of an imported skill: a repository path (above) that is also at most 300 characters,
 * free of control characters and backslashes, and does not start with `-`.
 */
export function skillFilePathProblem(path: unknown): string | null {
  const problem = repoPathProblem(path);
  if (problem) return problem;
  const p = path as string;
  if (p.length > SKILL_FILE_PATH_MAX) return `it is longer than ${SKILL_FILE_PATH_MAX} characters`;
  if ([...p].some((ch) => ch < ' ' || ch === '\x7f')) return 'it contains a control character';
  if (p.includes('\\')) return 'it contains a backslash (separate folders with "/")';
  if (p.startsWith('-')) return 'it starts with "-"';
  return null;
}

/** A zod string that `problem` accepts; a refusal names the grammar and why. */
function grammar(what: string, problem: (value: string) => string | null, max: number) {
  return z
    .string()
    .max(max)
    .superRefine((value, ctx) => {
      const why = problem(value);
      if (why) ctx.addIssue({ code: 'custom', message: `not ${what}: ${why}` });
    });
}

/** `owner/repo`, as repoFullNameProblem takes it. */
export const repoFullNameSchema = grammar(
  'a repository full name (owner/repo)',
  repoFullNameProblem,
  REPO_NAME_PART_MAX * 2 + 1,
).describe('Repository in owner/repo form: letters, digits, "_", "." and "-"; no "..", no leading "-".');

/** A commit id, full or abbreviated (7-64 hex characters). */
export const commitIdSchema = z
  .string()
  .regex(COMMIT_ID, 'a commit id (7-64 hex characters)')
  .describe('Commit id (hex).');

/** A ref or branch name, as refNameProblem takes it. */
export const refNameSchema = grammar('a ref name', refNameProblem, REF_MAX).describe(
  'A branch, ref or commit id (git check-ref-format rules; no leading "-").',
);

/** A branch name, as branchNameProblem takes it (a ref name that is not `HEAD`). */
export const branchNameSchema = grammar('a branch name', branchNameProblem, REF_MAX).describe(
  'A branch name (git check-ref-format rules; not "HEAD", no leading "-").',
);

/** A repository-relative file path, as repoPathProblem takes it. */
export const repoPathSchema = grammar(
  'a file path inside the repository',
  repoPathProblem,
  REPO_PATH_MAX,
).describe('A file path relative to the repository root ("/"-separated; no "." or ".." segments).');

/** A skill file path, as skillFilePathProblem takes it. */
export const skillFilePathSchema = grammar(
  'a skill file path',
  skillFilePathProblem,
  SKILL_FILE_PATH_MAX,
).describe(
  'A path relative to the skill ("/"-separated; no "." or ".." segments, backslashes or control characters).',
);
