/** Runs the git CLI without a shell (arguments are never interpolated into a command line). */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Environment for every git call: stable messages, never a prompt, no optional index locks; `extra`
 * adds to it (an identity for a commit, a temporary index).
 */
const gitEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  LC_ALL: 'C',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  ...extra,
});

export async function git(cwd: string, args: string[], maxBuffer = 256 * 1024 * 1024): Promise<string> {
  const { stdout } = await run('git', args, { cwd, maxBuffer, encoding: 'utf8', env: gitEnv() });
  return stdout;
}

/** Like `git`, but null instead of a rejection when git exits non-zero. */
export async function gitOrNull(cwd: string, args: string[]): Promise<string | null> {
  return git(cwd, args).catch(() => null);
}

/** A git failure with what it said on stderr. */
export class GitFailure extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
    this.name = 'GitFailure';
  }
}

/**
 * Spawns git once and hands stdout to `onChunk` as it arrives (no whole-output buffer); `input`
 * is written to stdin, `env` added to the environment. Resolves with stderr when git exits 0,
 * rejects with GitFailure otherwise.
 */
export function gitStream(
  cwd: string,
  args: string[],
  onChunk: (chunk: Buffer) => void,
  input?: string | Buffer,
  env?: NodeJS.ProcessEnv,
): Promise<{ stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: gitEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    const stderr: Buffer[] = [];
    let failed: unknown = null;
    child.stdout.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        onChunk(chunk);
      } catch (error) {
        failed = error;
        child.kill();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const text = Buffer.concat(stderr).toString('utf8');
      if (failed) reject(failed);
      else if (code === 0) resolve({ stderr: text });
      else reject(new GitFailure(args, code, text));
    });
    // A write after git exited early (EPIPE) surfaces through 'close' with git's own error.
    child.stdin.on('error', () => {});
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/** Runs git and collects stdout as bytes. */
export async function gitBuffer(
  cwd: string,
  args: string[],
  input?: string | Buffer,
  env?: NodeJS.ProcessEnv,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await gitStream(cwd, args, (chunk) => chunks.push(chunk), input, env);
  return Buffer.concat(chunks);
}
