/**
 * Real `svc` processes for the process and fault tests: started from the compiled build (bin/svc.mjs), their
 * output kept for a failing test's message, and killed at the end whatever happened.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SvcProcesses {
  /** Starts `svc <args>` with the test's environment on top of this process's. */
  start(args: string[], env: Record<string, string>): ChildProcess;
  alive(child: ChildProcess): boolean;
  /** Every process started, in order. */
  all(): readonly ChildProcess[];
  /** What the process wrote to stdout and stderr so far. */
  output(child: ChildProcess): string;
  /** Resolves once the process has exited. */
  exited(child: ChildProcess): Promise<void>;
  /** The last lines of every process's output, for a failure message. */
  tails(chars?: number): string;
  /** SIGKILLs every process still running and waits for them. */
  killAll(): Promise<void>;
}

export function svcProcesses(): SvcProcesses {
  const children: ChildProcess[] = [];
  const logs = new Map<ChildProcess, string>();
  const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;
  const exited = (c: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (!alive(c)) resolve();
      else c.once('exit', () => resolve());
    });
  return {
    start(args, env) {
      const child = spawn(process.execPath, ['bin/svc.mjs', ...args], {
        env: { ...process.env, LOG_LEVEL: process.env.SVC_FAULT_LOG_LEVEL ?? 'warn', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      logs.set(child, '');
      const append = (b: Buffer) => logs.set(child, (logs.get(child) ?? '') + b.toString());
      child.stdout?.on('data', append);
      child.stderr?.on('data', append);
      children.push(child);
      return child;
    },
    alive,
    all: () => children,
    output: (c) => logs.get(c) ?? '',
    exited,
    tails(chars = 1_500) {
      // The whole output goes to a file: a failure's tail rarely holds the line that explains it.
      const file = join(tmpdir(), `svc-fault-logs-${process.pid}-${Date.now()}.log`);
      writeFileSync(
        file,
        children
          .map((c) => `--- ${c.spawnargs.slice(2).join(' ')} (pid ${c.pid})\n${logs.get(c) ?? ''}`)
          .join('\n'),
      );
      return `(every process's whole output: ${file})\n${children
        .map(
          (c) =>
            `--- ${c.spawnargs.slice(2).join(' ')} (pid ${c.pid}, ${alive(c) ? 'alive' : `exited ${c.exitCode ?? c.signalCode}`})\n${(logs.get(c) ?? '').slice(-chars)}`,
        )
        .join('\n')}`;
    },
    async killAll() {
      for (const c of children) if (alive(c)) c.kill('SIGKILL');
      await Promise.all(children.map(exited));
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something truthy; a probe that throws is a "not yet". */
export async function eventually<T>(
  probe: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs: number,
  explain: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? ` (last error: ${last.message})` : '';
      throw new Error(`timed out waiting for ${what}${why}\n${explain()}`);
    }
    await sleep(100);
  }
}

/** One answer of the API, as the fault tests judge it. */
export interface Answered {
  status: number;
  body: unknown;
  retryAfter: string | null;
}

/** A small HTTP client for one svc: JSON in, JSON out, with a timeout so a hung request fails. */
export function apiClient(baseUrl: () => string, key: string) {
  return async function call(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Answered> {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
  };
}

/** Whether `body` is the error envelope `{error:{code,message,request_id}}`. */
export function isEnvelope(body: unknown): body is { error: { code: string; message: string } } {
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  return (
    !!error &&
    typeof error.code === 'string' &&
    typeof error.message === 'string' &&
    typeof error.request_id === 'string'
  );
}
