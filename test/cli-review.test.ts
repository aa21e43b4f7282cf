/** `svc review` as a user runs it, on a repository they already have. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitIn, makeRepo, makeReposDir } from './helpers/git';

const run = promisify(execFile);
const SVC = join(process.cwd(), 'bin', 'svc.mjs');

async function svcReview(cwd: string, args: string[]) {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  return run(process.execPath, [SVC, 'review', ...args], { cwd, env }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

// `svc review` runs as a real process on a fresh embedded database per test; the limit only
// stops a hung process (a loaded 2-core machine took 21 s of the default 30 s).
describe('svc review', { timeout: 180_000 }, () => {
  let repo: string;

  beforeAll(() => {
    repo = makeRepo(makeReposDir(), 'me/app', { 'src/index.ts': 'export const x = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'work']);
    commitFiles(repo, {
      'src/handler.ts': [
        'export async function handle(req: { body: { code: string } }) {',
        '  debugger;',
        '  return eval(req.body.code);',
        '}',
        '',
      ].join('\n'),
    });
  });

  it('reviews the branch against the default branch, shows progress, groups findings by file, exits 1 on a P0', async () => {
    const result = await svcReview(repo, []);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/svc: reviewing [0-9a-f]{12}\.\.[0-9a-f]{12}/);
    expect(result.stderr).toMatch(/100%/);
    expect(result.stdout).toMatch(/^src\/handler\.ts$/m);
    expect(result.stdout).toMatch(/P0 3: .*eval/);
    expect(result.stdout).toMatch(/P2 2: .*debugger/);
    expect(result.stdout).toMatch(/finding\(s\): 1 P0/);
  });

  it('writes SARIF 2.1.0 and JSON', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'svc-sarif-')), 'review.sarif');
    const sarif = await svcReview(repo, ['--format', 'sarif', '--output', out]);
    expect(sarif.code).toBe(1);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc.version).toBe('2.1.0');
    const results = doc.runs[0].results;
    expect(results.find((r: { ruleId: string }) => r.ruleId === 'security/code-injection')).toMatchObject({
      level: 'error',
      locations: [
        { physicalLocation: { artifactLocation: { uri: 'src/handler.ts' }, region: { startLine: 3 } } },
      ],
    });
    const json = await svcReview(repo, ['--format', 'json', '--reviewers', 'correctness']);
    expect(json.code).toBe(0);
    const review = JSON.parse(json.stdout);
    expect(review.findings.map((f: { rule: string }) => f.rule)).toEqual(['correctness/debug-statement']);
  });

  it('exits 0 on a clean range and 2 on a range that does not resolve or a directory that is no repository', async () => {
    const clean = await svcReview(repo, ['--base', 'main', '--head', 'main~0', '--reviewers', 'security']);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toBe('No findings.\n');
    const bad = await svcReview(repo, ['--base', 'no-such-branch']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--base no-such-branch does not resolve/);
    const notRepo = await svcReview(mkdtempSync(join(tmpdir(), 'svc-norepo-')), []);
    expect(notRepo.code).toBe(2);
    expect(notRepo.stderr).toMatch(/not inside a git repository/);
  });
});
