/**
 * Issue 22.1: whoever can write a served repository's `.git` must not get svc to run a program.
 * A repository is planted with every program-running setting git has (hooks in `.git/hooks` and
 * under core.hooksPath, an fsmonitor, filters, diff and merge drivers chosen by attributes, an
 * external diff, a pager, signing and verification programs, a credential helper, an ssh command,
 * a remote's upload-pack, an editor...), part of it through an included config file, each program
 * leaving a marker file. Plain git is shown to run them; then every svc operation that runs git
 * on that repository (setup, a scorecard, a review of a pull request found by the watcher, its
 * diff, both quick actions, a plan's activation, `svc review` of the work tree) and svc's git
 * layer asked directly for what would start each program leave no marker.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalWatcher } from '../../src/automation/local-watch';
import { onPush } from '../../src/automation/plans';
import type { AutomationDeps } from '../../src/automation/triggers';
import { git, gitBuffer, gitOrNull } from '../../src/codehost/local/git';
import { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { bearer, createTestApp, settleRuns, type TestApp } from '../helpers/app';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

const run = promisify(execFile);
const SVC = join(process.cwd(), 'bin', 'svc.mjs');
const PLAN =
  '# Search\n\n## Goal\nFind things fast.\n\n## Steps\n1. Index\n\n## Risks\nNone.\n\n## Done when\nQueries answer in 50 ms.\n';
const HOOKS = [
  'post-index-change',
  'reference-transaction',
  'pre-commit',
  'commit-msg',
  'post-commit',
  'post-checkout',
  'pre-auto-gc',
  'post-rewrite',
];

let markers: string;
let tools: string;

/** A program that leaves `markers/<name>` and then does `then` (shell). */
function program(name: string, then = 'exit 0'): string {
  const path = join(tools, name);
  writeFileSync(path, `#!/bin/sh\necho "$0 $*" >> '${join(markers, name)}'\n${then}\n`);
  chmodSync(path, 0o755);
  return path;
}

const fired = () => readdirSync(markers).sort();
const clearMarkers = () => {
  for (const name of readdirSync(markers)) rmSync(join(markers, name));
};

/** Plants every program-running setting in `repo`; `origin` is a repository its remote points at. */
function plant(repo: string, origin: string): void {
  const config = (key: string, value: string) => gitIn(repo, ['config', '--add', key, value]);
  const hooksPath = join(tools, 'hooks');
  mkdirSync(hooksPath);
  for (const hook of HOOKS) {
    writeFileSync(
      join(repo, '.git/hooks', hook),
      `#!/bin/sh\necho >> '${join(markers, `git-hooks-${hook}`)}'\n`,
    );
    chmodSync(join(repo, '.git/hooks', hook), 0o755);
    writeFileSync(join(hooksPath, hook), `#!/bin/sh\necho >> '${join(markers, `hooks-path-${hook}`)}'\n`);
    chmodSync(join(hooksPath, hook), 0o755);
  }
  // Part of it through an included file: command-line config must still outrank it.
  const included = join(tools, 'included.cfg');
  writeFileSync(
    included,
    [
      '[core]',
      `\tfsmonitor = ${program('fsmonitor', 'exit 1')}`,
      `\thooksPath = ${hooksPath}`,
      '[filter "a=b"]',
      `\tclean = ${program('filter-a=b-clean', 'cat')}`,
      `\tsmudge = ${program('filter-a=b-smudge', 'cat')}`,
      '\trequired = true',
      '',
    ].join('\n'),
  );
  config('include.path', included);
  writeFileSync(
    join(repo, '.git/info/attributes'),
    [
      '*.js filter=evil diff=evil merge=evil',
      '*.ts filter=a=b diff=cmd',
      // A process filter that fails races git into dying: kept to a file no diff here shows.
      'docs/plans/*.md filter=proc',
      '',
    ].join('\n'),
  );
  config('filter.evil.clean', program('filter-clean', 'cat'));
  config('filter.evil.smudge', program('filter-smudge', 'cat'));
  config('filter.evil.required', 'true');
  config('filter.proc.process', program('filter-process', 'exit 1'));
  // Not required: a failing required filter stops git at the first file, before the others run.
  config('filter.proc.required', 'false');
  config('diff.evil.textconv', program('textconv', 'cat "$1"'));
  config('diff.cmd.command', program('diff-command'));
  config('diff.external', program('diff-external'));
  config('merge.evil.driver', program('merge-driver', 'exit 1'));
  config('core.pager', program('pager', 'cat >/dev/null'));
  for (const command of ['log', 'show', 'diff', 'status'])
    config(`pager.${command}`, program(`pager-${command}`, 'cat >/dev/null'));
  config('core.sshCommand', program('ssh-command', 'exit 1'));
  config('core.askPass', program('askpass', 'echo x'));
  config('core.editor', program('editor', 'exit 1'));
  config('sequence.editor', program('sequence-editor', 'exit 1'));
  config('core.alternateRefsCommand', program('alternate-refs'));
  config('credential.helper', program('credential-helper'));
  config('credential.https://example.invalid.helper', program('credential-url-helper'));
  config('gpg.program', program('gpg', 'exit 1'));
  config('gpg.ssh.program', program('gpg-ssh', 'exit 1'));
  config('gpg.ssh.defaultKeyCommand', program('gpg-ssh-key', 'exit 1'));
  config('commit.gpgSign', 'true');
  config('tag.gpgSign', 'true');
  config('log.showSignature', 'true');
  config('gc.auto', '1');
  config('maintenance.auto', 'true');
  config('remote.origin.url', origin);
  config('remote.origin.uploadpack', program('upload-pack', 'exit 1'));
  config('remote.origin.receivepack', program('receive-pack', 'exit 1'));
  config('protocol.allow', 'always');
  config('uploadpack.packObjectsHook', program('pack-objects-hook', 'exit 1'));
}

/** Plain git, as anyone else would run it in the repository; only the markers matter. */
function plainGit(repo: string, args: string[], input = '', env: NodeJS.ProcessEnv = {}): void {
  try {
    execFileSync('git', args, {
      cwd: repo,
      input,
      stdio: ['pipe', 'ignore', 'ignore'],
      timeout: 20_000,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env },
    });
  } catch {}
}

/** Replaces `branch`'s tip with the same commit carrying a (fake) signature, as `show` would verify it. */
function signTip(repo: string, branch: string): string {
  const commit = gitIn(repo, ['cat-file', 'commit', branch]);
  const signature =
    'gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n';
  const signed = commit.replace('\n\n', `\n${signature}\n`);
  const sha = gitIn(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], signed).trim();
  gitIn(repo, ['update-ref', `refs/heads/${branch}`, sha]);
  return sha;
}

describe('a repository whose config names programs', () => {
  let t: TestApp;
  let worker: Worker;
  let repo: string;
  let headers: Record<string, string>;
  let deps: AutomationDeps;

  const api = async (method: 'GET' | 'POST', url: string, payload?: object, as = headers) => {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: as,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const settle = () => settleRuns(t, { ignoreKinds: ['check_deadline'], attempts: 800 });

  beforeAll(async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'svc-planted-'));
    markers = join(scratch, 'markers');
    tools = join(scratch, 'tools');
    mkdirSync(markers);
    mkdirSync(tools);
    const reposDir = makeReposDir();
    repo = makeRepo(reposDir, 'acme/api', {
      'package.json': `${JSON.stringify({ name: 'api', scripts: { test: 'vitest run' } })}\n`,
      'src/app.js': 'export const ok = 1;\n',
      'src/types.ts': 'export type Id = string;\n',
      'notes.txt': 'notes\n',
    });
    // Everything git-shaped the scenario needs is made before the planting, by plain git.
    commitFiles(repo, { 'docs/plans/search.md': PLAN }, 'plan');
    gitIn(repo, ['checkout', '-q', '-b', 'other']);
    commitFiles(repo, { 'src/app.js': 'export const ok = 3;\n' }, 'other side');
    gitIn(repo, ['checkout', '-q', '-b', 'feature', 'main']);
    commitFiles(
      repo,
      {
        'src/app.js': 'export const ok = 2;\nexport function run(req) {\n  return eval(req.query.code);\n}\n',
        'src/types.ts': 'export type Id = number;\n',
        'notes.txt': 'more notes\n',
        'docs/run.md': '# run\n',
      },
      'runner',
    );
    signTip(repo, 'feature');
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/head', 'refs/heads/feature']);
    gitIn(repo, ['symbolic-ref', 'refs/pull/1/base', 'refs/heads/main']);
    plant(repo, makeRepo(makeReposDir(), 'acme/origin', { 'a.txt': 'a\n' }));

    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
  });
  // Each case starts with no marker, whatever the one before left.
  beforeEach(clearMarkers);
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('runs its programs under plain git (so the markers below could appear)', () => {
    const scratchIndex = { GIT_INDEX_FILE: join(tools, 'scratch-index') };
    plainGit(repo, ['status']);
    plainGit(repo, ['read-tree', 'HEAD'], '', scratchIndex);
    // Into indexes of their own, where every file is new and goes through its clean filter; the
    // failing process filter (docs/) on its own, as git may die of it before reaching src/.
    plainGit(repo, ['add', '-A', '--', 'src'], '', { GIT_INDEX_FILE: join(tools, 'scratch-index-2') });
    plainGit(repo, ['add', '-A', '--', 'docs'], '', { GIT_INDEX_FILE: join(tools, 'scratch-index-3') });
    plainGit(repo, ['update-ref', 'refs/sanity', 'HEAD']);
    plainGit(repo, ['diff', 'main', 'feature']);
    plainGit(repo, ['diff', '--no-ext-diff', 'main', 'feature']);
    plainGit(repo, ['show', '-s', 'feature']);
    plainGit(repo, ['merge-tree', '--write-tree', 'feature', 'other']);
    plainGit(repo, ['credential', 'fill'], 'url=https://example.invalid\n\n');
    plainGit(repo, ['ls-remote', 'origin']);
    plainGit(repo, ['ls-remote', 'ssh://example.invalid/x']);
    plainGit(repo, ['tag', '-a', 'sanity', 'HEAD']);
    expect(fired()).toEqual(
      expect.arrayContaining([
        'credential-helper',
        'credential-url-helper',
        'diff-command',
        'diff-external',
        'editor',
        'filter-a=b-clean',
        'filter-clean',
        'filter-process',
        'fsmonitor',
        'gpg',
        'hooks-path-post-index-change',
        'hooks-path-reference-transaction',
        'merge-driver',
        'ssh-command',
        'textconv',
        'upload-pack',
      ]),
    );
    gitIn(repo, ['update-ref', '-d', 'refs/sanity']);
    plainGit(repo, ['tag', '-d', 'sanity']);
    clearMarkers();
  });

  it('runs none of them in setup, a scorecard, a watched review and its diff, quick actions and a plan', async () => {
    const created = await api(
      'POST',
      '/projects',
      { name: 'api', repository: { full_name: 'acme/api', installation_id: 1 }, setup: true },
      bearer(t.workspaceKey),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    headers = { ...bearer(t.workspaceKey), 'project-id': created.body.project.id };
    await settle();
    expect((await api('GET', '/scorecards')).body.data).toHaveLength(1);

    // The watcher finds pull request 1 (its head a signed commit) and reviews it.
    const report = await new LocalWatcher(deps, { logger: pino({ level: 'silent' }) }).tick();
    expect(report.errors).toEqual([]);
    expect(report.triggered.map((e) => e.outcome)).toContain('review_started');
    await settle();
    const passes = (await api('GET', '/review-results')).body.data as { id: string }[];
    expect(passes.length).toBeGreaterThan(0);
    const diff = await api('GET', `/review-results/${passes[0]?.id}/diff`);
    expect(diff.status).toBe(200);
    expect((diff.body.data as { path: string }[]).map((f) => f.path).sort()).toEqual([
      'docs/run.md',
      'notes.txt',
      'src/app.js',
      'src/types.ts',
    ]);

    const actions = (await api('GET', '/quick-actions')).body.data as { id: string; kind: string }[];
    for (const kind of ['add_svc_json', 'add_ci_test_workflow']) {
      const action = actions.find((a) => a.kind === kind);
      expect(action, kind).toBeDefined();
      expect((await api('POST', `/quick-actions/${action?.id}/runs`)).status, kind).toBe(202);
    }
    await settle();
    for (const action of (await api('GET', '/quick-actions')).body.data as { kind: string; status: string }[])
      if (['add_svc_json', 'add_ci_test_workflow'].includes(action.kind))
        expect(action, action.kind).toMatchObject({ status: 'done' });

    await onPush(deps, {
      installationId: 1,
      repo: 'acme/api',
      ref: 'refs/heads/main',
      after: gitIn(repo, ['rev-parse', 'main']).trim(),
      defaultBranch: 'main',
      paths: ['docs/plans/search.md'],
    });
    await settle();
    const plans = (await api('GET', '/plans')).body.data as { id: string }[];
    expect(plans).toHaveLength(1);
    expect((await api('POST', `/plans/${plans[0]?.id}/approve`, {})).status).toBe(200);
    await settle();
    expect((await api('GET', `/plans/${plans[0]?.id}`)).body).toMatchObject({
      status: 'active',
      repo_write_status: 'draft_pr_opened',
    });

    expect(fired()).toEqual([]);
  }, 180_000);

  it('runs none of them in `svc review` of the work tree with uncommitted changes', async () => {
    // The work tree is feature's, checked out before the planting.
    writeFileSync(join(repo, 'src/app.js'), 'export const ok = 4;\n');
    writeFileSync(join(repo, 'src/new.ts'), 'export const n: number = 1;\n');
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
    for (const name of ['DATABASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'SVC_LLM_COMPAT_URL'])
      delete env[name];
    const result = await run(
      process.execPath,
      [SVC, 'review', '--include-uncommitted', '--base', 'main', '--format', 'json'],
      { cwd: repo, env },
    ).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect(result.stderr).toMatch(/uncommitted changes \(2 files\)/);
    expect(JSON.parse(result.stdout).head.uncommitted).toBe(true);
    expect(fired()).toEqual([]);
  });

  it("runs none of them when svc's git layer is asked for what would start each", async () => {
    const index = { GIT_INDEX_FILE: join(tools, 'svc-index') };
    await gitBuffer(repo, ['read-tree', 'HEAD'], undefined, index);
    await gitBuffer(repo, ['add', '-A'], undefined, index);
    await gitOrNull(repo, ['status', '--porcelain']);
    await git(repo, ['diff', 'main', 'feature']);
    await git(repo, ['log', '-p', '-1', 'feature']);
    await gitOrNull(repo, ['merge-tree', '--write-tree', 'feature', 'other']);
    await gitBuffer(repo, ['credential', 'fill'], 'url=https://example.invalid\n\n').catch(() => null);
    await gitOrNull(repo, ['ls-remote', 'origin']);
    await gitOrNull(repo, ['ls-remote', 'ssh://example.invalid/x']);
    await gitOrNull(repo, ['tag', '-a', 'svc-tag', 'HEAD']);
    await gitOrNull(repo, ['commit', '--allow-empty']);
    expect(fired()).toEqual([]);
  });
});

describe('what the operator set, and hooks in .git/hooks', () => {
  let repo: string;
  const saved = { ...process.env };

  beforeEach(() => {
    const scratch = mkdtempSync(join(tmpdir(), 'svc-operator-'));
    markers = join(scratch, 'markers');
    tools = join(scratch, 'tools');
    mkdirSync(markers);
    mkdirSync(tools);
    repo = makeRepo(makeReposDir(), 'acme/hooks', { 'a.txt': 'a\n', 'b.op': 'b\n' });
  });
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  it('runs no hook of .git/hooks when svc commits on a new branch, though plain git does', async () => {
    for (const hook of HOOKS) {
      writeFileSync(join(repo, '.git/hooks', hook), `#!/bin/sh\necho >> '${join(markers, hook)}'\n`);
      chmodSync(join(repo, '.git/hooks', hook), 0o755);
    }
    plainGit(repo, ['update-ref', 'refs/sanity', 'HEAD']);
    expect(fired()).toContain('reference-transaction');
    clearMarkers();

    const host = new LocalCodeHost(join(repo, '../..'));
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const { commit } = await host.commitToNewBranch('acme/hooks', {
      branch: 'svc/x',
      baseSha: base,
      message: 'svc change',
      files: [{ path: 'c.txt', content: 'c\n' }],
    });
    expect(gitIn(repo, ['rev-parse', 'svc/x']).trim()).toBe(commit);
    expect(fired()).toEqual([]);
  });

  it('ignores program variables svc was started with (GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_EDITOR...)', async () => {
    process.env.GIT_EXTERNAL_DIFF = program('env-external-diff');
    process.env.GIT_SSH_COMMAND = program('env-ssh-command', 'exit 1');
    process.env.GIT_EDITOR = program('env-editor', 'exit 1');
    process.env.GIT_ASKPASS = program('env-askpass', 'echo x');
    process.env.GIT_PAGER = program('env-pager', 'cat >/dev/null');
    const before = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const after = commitFiles(repo, { 'a.txt': 'b\n' });
    // Plain git with the same environment runs them.
    plainGit(repo, ['diff', before, after]);
    plainGit(repo, ['ls-remote', 'ssh://example.invalid/x']);
    plainGit(repo, ['tag', '-a', 'sanity', 'HEAD']);
    expect(fired()).toEqual(['env-editor', 'env-external-diff', 'env-ssh-command']);
    clearMarkers();

    await git(repo, ['diff', before, after]);
    await gitOrNull(repo, ['ls-remote', 'ssh://example.invalid/x']);
    await gitOrNull(repo, ['ls-remote', 'https://127.0.0.1:9/x']);
    await gitOrNull(repo, ['tag', '-a', 'svc-tag', 'HEAD']);
    expect(fired()).toEqual([]);
  });

  it("keeps the operator's own filter (global config), and empties the repository's redefinition of it", async () => {
    const global = join(tools, 'global.cfg');
    writeFileSync(global, `[filter "op"]\n\tclean = ${program('operator-clean', 'cat')}\n`);
    process.env.GIT_CONFIG_GLOBAL = global;
    writeFileSync(join(repo, '.git/info/attributes'), '*.op filter=op\n');
    const add = (index: string) =>
      gitBuffer(repo, ['add', '-A'], undefined, { GIT_INDEX_FILE: join(tools, index) });
    await add('index-1');
    expect(fired()).toEqual(['operator-clean']);
    clearMarkers();

    gitIn(repo, ['config', 'filter.op.clean', program('repository-clean', 'cat')]);
    plainGit(repo, ['add', '-A'], '', { GIT_INDEX_FILE: join(tools, 'index-2') });
    expect(fired()).toEqual(['repository-clean']);
    clearMarkers();
    await add('index-3');
    expect(fired()).toEqual([]);
  });
});
