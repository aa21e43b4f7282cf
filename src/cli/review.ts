/**
 * `svc review`: reviews a local git range end to end on the embedded database (kept in the
 * repository's git dir, so re-runs share one ledger), shows progress on stderr, prints the
 * findings, and exits 1 when a P0 is open.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { and, eq } from 'drizzle-orm';
import pino from 'pino';
import { type Config, loadConfig } from '../config';
import { Worker } from '../engine/worker';
import { createServices } from '../main';
import { formatText } from '../review/format-text';
import { toSarif } from '../review/sarif';
import { createReview, type findingRecord, reviewRecord } from '../review/service';
import { newId } from '../storage/ids';
import { projects } from '../storage/schema';

const exec = promisify(execFile);

export interface ReviewCliOptions {
  repo?: string;
  base?: string;
  head?: string;
  reviewers?: string;
  format?: string;
  output?: string;
  dataDir?: string;
}

/** Exit codes: 0 no open P0, 1 an open P0, 2 usage or input error, 3 the review failed to run. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    return (await exec('git', args, { cwd, maxBuffer: 64 * 1024 * 1024 })).stdout.trim();
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new CliError(`git ${args.join(' ')} failed in ${cwd}: ${stderr || (error as Error).message}`, 2);
  }
}

async function resolveRef(top: string, ref: string, which: string): Promise<string> {
  try {
    return (
      await exec('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: top })
    ).stdout.trim();
  } catch {
    throw new CliError(`--${which} ${ref} does not resolve to a commit in ${top}`, 2);
  }
}

/** Without --base: the merge base with the default branch, or the parent commit when on it. */
async function defaultBase(top: string, headSha: string): Promise<string> {
  for (const candidate of ['origin/HEAD', 'main', 'master']) {
    const base = await exec('git', ['merge-base', candidate, headSha], { cwd: top }).then(
      (r) => r.stdout.trim(),
      () => null,
    );
    if (base && base !== headSha) return base;
  }
  return resolveRef(top, `${headSha}~1`, 'base');
}

export async function reviewCommand(options: ReviewCliOptions): Promise<number> {
  const format = options.format ?? 'text';
  if (!['text', 'json', 'sarif'].includes(format))
    throw new CliError(`--format must be text, json or sarif, not ${format}`, 2);
  const top = await git(resolve(options.repo ?? '.'), ['rev-parse', '--show-toplevel']).catch(() => {
    throw new CliError(`${resolve(options.repo ?? '.')} is not inside a git repository`, 2);
  });
  const headSha = await resolveRef(top, options.head ?? 'HEAD', 'head');
  const baseSha = options.base
    ? await resolveRef(top, options.base, 'base')
    : await defaultBase(top, headSha);
  const gitDir = resolve(top, await git(top, ['rev-parse', '--git-common-dir']));

  // The local code host serves `owner/repo` as DIR/owner/repo: the repository's two last path parts.
  const fullName = `${basename(dirname(top))}/${basename(top)}`;
  const config: Config = loadConfig({
    ...process.env,
    DATABASE_URL: '',
    SVC_DATA_DIR: options.dataDir ?? join(gitDir, 'svc'),
    SVC_REPOS_DIR: dirname(dirname(top)),
    SVC_POLL_MS: '100',
  });
  const { services, workspaceId } = await createServices(config, { logger: pino({ level: 'silent' }) });
  const worker = new Worker(services.engine, { concurrency: 1 });
  try {
    const projectId = await ensureProject(services.db, workspaceId, fullName);
    await worker.start();
    const reviewers = options.reviewers
      ? options.reviewers
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
    const { task } = await createReview(
      { db: services.db, engine: services.engine, codeHosts: services.codeHosts, env: config.env },
      { workspaceId, projectId },
      { base: baseSha, head: headSha, ...(reviewers ? { reviewers } : {}) },
    ).catch((error: Error) => {
      throw new CliError(error.message, 2);
    });
    process.stderr.write(`svc: reviewing ${baseSha.slice(0, 12)}..${headSha.slice(0, 12)} in ${top}\n`);
    const run = await waitWithProgress(services.engine, task.id);
    if (run.status !== 'completed') {
      const error = run.error as { code?: string; message?: string } | null;
      throw new CliError(`review ${run.status}: ${error?.code ?? 'unknown'}: ${error?.message ?? ''}`, 3);
    }
    for (const gap of run.gaps) process.stderr.write(`svc: note: ${gap.code}: ${gap.message}\n`);
    const record = await reviewRecord(
      { db: services.db, engine: services.engine, codeHosts: services.codeHosts, env: config.env },
      await services.engine.getTask(workspaceId, projectId, task.id),
    );
    const found = (record.findings ?? []) as ReturnType<typeof findingRecord>[];
    const rendered =
      format === 'json'
        ? `${JSON.stringify(record, null, 2)}\n`
        : format === 'sarif'
          ? `${JSON.stringify(toSarif(found, { toolVersion: '0.1.0', baseSha, headSha }), null, 2)}\n`
          : formatText(found, { color: process.stdout.isTTY === true && !process.env.NO_COLOR });
    if (options.output) writeFileSync(options.output, rendered);
    else process.stdout.write(rendered);
    if (record.findings_truncated)
      process.stderr.write('svc: more findings than one page; GET the findings collection for all\n');
    return found.some((f) => f.severity === 'P0' && f.status === 'open') ? 1 : 0;
  } finally {
    await worker.stop();
    await services.db.close();
  }
}

async function ensureProject(
  db: Awaited<ReturnType<typeof createServices>>['services']['db'],
  workspaceId: string,
  fullName: string,
) {
  const [existing] = await db.orm
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.workspaceId, workspaceId), eq(projects.repoFullName, fullName)))
    .limit(1);
  if (existing) return existing.id;
  const id = newId('project');
  await db.orm
    .insert(projects)
    .values({ id, workspaceId, name: basename(fullName), repoFullName: fullName, installationId: 1 });
  return id;
}

async function waitWithProgress(
  engine: Awaited<ReturnType<typeof createServices>>['services']['engine'],
  taskId: string,
) {
  let shown = '';
  for (;;) {
    const run = await engine.latestRun(taskId);
    if (!run) throw new CliError(`review ${taskId} has no run`, 3);
    const line = run.statusText ? `${run.progressPct ?? 0}% ${run.statusText}` : run.status;
    if (line !== shown) {
      process.stderr.write(`svc: ${line}\n`);
      shown = line;
    }
    if (run.status === 'completed' || run.status === 'failed' || run.status === 'canceled') return run;
    await new Promise((r) => setTimeout(r, 100));
  }
}
