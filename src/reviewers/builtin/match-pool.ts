/**
 * The main thread's side of the analysis threads (./match-thread.ts): sends a file's matching to
 * a thread and gives back what it found. The server's event loop then only passes messages, so
 * /healthz and API reads are answered while a review analyses its largest files.
 *
 * Each thread takes one file at a time; a file whose run is aborted stops at once: its thread is
 * terminated (a native search cannot be interrupted otherwise) and a new one is started when next
 * needed. A thread idle for IDLE_MS ends, so its kept parses do not hold memory between reviews.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { MatchReply, MatchRequest } from './match-thread';

/**
 * Threads at most: one core stays for the main thread (and the embedded database, which runs on
 * it); four, as many as the files the engine has in flight.
 */
const THREADS = Math.max(1, Math.min(4, availableParallelism() - 1));
const IDLE_MS = 15_000;

/**
 * The thread checks a file's budget between its steps, but one native search is a single step
 * (a superlinear rule over a long block ran 197 s). So the pool also stops a file whose thread
 * has held it for twice its budget plus HARD_STOP_SLACK_MS, by ending the thread: the file is a
 * `file_analysis_budget` gap like any other over its budget. Twice, because the budget counts
 * the file's own work and the thread runs at a lower priority than the server on a busy machine.
 */
export const hardStop = {
  /** Added to twice the budget; tests set 0 to see the stop without a slow rule. */
  slackMs: 2_000,
  afterMs(budgetMs: number): number {
    return 2 * budgetMs + this.slackMs;
  },
};

type Job = {
  request: Omit<MatchRequest, 'id'>;
  signal: AbortSignal;
  resolve: (reply: MatchReply) => void;
  reject: (error: unknown) => void;
  /** Set while a thread holds the job and it has a budget: ends the thread at the hard stop. */
  stopTimer?: NodeJS.Timeout;
};

interface Thread {
  worker: Worker;
  job: (Job & { id: number; onAbort: () => void }) | null;
  /** Contents parsed there lately (language and length: a hint only; the thread compares contents). */
  recent: string[];
  idle: NodeJS.Timeout | null;
}

const threads = new Set<Thread>();
const queue: Job[] = [];
let nextId = 1;

/**
 * The analysis thread's nice value: analysis is background work, and on a machine with few cores
 * the thread answering HTTP (and the database's processes) must get the CPU first. On Linux a
 * priority set for pid 0 is the calling thread's alone (elsewhere it would be the whole process's,
 * so it is left alone there).
 */
export const ANALYSIS_NICE = 10;

/**
 * How the thread is started: a small boot script that first lowers the thread's priority, so that
 * loading the analysis modules (seconds of CPU when tsx compiles them from the sources) already
 * yields to the server, then loads the thread's module: from dist/ the built one; from the sources
 * (tests, benchmarks, through tsx or vitest) after registering tsx's loader.
 */
function startWorker(): Worker {
  const here = import.meta.url;
  // setPriority may be refused (a sandbox): the thread then runs at the process's priority.
  const lowerPriority = `if (process.platform === 'linux') { try { require('node:os').setPriority(${ANALYSIS_NICE}); } catch {} }`;
  const load = here.endsWith('.ts')
    ? `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./match-thread.ts', here).href)}); });`
    : `import(${JSON.stringify(new URL('./reviewers/builtin/match-thread.js', distRoot(here)).href)});`;
  return new Worker(`${lowerPriority}\n${load}`, { eval: true });
}

/** dist/ from a module bundled anywhere under it (esbuild puts split chunks at its root). */
function distRoot(moduleUrl: string): URL {
  const path = new URL(moduleUrl).pathname;
  const at = path.lastIndexOf('/dist/');
  return new URL(at >= 0 ? `file://${path.slice(0, at + '/dist/'.length)}` : './', moduleUrl);
}

const hint = (request: Omit<MatchRequest, 'id'>) => `${request.language}:${request.content.length}`;

function spawn(): Thread {
  const thread: Thread = { worker: startWorker(), job: null, recent: [], idle: null };
  thread.worker.on('message', (reply: MatchReply) => settle(thread, (job) => job.resolve(reply)));
  thread.worker.on('error', (error) => {
    retire(thread);
    settle(thread, (job) => job.reject(error));
  });
  thread.worker.on('exit', (code) => {
    if (!threads.has(thread)) return;
    retire(thread);
    settle(thread, (job) => job.reject(new Error(`the analysis thread exited (code ${code})`)));
  });
  threads.add(thread);
  return thread;
}

function retire(thread: Thread) {
  threads.delete(thread);
  if (thread.idle) clearTimeout(thread.idle);
  void thread.worker.terminate();
}

/** Ends the thread's job with `outcome` and gives it the next one. */
function settle(thread: Thread, outcome: (job: Job) => void) {
  const job = thread.job;
  if (!job) return;
  thread.job = null;
  if (job.stopTimer) clearTimeout(job.stopTimer);
  job.signal.removeEventListener('abort', job.onAbort);
  outcome(job);
  if (threads.has(thread)) {
    // Between jobs the thread keeps no one waiting: the process may exit without ending it.
    thread.worker.unref();
    thread.idle = setTimeout(() => retire(thread), IDLE_MS).unref();
  }
  pump();
}

function assign(thread: Thread, job: Job) {
  if (thread.idle) clearTimeout(thread.idle);
  thread.idle = null;
  const id = nextId++;
  const onAbort = () => {
    // The native search under way cannot be interrupted: the thread goes, and the job with it.
    retire(thread);
    settle(thread, (j) => j.reject(j.signal.reason));
  };
  const { budgetMs } = job.request;
  const stopTimer =
    budgetMs === undefined
      ? undefined
      : setTimeout(() => {
          const spentMs = performance.now() - startedAt;
          retire(thread);
          settle(thread, (j) =>
            j.resolve({ id, found: [], keys: [], gaps: [], budget: { spentMs, budgetMs } }),
          );
        }, hardStop.afterMs(budgetMs));
  const startedAt = performance.now();
  thread.job = { ...job, id, onAbort, ...(stopTimer ? { stopTimer } : {}) };
  job.signal.addEventListener('abort', onAbort, { once: true });
  thread.recent = [hint(job.request), ...thread.recent.filter((h) => h !== hint(job.request))].slice(0, 4);
  thread.worker.ref();
  thread.worker.postMessage({ ...job.request, id } satisfies MatchRequest);
}

/** Hands queued jobs to idle threads, the one that parsed the same content lately first. */
function pump() {
  while (queue.length > 0) {
    const job = queue[0] as Job;
    const idle = [...threads].filter((t) => t.job === null);
    const thread =
      idle.find((t) => t.recent.includes(hint(job.request))) ??
      idle[0] ??
      (threads.size < THREADS ? spawn() : null);
    if (!thread) return;
    queue.shift();
    assign(thread, job);
  }
}

/**
 * Parses the file and runs the rules over it in an analysis thread. Rejects with the signal's
 * reason as soon as it aborts, queued or running.
 */
export function matchInThread(request: Omit<MatchRequest, 'id'>, signal: AbortSignal): Promise<MatchReply> {
  return new Promise<MatchReply>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const job: Job = { request, signal, resolve, reject };
    const dequeue = () => {
      const at = queue.indexOf(job);
      if (at < 0) return;
      queue.splice(at, 1);
      reject(signal.reason);
    };
    signal.addEventListener('abort', dequeue, { once: true });
    const resolveOnce = job.resolve;
    job.resolve = (reply) => {
      signal.removeEventListener('abort', dequeue);
      resolveOnce(reply);
    };
    const rejectOnce = job.reject;
    job.reject = (error) => {
      signal.removeEventListener('abort', dequeue);
      rejectOnce(error);
    };
    queue.push(job);
    pump();
  });
}

/** Analysis threads alive now, and those with a file (tests: an aborted file's thread is gone). */
export function analysisThreads(): { alive: number; busy: number } {
  return { alive: threads.size, busy: [...threads].filter((t) => t.job !== null).length };
}
