/**
 * MCP over streamable HTTP at /api/v1/mcp: a client with a key lists the tools and calls them;
 * each call runs through the HTTP pipeline, so errors come back as the REST error envelope
 * with isError. Without a key the endpoint answers 401.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PATH } from '../src/mcp/http';
import { bearer, createTestApp, type TestApp } from './helpers/app';
import { makeRepo, makeReposDir } from './helpers/git';

describe('MCP over streamable HTTP', () => {
  let t: TestApp;
  let url: URL;
  let client: Client;

  const connect = async (headers: Record<string, string>) => {
    const c = new Client({ name: 'mcp-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    return c;
  };
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const textOf = (result: CallToolResult) => {
    const first = result.content[0];
    return first?.type === 'text' ? first.text : '';
  };

  beforeAll(async () => {
    const reposDir = makeReposDir();
    for (const name of ['mcp', 'other', 'mine', 'stdio', 'replayed'])
      makeRepo(reposDir, `acme/${name}`, { 'a.ts': 'export const a = 1;\n' });
    t = await createTestApp({ reposDir });
    url = new URL(`${await t.app.listen({ port: 0, host: '127.0.0.1' })}${MCP_PATH}`);
    client = await connect(bearer(t.workspaceKey));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('answers 401 with the error envelope without a key, and refuses a client without one', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'unauthenticated' } });

    const bad = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer svc_ws_notarealkey',
      },
      body: JSON.stringify(initialize),
    });
    expect(bad.status).toBe(401);

    await expect(connect({})).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('unauthenticated'),
    });
  });

  it('answers 405 to GET and DELETE: the endpoint is stateless', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, {
        method,
        headers: { ...bearer(t.workspaceKey), accept: 'text/event-stream' },
      });
      expect(res.status, method).toBe(405);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    }
  });

  it('lists one tool per operation', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of [
      'tasks_get',
      'reviews_create',
      'projects_create',
      'swarms_list',
      'skills_revision',
      'scorecards_get',
      'scorecards_list',
      'scorecards_compute',
      'scorecards_append_event',
      'scorecards_events',
      'checks_get',
      'checks_list',
      'scorecard_levels_get',
      'scorecard_levels_list',
      'quick_actions_get',
      'quick_actions_list',
      'quick_actions_run',
    ]) {
      expect(names).toContain(name);
    }
    const reviewsCreate = tools.find((tool) => tool.name === 'reviews_create');
    expect(Object.keys(reviewsCreate?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['project_id', 'pr', 'base', 'head', 'reviewers', 'delivery']),
    );
  });

  it('executes calls through the HTTP pipeline: create, read, not found, invalid', async () => {
    const created = await call('projects_create', {
      name: 'mcp',
      repository: { full_name: 'acme/mcp', installation_id: 1 },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
    const projectId = (created.structuredContent as { project: { id: string } }).project.id;
    expect(JSON.parse(textOf(created))).toEqual(created.structuredContent);

    const project = await call('projects_get', { project_id: projectId });
    expect(project.isError, textOf(project)).toBeFalsy();
    expect(project.structuredContent).toMatchObject({ id: projectId });

    const missing = await call('tasks_get', { project_id: projectId, task_id: 'tsk_doesnotexist' });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    expect(JSON.parse(textOf(missing)).error.code).toBe('not_found');

    // Errors name the tool's arguments: an MCP client sends no headers and no query string.
    const noProject = await call('tasks_get', { task_id: 'tsk_x' });
    expect(noProject.structuredContent).toMatchObject({
      error: {
        code: 'project_required',
        message: 'this operation is project-scoped; pass the `project_id` argument',
      },
    });

    const invalid = await call('reviews_create', { project_id: projectId, delivery: 'email' });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toMatchObject({
      error: { code: 'validation_failed', message: expect.stringMatching(/^invalid argument `delivery`: /) },
    });
    const badLimit = await call('findings_list', { project_id: projectId, limit: 100000 });
    const limitError = (
      badLimit.structuredContent as { error: { message: string; details: { issues: unknown[] } } }
    ).error;
    expect(limitError.message).toMatch(/^invalid argument `limit`: /);
    expect(limitError.message).not.toMatch(/querystring/);
    expect(limitError.details.issues).toEqual([expect.objectContaining({ argument: 'limit' })]);
  });

  it('passes idempotency_key as the Idempotency-Key header: a repeated call replays the first answer', async () => {
    const args = {
      name: 'replayed',
      repository: { full_name: 'acme/replayed', installation_id: 1 },
      idempotency_key: 'mcp-replay-1',
    };
    const first = await call('projects_create', args);
    expect(first.isError, textOf(first)).toBeFalsy();
    const again = await call('projects_create', args);
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    const changed = await call('projects_create', { ...args, name: 'changed' });
    expect(changed.structuredContent).toMatchObject({ error: { code: 'idempotency_conflict' } });
  });

  it('executes calls as the key that called: a pinned key does not see another project', async () => {
    const other = await call('projects_create', {
      name: 'other',
      repository: { full_name: 'acme/other', installation_id: 1 },
    });
    expect(other.isError, textOf(other)).toBeFalsy();
    const otherId = (other.structuredContent as { project: { id: string } }).project.id;
    const mine = await call('projects_create', {
      name: 'mine',
      repository: { full_name: 'acme/mine', installation_id: 1 },
    });
    const mineId = (mine.structuredContent as { project: { id: string } }).project.id;
    const key = await call('keys_create', { name: 'pinned', kind: 'project', project_id: mineId });
    expect(key.isError, textOf(key)).toBeFalsy();
    const pinned = await connect(bearer((key.structuredContent as { secret: string }).secret));
    try {
      const seen = (await pinned.callTool({
        name: 'projects_get',
        arguments: { project_id: otherId },
      })) as CallToolResult;
      expect(seen.isError).toBe(true);
      expect(seen.structuredContent).toMatchObject({ error: { code: 'not_found' } });
      const own = (await pinned.callTool({
        name: 'projects_get',
        arguments: { project_id: mineId },
      })) as CallToolResult;
      expect(own.isError, textOf(own)).toBeFalsy();
    } finally {
      await pinned.close();
    }
  });

  it('serves the same tools over stdio (svc mcp), forwarding each call to the running svc', async () => {
    const stdio = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['bin/svc.mjs', 'mcp', '--url', url.origin],
        env: { ...(process.env as Record<string, string>), SVC_API_KEY: t.workspaceKey },
        stderr: 'pipe',
      }),
    );
    try {
      const overHttp = (await client.listTools()).tools.map((tool) => tool.name).sort();
      const overStdio = (await stdio.listTools()).tools.map((tool) => tool.name).sort();
      expect(overStdio).toEqual(overHttp);

      const created = (await stdio.callTool({
        name: 'projects_create',
        arguments: { name: 'stdio', repository: { full_name: 'acme/stdio', installation_id: 1 } },
      })) as CallToolResult;
      expect(created.isError, textOf(created)).toBeFalsy();
      const projectId = (created.structuredContent as { project: { id: string } }).project.id;
      const missing = (await stdio.callTool({
        name: 'tasks_get',
        arguments: { project_id: projectId, task_id: 'tsk_doesnotexist' },
      })) as CallToolResult;
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await stdio.close();
    }
  });
});
