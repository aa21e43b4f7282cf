/**
 * A client generated from the served OpenAPI document works: the document is fetched from a
 * listening svc, a TypeScript client is generated from it at test time (swagger-typescript-api,
 * fetch flavour), a small client program is type-checked against it with the TypeScript compiler
 * (so a document that generates broken or loose types fails), and that program drives a real
 * flow through the generated client: a project on a local git repository with its setup task, a
 * review of a local pull request polled to its end, its findings paged with the cursor, a 404 in
 * the error envelope and an idempotent replay.
 *
 * Why not openapi-typescript: it needs the TypeScript 5 compiler API as a peer and svc builds
 * with TypeScript 7; swagger-typescript-api carries its own compiler.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generateApi } from 'swagger-typescript-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/engine/worker';
import { createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';
import { freePort } from '../helpers/net';

const run = promisify(execFile);
const TSC = join(process.cwd(), 'node_modules', '.bin', 'tsc');

/** Three defects the `security` reviewer reports on the lines the pull request adds. */
const UNSAFE = [
  "import crypto from 'node:crypto';",
  'export function run(code) {',
  '  return eval(code);',
  '}',
  'export function hashPassword(password) {',
  "  return crypto.createHash('md5').update(password).digest('hex');",
  '}',
  '',
].join('\n');

/**
 * The client program: only what a user of the generated client would write. It returns what
 * it saw, for the test to judge; the types it leans on are the generated ones.
 */
const FLOW = `
import { Api, type HttpResponse, type Error404 } from './api';

const terminal = ['completed', 'failed', 'canceled'];

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('gave up waiting');
}

export async function flow(baseUrl: string, key: string, repository: string) {
  const client = new Api<string>({
    baseUrl,
    securityWorker: (secret) => (secret ? { headers: { Authorization: 'Bearer ' + secret } } : {}),
  });
  // Public: answered before the client has a key.
  const health = (await client.healthz.serviceHealth()).data;
  client.setSecurityData(key);

  const created = await client.api.projectsCreate({
    name: 'widgets',
    repository: { full_name: repository, installation_id: 1 },
    setup: true,
  });
  const projectId: string = created.data.project.id;
  const inProject = { headers: { 'Project-ID': projectId } };
  const setupTaskId = created.data.setup?.task.id;
  if (!setupTaskId) throw new Error('no setup task');
  const setupTask = await until(
    () => client.api.tasksGet(setupTaskId, inProject),
    (res) => terminal.includes(res.data.run?.status ?? ''),
  );
  const setupStatus = (await client.api.tasksStatus(setupTaskId, {}, inProject)).data;

  const review = { pr: 1, reviewers: ['security'] };
  const once = { headers: { ...inProject.headers, 'Idempotency-Key': 'generated-client-review-1' } };
  const ack = await client.api.reviewsCreate(review, once);
  const replay = await client.api.reviewsCreate(review, once);
  const reviewId: string = ack.data.id;
  const reviewed = await until(
    () => client.api.reviewsGet(reviewId, inProject),
    (res) => terminal.includes(res.data.run?.status ?? ''),
  );

  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await client.api.findingsList({ task_id: reviewId, limit: 1, cursor }, inProject);
    pages.push(page.data.data.map((finding) => finding.id));
    cursor = page.data.next_cursor ?? undefined;
  } while (cursor && pages.length < 50);

  let missing: { status: number; code: string; requestId: string } | null = null;
  try {
    await client.api.reviewsGet('tsk_does_not_exist', inProject);
  } catch (thrown) {
    const res = thrown as HttpResponse<unknown, Error404>;
    missing = { status: res.status, code: res.error.error.code, requestId: res.error.error.request_id };
  }

  return {
    health: health.status,
    projectId,
    setup: { run: setupTask.data.run?.status ?? null, state: setupStatus.state },
    ack: { status: ack.status, id: reviewId, runId: ack.data.run_id },
    replay: { status: replay.status, id: replay.data.id, replayed: replay.headers.get('Idempotent-Replayed') },
    review: {
      run: reviewed.data.run?.status ?? null,
      etag: reviewed.headers.get('ETag'),
      findings: (reviewed.data.findings ?? []).map((finding) => finding.id),
    },
    pages,
    missing,
  };
}
`;

/** A program that misuses the generated types: the compiler must refuse it. */
const MISUSE = `
import { Api } from './api';
const client = new Api();
// A project name is a string, and a review id is not a number.
void client.api.projectsCreate({ name: 1, repository: { full_name: 'a/b', installation_id: 1 } });
void client.api.reviewsGet(7);
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'preserve',
    moduleResolution: 'bundler',
    allowImportingTsExtensions: true,
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    skipLibCheck: false,
  },
};

async function typeCheck(dir: string, entry: string): Promise<{ ok: boolean; output: string }> {
  const project = join(dir, `tsconfig.${entry}.json`);
  writeFileSync(project, JSON.stringify({ ...TSCONFIG, files: [entry] }));
  try {
    await run(TSC, ['-p', project], { cwd: dir });
    return { ok: true, output: '' };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('a client generated from the OpenAPI document', () => {
  let t: TestApp;
  let worker: Worker;
  let baseUrl: string;
  let dir: string;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/widgets', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(repo, 1, { 'src/run.js': UNSAFE }, 'add run');
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 2 });
    await worker.start();
    baseUrl = await t.app.listen({ port: await freePort(), host: '127.0.0.1' });
    // Outside node_modules: the test runner transforms the generated TypeScript it then runs.
    dir = mkdtempSync(join(tmpdir(), 'svc-generated-client-'));
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('generates a client whose types check a client program, and refuse a wrong one', async () => {
    const res = await fetch(`${baseUrl}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const spec = await res.json();
    const generated = await generateApi({
      spec,
      fileName: 'api',
      output: false,
      httpClientType: 'fetch',
      silent: true,
      // The source as generated: formatting it would only cost time.
      customTranslator: class {
        translate(input: { fileName: string; fileExtension: string; fileContent: string }) {
          return [input];
        }
      },
    } as unknown as Parameters<typeof generateApi>[0]);
    const file = generated.files.find((f) => f.fileName === 'api');
    expect(file?.fileContent).toContain('export class Api');
    writeFileSync(join(dir, 'api.ts'), file?.fileContent ?? '');
    writeFileSync(join(dir, 'flow.ts'), FLOW);
    writeFileSync(join(dir, 'misuse.ts'), MISUSE);

    const checked = await typeCheck(dir, 'flow.ts');
    expect(checked.output).toBe('');
    expect(checked.ok).toBe(true);
    const refused = await typeCheck(dir, 'misuse.ts');
    expect(refused.ok).toBe(false);
    expect(refused.output).toMatch(/misuse\.ts\(5,.*TS2322/);
    expect(refused.output).toMatch(/misuse\.ts\(6,.*TS2345/);
  }, 180_000);

  it('drives a real flow through the generated client', async () => {
    const { flow } = (await import(pathToFileURL(join(dir, 'flow.ts')).href)) as {
      flow: (
        baseUrl: string,
        key: string,
        repository: string,
      ) => Promise<{
        health: string;
        projectId: string;
        setup: { run: string | null; state: string };
        ack: { status: number; id: string; runId: string };
        replay: { status: number; id: string; replayed: string | null };
        review: { run: string | null; etag: string | null; findings: string[] };
        pages: string[][];
        missing: { status: number; code: string; requestId: string } | null;
      }>;
    };
    const seen = await flow(baseUrl, t.workspaceKey, 'acme/widgets');

    expect(seen.health).toBe('ok');
    expect(seen.projectId).toMatch(/^prj_/);
    expect(seen.setup).toEqual({ run: 'completed', state: expect.stringMatching(/^succeeded/) });
    expect(seen.ack).toMatchObject({ status: 202, id: expect.stringMatching(/^tsk_/) });
    // The same Idempotency-Key and body: the first answer again, marked as a replay.
    expect(seen.replay).toEqual({ status: 202, id: seen.ack.id, replayed: 'true' });
    expect(seen.review.run).toBe('completed');
    expect(seen.review.etag).toMatch(/^"\d+"$/);
    expect(seen.review.findings.length).toBeGreaterThanOrEqual(2);
    // One finding a page, every finding of the review once, none twice.
    expect(seen.pages.every((page) => page.length === 1)).toBe(true);
    expect(seen.pages.flat().sort()).toEqual([...seen.review.findings].sort());
    expect(seen.missing).toEqual({
      status: 404,
      code: 'not_found',
      requestId: expect.stringMatching(/^req_/),
    });
  }, 180_000);
});
