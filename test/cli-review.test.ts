/**
 * `svc review` and `svc findings` as a user or a CI job runs them: real processes on real git
 * repositories in temporary folders, no database. What range is reviewed and what is said about
 * it, the branch's ledger across re-runs, dismissals, uncommitted changes, outputs and exit codes.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../src/skills/catalog';
import { commitFiles, gitIn, makeRepo, makeReposDir, writeFiles } from './helpers/git';
import { answers, type OpenAIDouble, startOpenAIDouble } from './helpers/openai-double';

const run = promisify(execFile);
const SVC = join(process.cwd(), 'bin', 'svc.mjs');
const VERSION = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).version as string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `svc ...args` in `cwd`, with no model provider configured unless `env` sets one. */
async function svc(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<Result> {
  const base = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'SVC_LLM_COMPAT_URL',
    'NO_COLOR',
  ])
    delete base[name];
  return run(process.execPath, [...nodeArgs, SVC, ...args], { cwd, env: { ...base, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

const review = (cwd: string, args: string[] = [], env: Record<string, string> = {}) =>
  svc(cwd, ['review', ...args], env);
const json = async (cwd: string, args: string[] = [], env: Record<string, string> = {}) => {
  const result = await review(cwd, ['--format', 'json', ...args], env);
  return { ...result, review: JSON.parse(result.stdout) };
};
const ledgerOf = (repo: string, branch: string) =>
  JSON.parse(
    readFileSync(join(repo, '.git', 'svc', 'ledger', `${encodeURIComponent(branch)}.json`), 'utf8'),
  ) as {
    findings: { id: string; rule: string; status: string; line: number; dismissedReason: string | null }[];
  };

const HANDLER = [
  'export async function handle(req: { body: { code: string } }) {',
  '  debugger;',
  '  return eval(req.body.code);',
  '}',
  '',
].join('\n');

/** A repository on `main` with a `work` branch one commit ahead carrying a P0 and a P2. */
function repoWithBranch(): string {
  const repo = makeRepo(makeReposDir(), 'me/app', { 'src/index.ts': 'export const x = 1;\n' });
  gitIn(repo, ['checkout', '-q', '-b', 'work']);
  commitFiles(repo, { 'src/handler.ts': HANDLER });
  return repo;
}

// Each `svc` process takes about a second; the limit only stops a hung one.
describe('svc review', { timeout: 120_000 }, () => {
  it('reviews the branch against its merge base with the default branch, says so, groups findings by file, exits 1 on a P0', async () => {
    const repo = repoWithBranch();
    // main moves on after the branch left it: its changes are not the branch's.
    gitIn(repo, ['checkout', '-q', 'main']);
    commitFiles(repo, { 'src/main-only.ts': 'export const run = (code: string) => eval(code);\n' });
    gitIn(repo, ['checkout', '-q', 'work']);
    const result = await review(repo);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^svc: reviewing 1 commit main\.\.\.work$/m);
    expect(result.stdout).toMatch(/^src\/handler\.ts$/m);
    expect(result.stdout).not.toMatch(/main-only/);
    expect(result.stdout).toMatch(/P0 3: .*eval/);
    expect(result.stdout).toMatch(/P2 2: .*debugger/);
    expect(result.stdout).toMatch(/2 finding\(s\): 1 P0, 0 P1, 1 P2 open/);
    expect(existsSync(join(repo, '.git', 'svc', 'ledger', 'work.json'))).toBe(true);
    // No database was created for a CLI run.
    expect(existsSync(join(repo, '.git', 'svc', 'PG_VERSION'))).toBe(false);
  });

  it('keeps one ledger per branch: repeated runs and a commit that shifts lines never hold a defect twice; a removed defect is fixed', async () => {
    const repo = repoWithBranch();
    // The first run opens the findings, the next ones find them again (each svc process ~1 s).
    for (let i = 0; i < 3; i++) expect((await review(repo)).code).toBe(1);
    commitFiles(repo, { 'src/handler.ts': `// a comment\n// another\n${HANDLER}` });
    const shifted = await json(repo);
    expect(shifted.review.counts).toMatchObject({ opened: 0, findings: 2 });
    const ledger = ledgerOf(repo, 'work');
    expect(ledger.findings).toHaveLength(2);
    expect(ledger.findings.find((f) => f.rule === 'security/code-injection')?.line).toBe(5);

    commitFiles(repo, { 'src/handler.ts': 'export const handle = () => 1;\n' });
    const fixed = await json(repo);
    expect(fixed.code).toBe(0);
    expect(fixed.review.counts).toMatchObject({ fixed: 2, findings: 0 });
    expect(ledgerOf(repo, 'work').findings.map((f) => f.status)).toEqual(['fixed', 'fixed']);
  });

  it('honours svc findings dismiss and reopen: a dismissed P0 stays dismissed and does not fail the review', async () => {
    const repo = repoWithBranch();
    const first = await json(repo);
    const p0 = first.review.findings.find((f: { severity: string }) => f.severity === 'P0');
    const listed = await svc(repo, ['findings', 'list']);
    expect(listed.stdout).toContain(p0.id);

    const dismissed = await svc(repo, [
      'findings',
      'dismiss',
      p0.id.slice(0, 8),
      '--reason',
      'only evaluates our own build scripts',
    ]);
    expect(dismissed.code).toBe(0);
    const again = await json(repo);
    expect(again.code).toBe(0);
    expect(again.review.findings.find((f: { id: string }) => f.id === p0.id)).toMatchObject({
      status: 'dismissed',
      dismissed_reason: 'only evaluates our own build scripts',
    });
    expect((await review(repo)).stdout).toMatch(/1 P2 open, 1 dismissed/);
    const onlyDismissed = await svc(repo, ['findings', 'list', '--status', 'dismissed', '--format', 'json']);
    expect(JSON.parse(onlyDismissed.stdout).findings.map((f: { id: string }) => f.id)).toEqual([p0.id]);

    expect((await svc(repo, ['findings', 'reopen', p0.id])).code).toBe(0);
    expect((await review(repo)).code).toBe(1);
    expect(ledgerOf(repo, 'work').findings).toHaveLength(2);
  });

  it('records an inline svc-ignore as dismissed with its reason', async () => {
    const repo = repoWithBranch();
    commitFiles(repo, {
      'src/handler.ts': HANDLER.replace(
        '  return eval(req.body.code);',
        '  // svc-ignore code-injection: the body is signed by our build server\n  return eval(req.body.code);',
      ),
    });
    const result = await json(repo);
    expect(result.code).toBe(0);
    expect(
      result.review.findings.find((f: { rule: string }) => f.rule === 'security/code-injection'),
    ).toMatchObject({
      status: 'dismissed',
      dismissed_reason: 'the body is signed by our build server',
      dismissed_by: 'inline',
    });
  });

  it('on the default branch says there is nothing to compare and reviews nothing', async () => {
    const repo = repoWithBranch();
    gitIn(repo, ['checkout', '-q', 'main']);
    commitFiles(repo, { 'src/late.ts': 'export const z = eval(process.argv[2]);\n' });
    const result = await review(repo);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/on the default branch main: nothing to compare/);
    expect(result.stdout).toBe('No findings.\n');
    // A SARIF file is still written, so an upload step in CI has something to upload.
    const out = join(mkdtempSync(join(tmpdir(), 'svc-sarif-')), 'empty.sarif');
    expect((await review(repo, ['--format', 'sarif', '--output', out])).code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8')).runs[0].results).toEqual([]);
  });

  it('warns about uncommitted changes, and reviews them with --include-uncommitted without touching index or stash', async () => {
    const repo = repoWithBranch();
    writeFiles(repo, { 'src/draft.ts': 'export const run = (s: string) => eval(s);\n' });
    writeFiles(repo, { 'src/index.ts': 'export const x = 2;\n' });
    gitIn(repo, ['add', 'src/index.ts']);
    const statusBefore = gitIn(repo, ['status', '--porcelain']);

    const warned = await json(repo);
    expect(warned.stderr).toMatch(
      /warning: 2 files have uncommitted changes that are not reviewed \(--include-uncommitted/,
    );
    expect(warned.review.findings.map((f: { path: string }) => f.path)).not.toContain('src/draft.ts');

    const included = await json(repo, ['--include-uncommitted']);
    expect(included.stderr).toMatch(/reviewing 1 commit and uncommitted changes \(2 files\) main\.\.\.work/);
    expect(included.review.head.uncommitted).toBe(true);
    expect(included.review.findings.map((f: { path: string }) => f.path)).toContain('src/draft.ts');
    expect(gitIn(repo, ['status', '--porcelain'])).toBe(statusBefore);
    expect(gitIn(repo, ['stash', 'list'])).toBe('');

    // Committed later, the same defect is the same finding in the branch's ledger.
    gitIn(repo, ['add', '-A']);
    gitIn(repo, ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-qm', 'draft']);
    const committed = await json(repo);
    expect(committed.review.counts.opened).toBe(0);
    expect(ledgerOf(repo, 'work').findings.filter((f) => f.rule === 'security/code-injection')).toHaveLength(
      2,
    );
  });

  it('writes every finding to JSON and SARIF, caps the text and says how many more, describes each SARIF rule from the catalog', async () => {
    const repo = repoWithBranch();
    // A `debugger` in each of 120 files: one file's 120 would be one finding (one idiom, every place listed).
    commitFiles(
      repo,
      Object.fromEntries(
        Array.from({ length: 120 }, (_, i) => [
          `src/many/f${i}.ts`,
          `export function f(n: number) {\n  if (n === ${i}) debugger;\n}\n`,
        ]),
      ),
    );
    const all = await json(repo);
    expect(all.review.findings).toHaveLength(122);

    const text = await review(repo);
    expect(text.stdout.match(/^ {2}P[012] /gm)).toHaveLength(50);
    expect(text.stdout).toMatch(
      /72 more open finding\(s\) not shown \(0 P0, 0 P1, 72 P2\): `svc review --all`/,
    );
    expect((await review(repo, ['--all'])).stdout.match(/^ {2}P[012] /gm)).toHaveLength(122);

    const out = join(mkdtempSync(join(tmpdir(), 'svc-sarif-')), 'review.sarif');
    expect((await review(repo, ['--format', 'sarif', '--output', out])).code).toBe(1);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc.version).toBe('2.1.0');
    expect(doc.runs[0].tool.driver.version).toBe(VERSION);
    expect(doc.runs[0].results).toHaveLength(122);
    const catalog = await loadCatalog();
    const rule = catalog.find((s) => s.id === 'security')?.rules.find((r) => r.id === 'code-injection');
    const described = doc.runs[0].tool.driver.rules.find(
      (r: { id: string }) => r.id === 'security/code-injection',
    );
    expect(described.shortDescription.text).toBe(rule?.message.replace('$FN', 'fn'));
    expect(described.help.markdown).toBe(rule?.note.replace(/\$FN/g, 'fn'));
    expect(described.shortDescription.text).not.toContain('`eval`');
    const result = doc.runs[0].results.find(
      (r: { ruleId: string }) => r.ruleId === 'security/code-injection',
    );
    expect(result).toMatchObject({
      level: 'error',
      locations: [
        { physicalLocation: { artifactLocation: { uri: 'src/handler.ts' }, region: { startLine: 3 } } },
      ],
    });
    expect(doc.runs[0].tool.driver.rules[result.ruleIndex].id).toBe('security/code-injection');
  });

  it('states what it covered and names a file it could read only in part, in text, JSON and SARIF', async () => {
    const repo = repoWithBranch();
    // An interface the TypeScript grammar cannot read (call signatures without semicolons, then a
    // generic one) above a command injection: its two unreadable lines are left out, the function below is reviewed.
    const spawner = [
      "import { exec } from 'node:child_process';",
      '',
      'export interface Run {',
      '  (file: string): Promise<string>',
      '  <O extends object>(file: string, options: O): Promise<string>',
      '}',
      '',
      'export function list(req: { query: { dir: string } }) {',
      "  exec('ls ' + req.query.dir)",
      '}',
      '',
    ].join('\n');
    commitFiles(repo, {
      'src/spawn.ts': spawner,
      'test/handler.test.ts': 'debugger;\n',
      'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]).toString('binary'),
    });
    const { review: doc } = await json(repo);
    const injection = doc.findings.find((f: { path: string; line: number }) => f.path === 'src/spawn.ts');
    expect(injection).toMatchObject({ rule: 'security/command-injection', line: 9, role: 'production' });
    expect(new Set(doc.findings.map((f: { role: string }) => f.role))).toEqual(new Set(['production']));
    const gap = doc.gaps.find((g: { code: string }) => g.code === 'files_not_analyzed');
    expect(gap.file).toMatchObject({ path: 'src/spawn.ts', lines_left_out: 2, lines: 10, share: 0.2 });
    expect(doc.coverage).toMatchObject({
      base: doc.base.sha,
      merge_base: doc.base.sha,
      head: doc.head.sha,
      changed_files: 4,
      reviewed_files: 3,
      reviewed_by_role: { production: 2, test: 1 },
    });
    expect(doc.coverage.left_out.binary).toEqual({ count: 1, files: [{ path: 'logo.png' }] });
    expect(doc.coverage.left_out.parse_failure).toEqual({
      count: 1,
      files: [{ path: 'src/spawn.ts', share: 0.2 }],
    });

    const text = (await review(repo)).stdout;
    expect(text).toContain('Reviewed 3 of 4 changed file(s) (2 production, 1 test).');
    expect(text).toContain('Left out: binary 1, parse failure 1.');
    expect(text).toMatch(
      /Not analyzed: .*src\/spawn\.ts: not parseable as typescript; 2 of 10 line\(s\) \(20%\)/,
    );

    const out = join(mkdtempSync(join(tmpdir(), 'svc-sarif-')), 'review.sarif');
    await review(repo, ['--format', 'sarif', '--output', out]);
    const [invocation] = JSON.parse(readFileSync(out, 'utf8')).runs[0].invocations;
    const notification = invocation.toolExecutionNotifications.find(
      (n: { descriptor: { id: string } }) => n.descriptor.id === 'files_not_analyzed',
    );
    expect(notification).toMatchObject({
      level: 'warning',
      locations: [{ physicalLocation: { artifactLocation: { uri: 'src/spawn.ts' } } }],
      properties: { share: 0.2 },
    });
  });

  it('compares with the default branch as the local host reads it: origin/HEAD, init.defaultBranch, then main or master', async () => {
    const origin = repoWithBranch();
    gitIn(origin, ['checkout', '-q', 'main']);
    const clone = join(mkdtempSync(join(tmpdir(), 'svc-clone-')), 'app');
    gitIn(tmpdir(), ['clone', '-q', origin, clone]);
    gitIn(clone, ['checkout', '-q', '-b', 'topic', 'origin/work']);
    const fromClone = await review(clone, ['--reviewers', 'correctness']);
    expect(fromClone.stderr).toMatch(/reviewing 1 commit origin\/main\.\.\.topic/);

    const trunk = makeRepo(makeReposDir(), 'me/trunk', { 'a.ts': 'export const a = 1;\n' });
    gitIn(trunk, ['branch', '-m', 'main', 'trunk']);
    gitIn(trunk, ['checkout', '-q', '-b', 'feature']);
    commitFiles(trunk, { 'b.ts': 'debugger;\n' });
    // Without the machine's own git configuration, which may name a default branch.
    const isolated = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
    const noDefault = await review(trunk, [], isolated);
    expect(noDefault.code).toBe(2);
    expect(noDefault.stderr).toMatch(/no default branch.*pass --base/);
    gitIn(trunk, ['config', 'init.defaultBranch', 'trunk']);
    expect((await review(trunk, [], isolated)).stderr).toMatch(/reviewing 1 commit trunk\.\.\.feature/);
    // A declared default branch outranks the guess: an old `main` lying around is not the base.
    gitIn(trunk, ['branch', 'main', 'feature']);
    expect((await review(trunk, [], isolated)).stderr).toMatch(/reviewing 1 commit trunk\.\.\.feature/);
    // With nothing declared, the existing main is taken (it holds feature's tip: nothing to compare).
    gitIn(trunk, ['config', '--unset', 'init.defaultBranch']);
    expect((await review(trunk, [], isolated)).stderr).toMatch(
      /nothing to compare: feature has no commits that are not on main/,
    );
  });

  it('reviews a detached HEAD or an explicit range into a range ledger', async () => {
    const repo = repoWithBranch();
    gitIn(repo, ['checkout', '-q', '--detach']);
    const detached = await json(repo, ['--reviewers', 'security']);
    expect(detached.stderr).toMatch(/reviewing 1 commit main\.\.\.HEAD/);
    expect(detached.review.ledger.name).toMatch(/^[0-9a-f]{40}\.\.[0-9a-f]{40}$/);
    const range = await json(repo, ['--base', 'main', '--head', 'work', '--reviewers', 'correctness']);
    expect(range.review.ledger.name).toBe('work');
    expect(range.review.findings.map((f: { rule: string }) => f.rule)).toEqual([
      'correctness/debug-statement',
    ]);
    const empty = await review(repo, ['--base', 'work', '--head', 'main']);
    expect(empty).toMatchObject({ code: 0, stdout: 'No findings.\n' });
    expect(empty.stderr).toMatch(/nothing to compare: main has no commits that are not on work/);
  });

  it('exits 2 on usage and input errors, never 1, and prints its version', async () => {
    const repo = repoWithBranch();
    const cases: [string[], RegExp][] = [
      [['review', '--no-such-flag'], /unknown option/],
      [['review', '--format', 'xml'], /Allowed choices are text, json, sarif/],
      [['review', '--base', 'no-such-branch'], /--base no-such-branch does not resolve to a commit/],
      [['review', '--head', 'work', '--include-uncommitted'], /cannot be combined with --head/],
      [['review', '--reviewers', 'security,nope'], /there is no reviewer "nope"/],
      [['findings', 'dismiss', 'abcd1234'], /required option '--reason <text>'/],
      [['findings', 'dismiss', 'abcd1234', '--reason', 'x'], /no finding abcd1234/],
      [['no-such-command'], /unknown command/],
      [[], /Usage: svc/],
    ];
    for (const [args, message] of cases) {
      const result = await svc(repo, args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    const notRepo = await review(mkdtempSync(join(tmpdir(), 'svc-norepo-')));
    expect(notRepo.code).toBe(2);
    expect(notRepo.stderr).toMatch(/not inside a git repository/);
    const version = await svc(repo, ['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('exits 3 when the review cannot be recorded', async () => {
    const repo = repoWithBranch();
    await review(repo);
    writeFileSync(join(repo, '.git', 'svc', 'ledger', 'work.json'), 'not json');
    const result = await review(repo);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/work\.json is not valid JSON/);
  });

  it('does not report what the change only re-indented, and says so; a new copy is reported', async () => {
    const repo = makeRepo(makeReposDir(), 'me/app', {
      'src/load.js':
        "export function load(items) {\n  console.log('loading', items.length);\n  return items;\n}\n",
    });
    gitIn(repo, ['checkout', '-q', '-b', 'work']);
    commitFiles(repo, {
      'src/load.js':
        "export function load(items) {\n  if (items) {\n    console.log('loading', items.length);\n  }\n  return items;\n}\n",
    });
    const reindented = await json(repo);
    expect(reindented.review.findings).toEqual([]);
    expect(reindented.stderr).toMatch(
      /builtin_preexisting_not_reported: correctness: 1 finding\(s\) in 1 file\(s\) .* correctness\/debug-statement ×1/,
    );
    commitFiles(repo, {
      'src/load.js':
        "export function load(items) {\n  if (items) {\n    console.log('loading', items.length);\n    console.log('again', items);\n  }\n  return items;\n}\n",
    });
    const added = await json(repo);
    expect(added.review.findings.map((f: { rule: string; line: number }) => [f.rule, f.line])).toEqual([
      ['correctness/debug-statement', 4],
    ]);
  });

  it('exits 3 naming git when git is not on the PATH, not as a folder outside a repository', async () => {
    const repo = repoWithBranch();
    const result = await review(repo, [], { PATH: join(repo, 'no-such-bin') });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/git is not installed or not on the PATH/);
    expect(result.stderr).not.toMatch(/not inside a git repository/);
  });
});

describe('svc review with a model provider', { timeout: 120_000 }, () => {
  let double: OpenAIDouble;
  beforeAll(async () => {
    double = await startOpenAIDouble({ apiKey: 'sk-test' });
  });
  afterAll(() => double.close());

  it('adds the general model reviewer when a provider is configured, as the planner chooses, and merges its findings', async () => {
    const repo = repoWithBranch();
    double.enqueue(
      answers.findings([
        {
          severity: 'P1',
          path: 'src/handler.ts',
          line: 3,
          end_line: 3,
          title: 'eval of the request body',
          body: 'Anyone who can post runs code here.',
          category: 'security',
          suggestion: null,
        },
      ]),
    );
    const result = await json(repo, [], { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: double.baseURL });
    expect(double.rejections).toEqual([]);
    expect(result.review.lineup.map((r: { key: string }) => r.key)).toContain('general');
    const merged = result.review.findings.filter(
      (f: { line: number; path: string }) => f.path === 'src/handler.ts' && f.line === 3,
    );
    expect(merged).toHaveLength(1);
    expect(merged[0].reviewers.sort()).toEqual(['general', 'security']);
  });

  it('loads no model SDK, database, HTTP server or GitHub client when no provider is configured', async () => {
    const repo = repoWithBranch();
    const trace = join(mkdtempSync(join(tmpdir(), 'svc-trace-')), 'modules');
    // A module hook that appends every loaded URL to a file.
    const hooks = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(trace)}, url + '\\n'); return next(url, context); }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
    const result = await svc(repo, ['review', '--format', 'json'], {}, [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
    ]);
    expect(result.code).toBe(1);
    const loadedUrls = readFileSync(trace, 'utf8');
    // The compiled svc runs bundled modules; name each by the sources esbuild put in it.
    const meta = JSON.parse(readFileSync(join(process.cwd(), 'dist', 'meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const loaded = [
      loadedUrls,
      ...Object.entries(meta.outputs)
        .filter(([output]) => loadedUrls.includes(`/${output}\n`))
        .flatMap(([, out]) => Object.keys(out.inputs).map((input) => `/${input}`)),
    ].join('\n');
    expect(loaded).toContain('/src/reviewers/builtin/engine.ts');
    expect(
      JSON.parse(result.stdout).plan.reasons.find(
        (r: { reviewer_id: string }) => r.reviewer_id === 'general',
      ),
    ).toMatchObject({
      chosen: false,
    });
    for (const heavy of [
      '/node_modules/ai/',
      '/node_modules/@ai-sdk/',
      '/node_modules/drizzle-orm/',
      '/node_modules/@electric-sql/',
      '/node_modules/fastify/',
      '/node_modules/@octokit/',
      '/node_modules/pg/',
      '/src/main.ts',
      '/src/storage/',
    ])
      expect(loaded, heavy).not.toContain(heavy);
  });
});
