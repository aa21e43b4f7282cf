/**
 * The `diagnostic` task kind: does exactly what its input says, so tests and benchmarks drive
 * the engine through a real kind. Not reachable through the public API.
 */
import { z } from 'zod';
import { RUN_FAILURE_CODES, RunFailure, type RunFailureCode } from '../core/failures';
import { newId } from '../storage/ids';
import { runMessages } from '../storage/schema';
import type { RunContext, TaskHandler } from './types';

export const diagnosticInput = z.object({
  /** Work for this long, reporting progress as it goes. */
  sleep_ms: z.number().int().min(0).optional(),
  /** Fail with this class (a RunFailure) after sleeping. */
  fail_with: z.enum(RUN_FAILURE_CODES as [RunFailureCode, ...RunFailureCode[]]).optional(),
  /** Stop reporting progress and never return, ignoring the abort signal. */
  hang: z.boolean().optional(),
  /** Throw a plain Error with this message (not a RunFailure). */
  throw: z.string().optional(),
  /**
   * Write one transcript row per execution without the lease guard, so a test can count how
   * often the run was really executed (exactly-once proofs).
   */
  record: z.boolean().optional(),
  /** Progress interval while sleeping; default 100 ms. */
  progress_every_ms: z.number().int().min(1).optional(),
});

export type DiagnosticInput = z.infer<typeof diagnosticInput>;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export const diagnosticHandler: TaskHandler = async (ctx: RunContext) => {
  const input = diagnosticInput.parse(ctx.run.input);
  const startedAt = Date.now();
  if (input.record) {
    // Deliberately unguarded (see `record`): a duplicate execution must leave a trace.
    await ctx.db.orm.insert(runMessages).values({
      id: newId('message'),
      runId: ctx.run.id,
      taskId: ctx.run.taskId,
      role: 'tool',
      content: 'diagnostic executed',
      data: { pid: process.pid },
    });
  }
  ctx.setBackend({ harness: 'diagnostic', provider: null, model: null, preset: 'diagnostic' });
  await ctx.progress({
    phase: 'working',
    statusText: 'diagnostic run started',
    currentStep: 'start',
    pct: 0,
  });

  if (input.hang) {
    // Never settles and ignores the signal: the engine must end the run on its own.
    await new Promise<never>(() => {});
  }

  const total = input.sleep_ms ?? 0;
  const every = input.progress_every_ms ?? 100;
  let slept = 0;
  while (slept < total) {
    const step = Math.min(every, total - slept);
    await sleep(step, ctx.signal);
    slept += step;
    await ctx.progress({ currentStep: 'sleep', pct: Math.floor((slept / total) * 100) });
  }

  if (input.throw !== undefined) throw new Error(input.throw);
  if (input.fail_with)
    throw new RunFailure(input.fail_with, `diagnostic run failed with ${input.fail_with} as asked`);

  await ctx.message('assistant', `diagnostic run slept ${slept} ms`);
  return { ok: true, slept_ms: slept, pid: process.pid, elapsed_ms: Date.now() - startedAt };
};
