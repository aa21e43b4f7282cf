/**
 * The grammars of values that reach git, code-host URLs and SVC_REPOS_DIR: real-world names pass,
 * hostile ones do not, and the ref grammar never takes a name real git refuses.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  branchNameProblem,
  COMMIT_ID,
  commitIdSchema,
  FULL_COMMIT_ID,
  refNameProblem,
  refNameSchema,
  repoFullNameProblem,
  repoFullNameSchema,
  repoPathProblem,
  repoPathSchema,
  skillFilePathProblem,
  skillFilePathSchema,
} from '../../src/core/git-grammar';

/** Whether real git takes `name` as a ref (`git check-ref-format --allow-onelevel`). */
function gitTakesRef(name: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', '--allow-onelevel', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('repository full names', () => {
  it.each([
    'microsoft/TypeScript',
    'vercel/next.js',
    'a/b.c',
    'facebook/react',
    'rust-lang/rust',
    'python/cpython',
    'github/.github',
    'DefinitelyTyped/DefinitelyTyped',
    'tc39/proposal-temporal',
    'user_name/repo_name',
    'acme/api',
    'Acme/Widgets',
    `${'o'.repeat(100)}/${'r'.repeat(100)}`,
  ])('takes %s', (name) => {
    expect(repoFullNameProblem(name)).toBeNull();
    expect(repoFullNameSchema.safeParse(name).success).toBe(true);
  });

  it.each([
    ['-x/y', /starts with "-"/],
    ['x/-y', /starts with "-"/],
    ['../etc', /owner contains "\.\."/],
    ['a/..', /contains "\.\."/],
    ['a/.', /reserved/],
    ['a/.git', /reserved/],
    ['a/.GIT', /reserved/],
    ['.hidden/repo', /owner starts with "\."/],
    ['a/b/c', /owner\/repo form/],
    ['a', /owner\/repo form/],
    ['/a', /owner is empty/],
    ['a/', /repository name is empty/],
    ['a/b\0', /character other than/],
    ['a/b c', /character other than/],
    ['a\\b/c', /character other than/],
    ['a/b%2F..', /character other than/],
    ['a/..%2Fb', /character other than/],
    ['ä/b', /character other than/],
    [`${'o'.repeat(101)}/r`, /longer than 100/],
    [`o/${'r'.repeat(101)}`, /longer than 100/],
  ])('refuses %j', (name, why) => {
    expect(repoFullNameProblem(name)).toMatch(why);
    const parsed = repoFullNameSchema.safeParse(name);
    expect(parsed.success).toBe(false);
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 1, ['a/b'], { owner: 'a' }])
      expect(repoFullNameProblem(value)).not.toBeNull();
  });
});

describe('refs and branch names', () => {
  const realRefs = [
    'main',
    'master',
    'HEAD',
    'feature/x',
    'release/v1.2.3',
    'dependabot/npm_and_yarn/lodash-4.17.21',
    'refs/heads/main',
    'refs/pull/12/head',
    'refs/remotes/origin/HEAD',
    'origin/main',
    'renovate/major-typescript-eslint-monorepo',
    'user@example',
    'fix-#123',
    'ünïcödé',
    'a'.repeat(1024),
    'a1b2c3d',
    '2071d7310124df634294639474b249557162393b',
  ];

  it.each(realRefs)('takes %s, as git does', (ref) => {
    expect(refNameProblem(ref)).toBeNull();
    expect(refNameSchema.safeParse(ref).success).toBe(true);
    expect(gitTakesRef(ref)).toBe(true);
  });

  const hostileRefs: [string, RegExp][] = [
    ['--output=/tmp/x', /starts with "-"/],
    ['-h', /starts with "-"/],
    ['--upload-pack=touch /tmp/pwned', /starts with "-"/],
    ['-', /starts with "-"/],
    ['a..b', /"\.\."/],
    ['..', /"\.\."/],
    ['a@{1}', /"@\{"/],
    ['@', /reserved/],
    ['x.lock', /\.lock/],
    ['refs/heads/x.lock', /\.lock/],
    ['a\0b', /control character/],
    ['a\nb', /control character/],
    ['a b', /space/],
    ['main~1', /~/],
    ['main^', /\^/],
    ['x^{tree}', /\^/],
    ['HEAD:README.md', /:/],
    ['a*', /\*/],
    ['a?', /\?/],
    ['a[b', /\[/],
    ['a\\b', /\\/],
    ['a.', /ends with "\."/],
    ['.hidden', /starts with "\."/],
    ['a/.b', /starts with "\."/],
    ['/a', /empty path component/],
    ['a/', /empty path component/],
    ['a//b', /empty path component/],
    ['', /empty/],
    ['a'.repeat(1025), /longer than 1024/],
  ];

  it.each(hostileRefs)('refuses %j', (ref, why) => {
    expect(refNameProblem(ref)).toMatch(why);
    expect(refNameSchema.safeParse(ref).success).toBe(false);
  });

  it('refuses only what git refuses too, besides a leading "-" and an absurd length', () => {
    // A leading "-" is svc's own rule (git would read the name as an option), a NUL cannot be an
    // argument at all; every other refusal is git's.
    const gitsOwn = hostileRefs.filter(
      ([ref]) => !ref.startsWith('-') && !ref.includes('\0') && ref.length <= 1024,
    );
    expect(gitsOwn.length).toBeGreaterThan(20);
    for (const [ref] of gitsOwn) expect(gitTakesRef(ref), ref).toBe(false);
  });

  it('a branch name is a ref name that is not HEAD', () => {
    expect(branchNameProblem('svc/fix-1')).toBeNull();
    expect(branchNameProblem('HEAD')).toMatch(/reserved/);
    expect(branchNameProblem('-x')).toMatch(/starts with "-"/);
  });
});

describe('commit ids', () => {
  it('full ids are 40 or 64 lowercase hex characters', () => {
    expect(FULL_COMMIT_ID.test('a'.repeat(40))).toBe(true);
    expect(FULL_COMMIT_ID.test('0'.repeat(64))).toBe(true);
    for (const bad of ['a'.repeat(39), 'a'.repeat(41), 'a'.repeat(63), 'A'.repeat(40), `-${'a'.repeat(39)}`])
      expect(FULL_COMMIT_ID.test(bad), bad).toBe(false);
  });

  it('callers may abbreviate to 7 and use either case; nothing but hex', () => {
    for (const ok of ['abcdef0', 'ABCDEF0123', 'a'.repeat(64)]) {
      expect(COMMIT_ID.test(ok), ok).toBe(true);
      expect(commitIdSchema.safeParse(ok).success).toBe(true);
    }
    for (const bad of ['abcdef', 'a'.repeat(65), '--output=x', 'main', 'abcdefg', 'abcdef0\n', 'HEAD'])
      expect(commitIdSchema.safeParse(bad).success, bad).toBe(false);
  });
});

describe('repository-relative paths', () => {
  it.each([
    'README.md',
    'src/app.ts',
    'src/new file.ts',
    '.github/workflows/ci.yml',
    '-leading-dash.txt',
    'a..b/c...d',
    'weird\nname.txt',
    'dir/.hidden',
  ])('takes %j', (path) => {
    expect(repoPathProblem(path)).toBeNull();
    expect(repoPathSchema.safeParse(path).success).toBe(true);
  });

  it.each([
    ['', /empty/],
    ['/etc/passwd', /absolute/],
    ['\\windows\\system32', /absolute/],
    ['../etc/passwd', /"\.\." segment/],
    ['a/../../b', /"\.\." segment/],
    ['a/..', /"\.\." segment/],
    ['..\\..\\etc', /"\.\." segment/],
    ['a\\..\\b', /"\.\." segment/],
    ['./a', /"\." segment/],
    ['a//b', /empty/],
    ['a/', /empty/],
    ['a\0b', /NUL/],
    ['x'.repeat(4097), /longer/],
  ])('refuses %j', (path, why) => {
    expect(repoPathProblem(path)).toMatch(why);
    expect(repoPathSchema.safeParse(path).success).toBe(false);
  });
});

describe('skill file paths', () => {
  it.each(['SKILL.md', 'rules/house.yml', 'rules/javascript/no-eval.yml', 'docs/README.md'])(
    'takes %j',
    (path) => {
      expect(skillFilePathProblem(path)).toBeNull();
      expect(skillFilePathSchema.safeParse(path).success).toBe(true);
    },
  );

  it.each([
    ['../escape.md', /"\.\." segment/],
    ['/abs.md', /absolute/],
    ['rules\\x.yml', /backslash/],
    ['rules/\tx.yml', /control character/],
    ['-rf', /starts with "-"/],
    ['a/./b', /"\." segment/],
    ['x'.repeat(301), /longer than 300/],
  ])('refuses %j', (path, why) => {
    expect(skillFilePathProblem(path)).toMatch(why);
    expect(skillFilePathSchema.safeParse(path).success).toBe(false);
  });
});
