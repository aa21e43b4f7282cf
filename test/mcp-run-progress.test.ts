/**
 * MCP tool calls that wait on a run: `tasks_events` with `wait: true` lasts until the task's
 * latest run has ended, sends each event as a progress notification when the call carries a
 * `progressToken`, and answers the events page. Checked against a real server with a real
 * worker, over streamable HTTP (tool calls injected in-process) and through the stdio server's
 * caller (fetch to the server's socket), with the MCP SDK's own client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../src/engine/worker';
import { MCP_PATH } from '../src/mcp/http';
import { createMcpServer } from '../src/mcp/server';
import { fetchCaller } from '../src/mcp/stdio';
import { OPERATIONS } from '../src/operations';
import { bearer, createProject, createTestApp, type TestApp } from './helpers/app';
import { eventually, openStreams } from './helpers/event-streams';
import { makeRepo, makeReposDir } from './helpers/git';

describe('MCP tool calls that wait on a run', () => {
  let t: TestApp;
  let base: string;
  let projectId: string;
  let elsewhere: string;
  let worker: Worker;
  const clients: Client[] = [];

  beforeAll(async () => {
    const reposDir = makeReposDir();
    for (const name of ['progress', 'elsewhere'])
      makeRepo(reposDir, `acme/${name}`, { 'a.ts': 'export {};\n' });
    t = await createTestApp({ reposDir });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    projectId = await createProject(t, 'acme/progress');
    elsewhere = await createProject(t, 'acme/elsewhere');
    worker = new Worker(t.services.engine, { sweeper: false });
    await worker.start();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await worker?.drain(0);
    await t?.close();
  });

  const overHttp = async () => {
    const client = new Client({ name: 'progress-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}${MCP_PATH}`), {
        requestInit: { headers: bearer(t.workspaceKey) },
      }),
    );
    clients.push(client);
    return client;
  };
  /** The stdio server's tools (`svc mcp`), reached in memory rather than through a child's pipes. */
  const throughStdioCaller = async () => {
    const server = createMcpServer(OPERATIONS, fetchCaller(base, t.workspaceKey));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'progress-test', version: '1.0.0' });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };

  const diagnostic = async () =>
    (
      await t.services.engine.createTask({
        workspaceId: t.workspaceId,
        projectId,
        kind: 'diagnostic',
        title: 'progress',
        input: { sleep_ms: 200, progress_every_ms: 40 },
      })
    ).task.id;

  async function waitWithProgress(client: Client, args: Record<string, unknown>) {
    const heard: Progress[] = [];
    const result = (await client.callTool({ name: 'tasks_events', arguments: args }, undefined, {
      onprogress: (progress) => heard.push(progress),
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
    return { result, heard };
  }

  for (const [transport, connect] of [
    ['streamable HTTP', overHttp],
    ['the stdio caller', throughStdioCaller],
  ] as const) {
    it(`over ${transport}: hears each event of the run as progress, then answers the page`, async () => {
      const client = await connect();
      const taskId = await diagnostic();
      const { result, heard } = await waitWithProgress(client, {
        task_id: taskId,
        project_id: projectId,
        wait: 'true',
      });
      expect(result.isError ?? false).toBe(false);
      const page = result.structuredContent as {
        final: boolean;
        data: { event: string; data: { status?: string } }[];
      };
      expect(page.final).toBe(true);
      const statuses = page.data.filter((e) => e.event === 'status').map((e) => e.data.status);
      expect(statuses).toEqual(['pending', 'running', 'completed']);

      // One notification per streamed event, in order: at least every status change and message.
      const durable = page.data.filter((e) => e.event !== 'progress').length;
      expect(heard.length).toBeGreaterThanOrEqual(durable);
      for (let i = 1; i < heard.length; i++)
        expect(heard[i]?.progress).toBeGreaterThan(heard[i - 1]?.progress as number);
      expect(heard[0]?.message).toMatch(/ pending$/);
      expect(heard.at(-1)?.message).toMatch(/ completed$/);
      expect(heard.some((p) => /assistant: diagnostic run slept/.test(p.message ?? ''))).toBe(true);
    });
  }

  /** A task whose run stays pending (not claimable for an hour): its stream stays open. */
  const pendingTask = async () =>
    (
      await t.services.engine.createTask({
        workspaceId: t.workspaceId,
        projectId,
        kind: 'diagnostic',
        title: 'pending',
        input: {},
        availableAt: new Date(Date.now() + 3_600_000),
      })
    ).task.id;
  const waitOn = (client: Client, taskId: string, signal?: AbortSignal) =>
    client.callTool(
      { name: 'tasks_events', arguments: { task_id: taskId, project_id: projectId, wait: 'true' } },
      undefined,
      signal ? { signal } : {},
    );

  it('over streamable HTTP: a client that goes away closes the stream its call was following', async () => {
    // Stateless HTTP has no way to reach a call but its connection: closing the client closes it.
    const client = await overHttp();
    const call = waitOn(client, await pendingTask());
    await eventually(async () => (await openStreams(t)) === 1, 'the call to follow the stream');
    await client.close();
    await expect(call).rejects.toThrow();
    await eventually(async () => (await openStreams(t)) === 0, 'the stream to close');
  });

  it('through the stdio caller: a canceled call closes the stream it was following', async () => {
    const client = await throughStdioCaller();
    const cancel = new AbortController();
    const call = waitOn(client, await pendingTask(), cancel.signal);
    await eventually(async () => (await openStreams(t)) === 1, 'the call to follow the stream');
    cancel.abort();
    await expect(call).rejects.toThrow();
    await eventually(async () => (await openStreams(t)) === 0, 'the stream to close');
  });

  it('waits all the same without a progressToken, and answers what a read answers', async () => {
    const client = await overHttp();
    const taskId = await diagnostic();
    const waited = (await client.callTool({
      name: 'tasks_events',
      arguments: { task_id: taskId, project_id: projectId, wait: 'true' },
    })) as CallToolResult;
    expect(waited.structuredContent).toMatchObject({ final: true });
    const read = (await client.callTool({
      name: 'tasks_events',
      arguments: { task_id: taskId, project_id: projectId },
    })) as CallToolResult;
    expect(waited.structuredContent).toEqual(read.structuredContent);
  });

  it("answers another project's task as not found, with no progress", async () => {
    const { task } = await t.services.engine.createTask({
      workspaceId: t.workspaceId,
      projectId: elsewhere,
      kind: 'diagnostic',
      title: 'elsewhere',
      input: {},
    });
    const client = await overHttp();
    const { result, heard } = await waitWithProgress(client, {
      task_id: task.id,
      project_id: projectId,
      wait: 'true',
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.structuredContent)).toContain('not_found');
    expect(heard).toEqual([]);
  });
});
