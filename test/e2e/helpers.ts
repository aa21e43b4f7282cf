/**
 * The browser tests' world, shared with `npm run screenshots` (scripts/screenshots.ts): a REAL
 * `svc serve` process on a fresh embedded data directory and a free port, its workspace key as
 * the first start prints it, a local git repository with pull requests whose planted defects the
 * builtin rule reviewers flag, reviews of them started through the API (delivered to the local
 * code host, so each has its `Service / Review` check), and Debian's Chromium driven by
 * playwright-core. Nothing here imports vitest, so the screenshot script runs it as it is.
 *
 * The seeded repository, `acme/shop`:
 * - pull request #1 "Add the report runner": `eval` of request input (P0, security/code-injection,
 *   src/run.js:2) and a `debugger` statement (P2, correctness/debug-statement, src/log.js:2); its
 *   check asks for action until the P0 is dismissed, then passes;
 * - pull request #2 "Look users up by name": SQL built from request input (P0,
 *   security/sql-injection, src/users.js:2) and an AWS key committed (P0, secrets/aws,
 *   src/config.js:3);
 * - pull request #3 "Document the runner": a README change with nothing to report;
 * - two plan documents on main (PLAN_DOCUMENTS), reviewed by setup and awaiting approval.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.mjs';
import { commitFiles, gitIn, makeRepo } from '../helpers/git';
import { freePort } from '../helpers/net';

const execFileAsync = promisify(execFile);

export const ROOT = resolve(import.meta.dirname, '..', '..');
const SVC = join(ROOT, 'bin', 'svc.mjs');

export const REPO = 'acme/shop';
export const PROJECT_NAME = 'shop';
export const LINEUP = ['security', 'correctness', 'secrets'] as const;

export interface PlantedFinding {
  rule: string;
  severity: 'P0' | 'P1' | 'P2';
  path: string;
  line: number;
}

export interface SeedPullRequest {
  number: number;
  branch: string;
  title: string;
  files: Record<string, string>;
  planted: PlantedFinding[];
}

/** What each seeded pull request holds, and the findings the rule reviewers must report on it. */
export const PULL_REQUESTS: readonly SeedPullRequest[] = [
  {
    number: 1,
    branch: 'report-runner',
    title: 'Add the report runner',
    files: {
      'src/run.js': 'export function run(req) {\n  return eval(req.query.code);\n}\n',
      'src/log.js': 'export function log(x) {\n  debugger;\n  return x;\n}\n',
    },
    planted: [
      { rule: 'security/code-injection', severity: 'P0', path: 'src/run.js', line: 2 },
      { rule: 'correctness/debug-statement', severity: 'P2', path: 'src/log.js', line: 2 },
    ],
  },
  {
    number: 2,
    branch: 'user-lookup',
    title: 'Look users up by name',
    files: {
      'src/users.js': [
        'export async function findUser(db, req) {',
        `  return db.query("SELECT * FROM users WHERE name = '" + req.query.name + "'");`,
        '}',
        '',
      ].join('\n'),
      'src/config.js': [
        'export const config = {',
        "  region: 'eu-west-1',",
        "  awsAccessKeyId: 'AKIAZ7VRSQ5TJN2XKQHB',",
        "  awsSecretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',",
        '};',
        '',
      ].join('\n'),
    },
    planted: [
      { rule: 'security/sql-injection', severity: 'P0', path: 'src/users.js', line: 2 },
      { rule: 'secrets/aws', severity: 'P0', path: 'src/config.js', line: 3 },
      // The secret access key beside it (not AWS's documented example, which differs by a letter).
      { rule: 'security/hard-coded-credentials', severity: 'P1', path: 'src/config.js', line: 4 },
    ],
  },
  {
    number: 3,
    branch: 'runner-docs',
    title: 'Document the runner',
    files: { 'README.md': '# shop\n\nThe report runner runs saved reports: `npm run report <name>`.\n' },
    planted: [],
  },
];

/**
 * Plan documents on the default branch: setup turns each into a plan, reviews it, and (as each
 * requires approval) leaves it awaiting a person's decision on the console's Plans page.
 */
export const PLAN_DOCUMENTS: Record<string, string> = {
  'docs/plans/search.md': [
    '# Search the shop',
    '',
    '## Goal',
    'Customers find a product by name in under a second.',
    '',
    '## Steps',
    '1. Index product names.',
    '2. Add a search box.',
    '',
    '## Risks',
    'The index grows with the catalogue.',
    '',
    '## Done when',
    'A search for a product name lists it first.',
    '',
  ].join('\n'),
  'docs/plans/export.md': [
    '# Export orders',
    '',
    '## Goal',
    'Accountants download the month of orders as CSV.',
    '',
    '## Steps',
    '- Add an export endpoint.',
    '',
  ].join('\n'),
};

/** An API answer's JSON, read loosely: the tests assert on its shape rather than trust a type. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Json = any;

export interface ApiAnswer<T = Json> {
  status: number;
  body: T;
}

export interface Finding {
  id: string;
  status: 'open' | 'fixed' | 'dismissed';
  severity: 'P0' | 'P1' | 'P2';
  path: string;
  line: number;
  title: string;
  rule: string;
}

export interface SeededPullRequest {
  number: number;
  id: string;
  title: string;
  branch: string;
  reviewId: string;
  findings: Finding[];
}

export interface SeededService {
  /** http://127.0.0.1:PORT, no trailing slash. */
  url: string;
  /** The workspace key `svc serve` printed on its first start. */
  key: string;
  projectId: string;
  dataDir: string;
  reposDir: string;
  repoDir: string;
  pullRequests: SeededPullRequest[];
  /** Calls the API with the workspace key (and `Project-ID` unless `project: false`). */
  api<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    options?: { project?: boolean },
  ): Promise<ApiAnswer<T>>;
  /** The latest state of each `Service / Review` check the local code host recorded. */
  checks(): Promise<LocalCheck[]>;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

export interface LocalCheck {
  id: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  title: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every `everyMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 240_000, everyMs = 250 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/** Builds the console (web/dist) when this checkout has not built it yet (`npm install` builds it). */
export async function ensureConsoleBuilt(log: (line: string) => void = () => {}): Promise<void> {
  if (existsSync(join(ROOT, 'web', 'dist', 'index.html'))) return;
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {};
  if (!scripts['build:web']) return;
  log('svc: web/dist is missing; building the console (npm run build:web)');
  // flock serialises two test workers (or a test and the screenshot script) building at once.
  await execFileAsync('flock', ['/tmp/svc-build-web.lock', 'npm', 'run', 'build:web'], {
    cwd: ROOT,
    timeout: 600_000,
  }).catch(async (error) => {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await execFileAsync('npm', ['run', 'build:web'], { cwd: ROOT, timeout: 600_000 });
  });
}

/** Makes `reposDir/acme/shop` with `main` and one branch per seeded pull request, each a local pull request. */
export function seedRepository(reposDir: string): string {
  const repo = makeRepo(reposDir, REPO, {
    'README.md': '# shop\n',
    'src/app.js': "export const name = 'shop';\n",
    'package.json': '{ "name": "shop", "private": true, "type": "module" }\n',
    ...PLAN_DOCUMENTS,
  });
  for (const pr of PULL_REQUESTS) {
    gitIn(repo, ['checkout', '-q', '-b', pr.branch, 'main']);
    commitFiles(repo, pr.files, pr.title);
    gitIn(repo, ['symbolic-ref', `refs/pull/${pr.number}/head`, `refs/heads/${pr.branch}`]);
    gitIn(repo, ['symbolic-ref', `refs/pull/${pr.number}/base`, 'refs/heads/main']);
  }
  gitIn(repo, ['checkout', '-q', 'main']);
  return repo;
}

async function readChecks(repoDir: string): Promise<LocalCheck[]> {
  const { readFile } = await import('node:fs/promises');
  let text = '';
  try {
    text = await readFile(join(repoDir, '.git', 'svc', 'checks.jsonl'), 'utf8');
  } catch {
    return [];
  }
  const latest = new Map<string, LocalCheck>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const check = JSON.parse(line) as LocalCheck;
    latest.set(check.id, check);
  }
  return [...latest.values()];
}

/**
 * Starts `svc serve` on a fresh data directory, registers the seeded repository as a project
 * (with its setup), reviews every seeded pull request through the API with delivery to the code
 * host, and waits until each is reviewed and reports its planted findings.
 */
export async function startSeededService(
  options: { log?: (line: string) => void; port?: number } = {},
): Promise<SeededService> {
  const log = options.log ?? (() => {});
  await ensureConsoleBuilt(log);
  const reposDir = mkdtempSync(join(tmpdir(), 'svc-e2e-repos-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-data-'));
  const repoDir = seedRepository(reposDir);
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    SVC_REPOS_DIR: reposDir,
    LOG_LEVEL: 'warn',
    SVC_POLL_MS: '200',
  };
  delete env.DATABASE_URL;
  delete env.SVC_BOOTSTRAP_KEY;
  delete env.SVC_WATCH;
  delete env.SVC_NO_WORKER;
  const child: ChildProcess = spawn(process.execPath, [SVC, 'serve', '--port', String(port)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(reposDir, { recursive: true, force: true });
  };

  try {
    log(`svc: starting svc serve on ${url}`);
    await waitFor(
      'svc serve to answer /healthz',
      async () => {
        if (child.exitCode !== null) throw new Error(`svc serve exited ${child.exitCode}: ${stderr}`);
        const res = await fetch(`${url}/healthz`);
        return res.ok ? true : undefined;
      },
      { everyMs: 200 },
    );
    // The first start prints the workspace key once, as a user would read it.
    const key = await waitFor(
      'the workspace key on stderr',
      async () => /^(svc_ws_\S+)$/m.exec(stderr)?.[1],
      {
        timeoutMs: 10_000,
      },
    );

    let projectId = '';
    const api = async <T = Json>(
      method: string,
      path: string,
      body?: unknown,
      opts: { project?: boolean } = {},
    ): Promise<ApiAnswer<T>> => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (opts.project !== false && projectId) headers['project-id'] = projectId;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed as T };
    };
    const must = async <T = Json>(
      method: string,
      path: string,
      body?: unknown,
      expected = [200, 201, 202],
    ) => {
      const res = await api<T>(method, path, body);
      if (!expected.includes(res.status))
        throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const finished = (status: string | undefined) =>
      status !== undefined && ['completed', 'failed', 'canceled'].includes(status);

    const created = await must('POST', '/api/v1/projects', {
      name: PROJECT_NAME,
      repository: { full_name: REPO, installation_id: 1 },
      setup: true,
    });
    projectId = created.project.id;
    const setupTask = created.setup?.task?.id as string | undefined;
    log(`svc: project ${projectId} registered; reviewing ${PULL_REQUESTS.length} pull requests`);

    const pullRequests: SeededPullRequest[] = [];
    for (const pr of PULL_REQUESTS) {
      const ack = await must('POST', '/api/v1/reviews', {
        pr: pr.number,
        reviewers: [...LINEUP],
        delivery: 'codehost',
      });
      const review = await waitFor(`the review of #${pr.number}`, async () => {
        const res = await must('GET', `/api/v1/reviews/${ack.id}`);
        return finished(res.run?.status) ? res : undefined;
      });
      if (review.run.status !== 'completed')
        throw new Error(
          `the review of #${pr.number} ended ${review.run.status}: ${JSON.stringify(review.run)}`,
        );
      const listed = await waitFor(`#${pr.number} to be reviewed`, async () => {
        const res = await must('GET', `/api/v1/pull-requests?number=${pr.number}`);
        const row = res.data?.[0];
        return row?.review_status === 'reviewed' ? row : undefined;
      });
      const found = review.findings as Finding[];
      for (const planted of pr.planted) {
        const hit = found.find((f) => f.rule === planted.rule && f.path === planted.path);
        if (!hit || hit.line !== planted.line || hit.severity !== planted.severity)
          throw new Error(
            `#${pr.number}: expected ${planted.severity} ${planted.rule} at ${planted.path}:${planted.line}, got ${JSON.stringify(found.map((f) => [f.severity, f.rule, f.path, f.line]))}`,
          );
      }
      pullRequests.push({
        number: pr.number,
        id: listed.id,
        title: pr.title,
        branch: pr.branch,
        reviewId: ack.id,
        findings: found,
      });
    }

    if (setupTask) {
      await waitFor('the project setup', async () => {
        const res = await must('GET', `/api/v1/tasks/${setupTask}/status`);
        const status = (res.run?.status ?? res.status) as string | undefined;
        return finished(status) ? true : undefined;
      });
    }
    // Setup found the plan documents; each is reviewed before anyone decides on it.
    await waitFor('the plans to be reviewed', async () => {
      const res = await must('GET', '/api/v1/plans');
      const plans = (res.data ?? []) as { status: string }[];
      return plans.length === Object.keys(PLAN_DOCUMENTS).length &&
        plans.every((p) => p.status === 'reviewed')
        ? true
        : undefined;
    });
    // Every check the reviews delivered has its verdict before anyone looks at it.
    await waitFor('the checks to complete', async () => {
      const checks = await readChecks(repoDir);
      return checks.length >= PULL_REQUESTS.length &&
        checks.every((c) => c.status === 'completed' && c.title.startsWith('Reviewed'))
        ? true
        : undefined;
    });
    log('svc: seeded');

    return {
      url,
      key,
      projectId,
      dataDir,
      reposDir,
      repoDir,
      pullRequests,
      api,
      checks: () => readChecks(repoDir),
      stderr: () => stderr,
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- svc serve stderr ---\n${stderr.slice(-4000)}`);
  }
}

export type ChromiumLaunch = { browser: Browser; path: string; version: string | null } | { reason: string };

/** Launches Debian's Chromium (installed if missing and possible) headless, or says why it cannot. */
export async function launchChromium(
  log: (line: string) => void = (l) => console.error(l),
): Promise<ChromiumLaunch> {
  const found = await findChromium({ log });
  if ('reason' in found) return found;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: found.path,
    args: CHROMIUM_ARGS,
    headless: true,
    timeout: 120_000,
  });
  return { browser, path: found.path, version: found.version };
}
