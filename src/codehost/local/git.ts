/**
 * Runs the git CLI without a shell (arguments are never interpolated into a command line). Two
 * failures are named for what they are, as CodeHostErrors, rather than as whatever git's absence
 * or a hung git would otherwise look like (an unreadable repository, a missing ref): git not
 * installed (`tool_missing`), and a call past SVC_GIT_TIMEOUT_MS (`timeout`; default 10 minutes),
 * which kills it. Every call, read or write, runs with the repository's executable configuration
 * neutralised (git-safety.ts): nothing svc runs git for executes a program a repository names.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { CodeHostError } from '../types';
import { CONFIG_KEYS_LISTING, driverOverrides, mayStartDriver, neutralArgv, neutralEnv } from './git-safety';

const run = promisify(execFile);

/** The longest one git call may take by default (SVC_GIT_TIMEOUT_MS overrides it). */
export const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;

function gitTimeoutMs(): number {
  const raw = process.env.SVC_GIT_TIMEOUT_MS?.trim();
  const ms = raw ? Number(raw) : DEFAULT_GIT_TIMEOUT_MS;
  return Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_GIT_TIMEOUT_MS;
}

/**
 * A spawn failure or kill as the named CodeHostError it is, or null. ENOENT is also what a
 * missing working directory gives, so git counts as missing only when the directory is there.
 */
function namedFailure(
  error: unknown,
  cwd: string,
  args: string[],
  timeoutMs: number,
  timedOut: boolean,
): CodeHostError | null {
  const e = error as NodeJS.ErrnoException | null;
  if (e?.code === 'ENOENT' && e.syscall === 'spawn git' && existsSync(cwd)) {
    return new CodeHostError(
      `git is not installed or not on the PATH of svc (PATH=${process.env.PATH ?? ''}); install git where the worker runs`,
      'tool_missing',
      { cause: error },
    );
  }
  if (timedOut) {
    return new CodeHostError(
      `git ${args[0] ?? ''} did not finish within ${timeoutMs} ms and was stopped (SVC_GIT_TIMEOUT_MS)`,
      'timeout',
      { cause: error },
    );
  }
  return null;
}

/**
 * How svc runs `args` in `cwd`: the neutral argv and environment of git-safety.ts (nothing the
 * repository configured is executed), plus, for a call that could start a filter, diff or merge
 * driver, overrides for every driver the repository's config names, read just before. `extra`
 * adds to the environment (an identity for a commit, a temporary index).
 */
async function invocation(
  cwd: string,
  args: string[],
  extra?: NodeJS.ProcessEnv,
): Promise<{ argv: string[]; env: NodeJS.ProcessEnv }> {
  const argv = neutralArgv(args);
  if (!mayStartDriver(args)) return { argv, env: neutralEnv(extra) };
  const listing = (await gitBuffer(cwd, CONFIG_KEYS_LISTING)).toString('utf8');
  return { argv, env: neutralEnv(extra, driverOverrides(listing)) };
}

export async function git(cwd: string, args: string[], maxBuffer = 256 * 1024 * 1024): Promise<string> {
  const timeout = gitTimeoutMs();
  // Our own timer, not execFile's `timeout`: a git killed by that can come back as a success
  // with empty output, while an aborted signal is always known here.
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), timeout);
  try {
    const { argv, env } = await invocation(cwd, args);
    const { stdout } = await run('git', argv, {
      cwd,
      maxBuffer,
      encoding: 'utf8',
      env,
      signal: limit.signal,
      killSignal: 'SIGKILL',
    });
    if (limit.signal.aborted) throw namedFailure(null, cwd, args, timeout, true);
    return stdout;
  } catch (error) {
    throw namedFailure(error, cwd, args, timeout, limit.signal.aborted) ?? error;
  } finally {
    clearTimeout(timer);
  }
}

/** Like `git`, but null instead of a rejection when git exits non-zero (git missing or hung still throws). */
export async function gitOrNull(cwd: string, args: string[]): Promise<string | null> {
  return git(cwd, args).catch((error: unknown) => {
    if (error instanceof CodeHostError) throw error;
    return null;
  });
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
export async function gitStream(
  cwd: string,
  args: string[],
  onChunk: (chunk: Buffer) => void,
  input?: string | Buffer,
  env?: NodeJS.ProcessEnv,
): Promise<{ stderr: string }> {
  const timeoutMs = gitTimeoutMs();
  const { argv, env: fullEnv } = await invocation(cwd, args, env);
  return new Promise((resolve, reject) => {
    const child = spawn('git', argv, { cwd, env: fullEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    const stderr: Buffer[] = [];
    let failed: unknown = null;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
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
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(namedFailure(error, cwd, args, timeoutMs, false) ?? error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const text = Buffer.concat(stderr).toString('utf8');
      if (timedOut) reject(namedFailure(null, cwd, args, timeoutMs, true));
      else if (failed) reject(failed);
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
