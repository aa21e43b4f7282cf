/**
 * The package as a user installs it: `npm pack` of this checkout installed into a fresh prefix,
 * its `svc-review` command run from a repository elsewhere. This catches a runtime file left out
 * of `files` (rules, migrations), a runtime dependency listed only for development, and a
 * dependency whose `engines` refuse the Node running the test: the install resolves ranges as a
 * user's does, with no lockfile and no `overrides` (npm applies neither to an installed package).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitIn, makeRepo, makeReposDir } from './helpers/git';

const run = promisify(execFile);
const VERSION = (await import('../package.json', { with: { type: 'json' } })).default.version;

describe('the packed package', () => {
  let dir: string;
  let bin: string;
  let installLog: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-package-'));
    await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: process.cwd() });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack wrote no tarball into ${dir}`);
    const prefix = join(dir, 'prefix');
    const install = await run(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        join(dir, tarball),
      ],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
    );
    installLog = `${install.stdout}\n${install.stderr}`;
    bin = join(prefix, 'bin', 'svc-review');
  }, 300_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs on this Node with no package refusing it (no EBADENGINE warning)', () => {
    const refused = installLog.split('\n').filter((line) => line.includes('EBADENGINE'));
    expect(refused).toEqual([]);
  });

  it('reviews a repository in another folder with the installed svc-review command', async () => {
    expect((await run(bin, ['--version'])).stdout.trim()).toBe(VERSION);

    const repo = makeRepo(makeReposDir(), 'me/app', { 'src/index.ts': 'export const x = 1;\n' });
    gitIn(repo, ['checkout', '-q', '-b', 'work']);
    commitFiles(repo, {
      'src/handler.ts':
        'export function handle(req: { body: { code: string } }) {\n  return eval(req.body.code);\n}\n',
    });
    const result = await run(bin, ['review', '--format', 'json'], { cwd: repo }).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    // Exit 1: a P0 is open, found by the rules shipped in the package.
    expect(result.code).toBe(1);
    const review = JSON.parse(result.stdout) as { findings: { rule: string; path: string }[] };
    expect(review.findings.map((f) => [f.rule, f.path])).toEqual([
      ['security/code-injection', 'src/handler.ts'],
    ]);
  }, 60_000);
});
