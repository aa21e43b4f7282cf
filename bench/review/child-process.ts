/**
 * Runs bench/review/child.ts's `runChild` in a Node process of its own and returns its result:
 * one engine, one service, one process, as an operator runs svc. The review and analysis benches
 * both use it, so no measured service shares a heap, a thread pool or a garbage collector with
 * the bench that drives it or with another engine measured before it.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ChildInput, type ChildResult, runChild } from './child';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SELF = fileURLToPath(import.meta.url);
const CHILD_FLAG = '--bench-child';

export interface SpawnOptions {
  /** Write a V8 CPU profile of the child to this folder. */
  cpuProfileDir?: string | undefined;
}

export function runChildProcess(input: ChildInput, options: SpawnOptions = {}): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const nodeArgs = options.cpuProfileDir
      ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir, '--cpu-prof-interval', '500']
      : [];
    const child = spawn(
      process.execPath,
      [...nodeArgs, join(ROOT, 'bin', 'run-ts.mjs'), SELF, CHILD_FLAG, JSON.stringify(input)],
      // The child's stderr passes through: trace lines (SVC_TRACE_*) and crashes are seen as they come.
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      const line = out.trim().split('\n').at(-1);
      if (code !== 0 || !line?.startsWith('{')) {
        reject(
          new Error(
            `the ${input.engine} child exited ${code ?? signal}${out.trim() ? `: ${out.trim()}` : ''}`,
          ),
        );
        return;
      }
      resolve(JSON.parse(line) as ChildResult);
    });
  });
}

// The child's side: run the one review, print its result as the last line of stdout.
if (process.argv[1] === SELF && process.argv[2] === CHILD_FLAG) {
  const input = JSON.parse(process.argv[3] ?? '{}') as ChildInput;
  try {
    const result = await runChild(input);
    process.stdout.write(`\n${JSON.stringify(result)}\n`);
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  }
}
