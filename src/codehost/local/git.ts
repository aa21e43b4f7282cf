/** Runs the git CLI without a shell (arguments are never interpolated into a command line). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function git(cwd: string, args: string[], maxBuffer = 256 * 1024 * 1024): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    maxBuffer,
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
  });
  return stdout;
}
