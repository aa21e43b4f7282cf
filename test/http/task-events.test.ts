/**
 * `GET /tasks/{id}/events` against a real server on both storage engines, read the way a client
 * reads it: node's fetch on the socket, the body parsed as Server-Sent Events. A real worker runs
 * the task — on PostgreSQL over its own connection pool, as a worker process would — so the
 * stream only sees what reaches the database. Checked: the order of the events and their ids,
 * the end of the stream with the run's end, a resume with Last-Event-ID (nothing twice, nothing
 * missing), the JSON page, tenancy, and that closing the server ends open streams.
 */
import { get, type IncomingMessage } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine';
import { comparePositions, decodePosition, type EventPosition } from '../../src/engine/run-events';
import { Worker } from '../../src/engine/worker';
import type { Database } from '../../src/storage/database';
import { openDatabase } from '../../src/storage/database';
import { FAST, silent } from '../engine/helpers';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { DATABASE_KINDS } from '../helpers/db';
import { eventually, openStreams } from '../helpers/event-streams';
import { makeRepo, makeReposDir } from '../helpers/git';

interface Received {
  id: string;
  event: string;
  record: { id: string; event: string; data: Record<string, unknown> };
}

/**
 * Reads an event stream until it ends, or until `stopAfter` events arrived (then the client
 * leaves, as a dropped connection would).
 */
async function readStream(
  url: string,
  headers: Record<string, string>,
  stopAfter = Number.POSITIVE_INFINITY,
  onEvent: (count: number) => void = () => {},
): Promise<{
  status: number;
  contentType: string | null;
  events: Received[];
  ended: boolean;
  comments: string[];
}> {
  const leave = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: leave.signal,
  });
  const events: Received[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) =>
      onEvent(
        events.push({ id: message.id ?? '', event: message.event ?? '', record: JSON.parse(message.data) }),
      ),
    onComment: (comment) => comments.push(comment.trim()),
  });
  const result = {
    status: response.status,
    contentType: response.headers.get('content-type'),
    events,
    comments,
  };
  if (!response.body || response.status !== 200) return { ...result, ended: true };
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { ...result, ended: true };
    parser.feed(decoder.decode(value, { stream: true }));
    if (events.length >= stopAfter) {
      leave.abort();
      await reader.cancel().catch(() => {});
      return { ...result, events: events.slice(0, stopAfter), ended: false };
    }
  }
}

const positionOf = (id: string) => {
  const position = decodePosition(id);
  if (!position) throw new Error(`event id ${id} does not decode`);
  return position;
};

function expectIncreasing(ids: readonly string[]) {
  for (let i = 1; i < ids.length; i++) {
    const [before, after] = [positionOf(ids[i - 1] as string), positionOf(ids[i] as string)];
    expect(
      comparePositions(before as EventPosition, after as EventPosition),
      `${ids[i - 1]} < ${ids[i]}`,
    ).toBe(-1);
  }
}

/** Events stored for good: status changes and messages (progress is a snapshot, sent when it moved). */
const durable = (events: readonly Received[]) => events.filter((e) => e.event !== 'progress');

describe.each(DATABASE_KINDS)('task events on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let projectA: string;
  let pinnedB: string;
  let workerDb: Database | null = null;
  let worker: Worker;
  let reposDir: string;

  beforeAll(async () => {
    reposDir = makeReposDir();
    for (const name of ['events-a', 'events-b'])
      makeRepo(reposDir, `acme/${name}`, { 'a.ts': 'export {};\n' });
    t = await createTestApp({ kind, reposDir });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    projectA = await createProject(t, 'acme/events-a');
    const projectB = await createProject(t, 'acme/events-b');
    const key = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'pinned to b', kind: 'project', project_id: projectB },
    });
    pinnedB = key.json().secret;
    // On PostgreSQL the worker has a connection pool of its own, as a worker process has.
    let engine = t.services.engine;
    if (t.databaseUrl) {
      workerDb = await openDatabase({ databaseUrl: t.databaseUrl });
      engine = new Engine(workerDb, FAST, {}, silent);
    }
    worker = new Worker(engine, { sweeper: false });
    await worker.start();
  });
  afterAll(async () => {
    await worker?.drain(0);
    await workerDb?.close();
    await t?.close();
  });

  const headersA = () => ({ ...bearer(t.workspaceKey), 'project-id': projectA });
  const eventsUrl = (taskId: string, query = '') => `${base}/api/v1/tasks/${taskId}/events${query}`;
  const diagnostic = async (input: Record<string, unknown>) =>
    (
      await t.services.engine.createTask({
        workspaceId: t.workspaceId,
        projectId: projectA,
        kind: 'diagnostic',
        title: 'events',
        input,
      })
    ).task.id;

  it('streams a run from queued to its end, in order, then closes', async () => {
    const taskId = await diagnostic({ sleep_ms: 200, progress_every_ms: 40 });
    const read = await readStream(eventsUrl(taskId), headersA());
    expect(read.status).toBe(200);
    expect(read.contentType).toMatch(/^text\/event-stream/);
    expect(read.ended).toBe(true);

    const ids = read.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expectIncreasing(ids);
    for (const e of read.events)
      expect(e.record).toMatchObject({ object: 'run_event', id: e.id, event: e.event });

    const statuses = read.events.filter((e) => e.event === 'status').map((e) => e.record.data.status);
    expect(statuses).toEqual(['pending', 'running', 'completed']);
    expect(read.events[0]?.record.data.status).toBe('pending');
    expect(read.events.at(-1)?.record.data).toMatchObject({ status: 'completed', error: null });
    const messages = read.events.filter((e) => e.event === 'message').map((e) => e.record.data);
    expect(messages.map((m) => m.role)).toEqual(['assistant', 'note']);
    expect(messages[1]?.content).toMatch(/^Run completed/);
    // Progress comes only while the run works: after it was claimed, before it ended.
    const kinds = read.events.map((e) => e.event);
    const firstProgress = kinds.indexOf('progress');
    if (firstProgress >= 0) expect(firstProgress).toBeGreaterThan(statuses.indexOf('running'));
    expect(kinds.lastIndexOf('progress')).toBeLessThan(kinds.length - 1);
  });

  it('resumes after Last-Event-ID with exactly the events missed', async () => {
    const taskId = await diagnostic({ sleep_ms: 300, progress_every_ms: 30 });
    const first = await readStream(eventsUrl(taskId), headersA(), 2);
    expect(first.ended).toBe(false);
    expect(first.events.map((e) => e.record.data.status)).toEqual(['pending', 'running']);
    const lastSeen = first.events.at(-1)?.id as string;

    const rest = await readStream(eventsUrl(taskId), { ...headersA(), 'last-event-id': lastSeen });
    expect(rest.ended).toBe(true);
    const resumed = [...first.events, ...rest.events];
    const ids = resumed.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expectIncreasing(ids);

    // Read again from the start once the run ended: the stored history the two parts must add up to.
    const replay = await readStream(eventsUrl(taskId), headersA());
    expect(durable(resumed).map((e) => e.record)).toEqual(durable(replay.events).map((e) => e.record));
    expect(replay.events.at(-1)?.record.data.status).toBe('completed');
  });

  it('answers the events as one JSON page without a stream, paged by `after`', async () => {
    const taskId = await diagnostic({});
    const stream = await readStream(eventsUrl(taskId), headersA());
    const all = durable(stream.events).map((e) => e.record);

    const whole = await fetch(eventsUrl(taskId), { headers: headersA() });
    expect(whole.headers.get('content-type')).toMatch(/^application\/json/);
    const page = await whole.json();
    expect(page).toMatchObject({
      object: 'list',
      task_id: taskId,
      final: true,
      last_event_id: all.at(-1)?.id,
    });
    expect(page.data).toEqual(all);

    const firstTwo = await (await fetch(eventsUrl(taskId, '?limit=2'), { headers: headersA() })).json();
    expect(firstTwo).toMatchObject({ final: false, last_event_id: all[1]?.id });
    expect(firstTwo.data).toEqual(all.slice(0, 2));
    const after = await (
      await fetch(eventsUrl(taskId, `?after=${encodeURIComponent(firstTwo.last_event_id)}`), {
        headers: headersA(),
      })
    ).json();
    expect(after).toMatchObject({ final: true });
    expect(after.data).toEqual(all.slice(2));
    // `wait` on a run that already ended answers at once, the same page.
    const waited = await (await fetch(eventsUrl(taskId, '?wait=true'), { headers: headersA() })).json();
    expect(waited.data).toEqual(all);
  });

  it("is another project's task: 404 to its key, stream or not; a made-up event id is 400", async () => {
    const taskId = await diagnostic({});
    const foreign = await readStream(eventsUrl(taskId), bearer(pinnedB));
    expect(foreign.status).toBe(404);
    expect(foreign.events).toEqual([]);
    const json = await fetch(eventsUrl(taskId), { headers: bearer(pinnedB) });
    expect(json.status).toBe(404);
    expect(await json.json()).toMatchObject({ error: { code: 'not_found' } });

    const made = await readStream(eventsUrl(taskId), { ...headersA(), 'last-event-id': 'run-7' });
    expect(made.status).toBe(400);
    const unauthenticated = await readStream(eventsUrl(taskId), {});
    expect(unauthenticated.status).toBe(401);
  });

  it('closes its stream when the client leaves', async () => {
    // Not claimable for an hour: the run stays pending, its stream open until the client leaves.
    const { task } = await t.services.engine.createTask({
      workspaceId: t.workspaceId,
      projectId: projectA,
      kind: 'diagnostic',
      title: 'left',
      input: {},
      availableAt: new Date(Date.now() + 3_600_000),
    });
    const taskId = task.id;
    // A connection of its own (no pooled keep-alive socket): leaving is closing it.
    const response = await new Promise<IncomingMessage>((resolve, reject) =>
      get(
        eventsUrl(taskId),
        { agent: false, headers: { accept: 'text/event-stream', ...headersA() } },
        resolve,
      ).on('error', reject),
    );
    await new Promise((resolve) => response.once('data', resolve));
    expect(await openStreams(t)).toBe(1);
    response.destroy();
    await eventually(async () => (await openStreams(t)) === 0, 'the stream to close');
  });

  it('is described in the OpenAPI document: a JSON page or text/event-stream, resumed with Last-Event-ID', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const operation = doc.paths['/api/v1/tasks/{task_id}/events'].get;
    expect(operation.operationId).toBe('tasks_events');
    const content = operation.responses['200'].content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(content['text/event-stream']['x-svc-event-data'].properties.event.enum).toEqual([
      'status',
      'message',
      'progress',
    ]);
    expect(operation.parameters).toContainEqual({ $ref: '#/components/parameters/LastEventId' });
    expect(doc.components.parameters.LastEventId).toMatchObject({ in: 'header', name: 'Last-Event-ID' });
  });

  it('ends an open stream when the server closes', async () => {
    // A server of its own with no worker: the task's run stays pending and its stream open.
    const own = await createTestApp({ kind, reposDir });
    const ownBase = await own.app.listen({ port: 0, host: '127.0.0.1' });
    const project = await createProject(own, 'acme/events-a');
    const { task } = await own.services.engine.createTask({
      workspaceId: own.workspaceId,
      projectId: project,
      kind: 'diagnostic',
      title: 'open',
      input: {},
    });
    let begun: () => void = () => {};
    const streaming = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const headers = { ...bearer(own.workspaceKey), 'project-id': project };
    const open = readStream(
      `${ownBase}/api/v1/tasks/${task.id}/events`,
      headers,
      Number.POSITIVE_INFINITY,
      () => begun(),
    );
    await streaming;
    await own.close();
    const read = await open;
    expect(read.ended).toBe(true);
    expect(read.events.map((e) => e.record.data.status)).toEqual(['pending']);
  });
});
