/**
 * What an MCP client is offered: id arguments named `<resource>_id` with the old names still
 * accepted, required arguments marked (`project_id` for a key that is not pinned), and a subset of
 * the tools by profile or area, over streamable HTTP and over stdio (`svc mcp`).
 */
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MCP_PATH } from '../src/mcp/http';
import { areaOf, PROFILES, selectTools } from '../src/mcp/tool-subsets';
import { OPERATIONS } from '../src/operations';
import { toolInputSchema } from '../src/operations/registry';
import { bearer, createTestApp, type TestApp } from './helpers/app';
import { makeRepo, makeReposDir } from './helpers/git';

const jsonSchemaOf = (tool: string, projectPinned = false) => {
  const op = OPERATIONS.find((o) => o.tool === tool);
  if (!op) throw new Error(`no tool ${tool}`);
  return z.toJSONSchema(toolInputSchema(op, { projectPinned }), { io: 'input', unrepresentable: 'any' }) as {
    properties: Record<string, unknown>;
    required?: string[];
  };
};

describe('tool arguments', () => {
  it('names every id argument <resource>_id: no tool takes a bare `id`', () => {
    for (const op of OPERATIONS) {
      const names = Object.keys(jsonSchemaOf(op.tool).properties);
      expect(names, op.tool).not.toContain('id');
      expect(names, op.tool).not.toContain('revision_id');
    }
    expect(jsonSchemaOf('findings_get').required).toEqual(['project_id', 'finding_id']);
    expect(jsonSchemaOf('pull_requests_check').required).toEqual(['project_id', 'pull_request_id']);
    expect(jsonSchemaOf('skills_revision').required).toEqual(['project_id', 'skill_revision_id']);
    expect(jsonSchemaOf('reviewers_create').required).toEqual(
      expect.arrayContaining(['project_id', 'reviewer_id', 'name', 'instructions']),
    );
    // Already named so in the spec: unchanged.
    expect(jsonSchemaOf('tasks_status').required).toEqual(['project_id', 'task_id']);
    expect(jsonSchemaOf('reviews_get').required).toEqual(['project_id', 'review_id']);
  });

  it('marks project_id required on every project-scoped tool, unless the key is pinned to a project', () => {
    for (const op of OPERATIONS) {
      const required = jsonSchemaOf(op.tool).required ?? [];
      expect(required.includes('project_id'), op.tool).toBe(op.scope === 'project');
      if (op.scope === 'project' && !op.path.includes('{project_id}'))
        expect(jsonSchemaOf(op.tool, true).required ?? [], op.tool).not.toContain('project_id');
    }
  });
});

describe('tool subsets', () => {
  it('puts every tool in an area and every profile item names an area or a tool', () => {
    const areas = new Set(OPERATIONS.map(areaOf));
    const tools = new Set(OPERATIONS.map((op) => op.tool));
    for (const [profile, items] of Object.entries(PROFILES))
      for (const item of items) expect(areas.has(item) || tools.has(item), `${profile}: ${item}`).toBe(true);
    expect(selectTools(OPERATIONS, { profile: 'all' })).toHaveLength(OPERATIONS.length);
    expect(selectTools(OPERATIONS, {})).toHaveLength(OPERATIONS.length);
    expect(selectTools(OPERATIONS, { tools: ['skills'] }).map((op) => op.tool)).toEqual([
      'skills_import',
      'skills_revision',
    ]);
  });

  it('refuses an unknown profile or area, naming the known ones', () => {
    expect(() => selectTools(OPERATIONS, { profile: 'reviewer' })).toThrow(
      /unknown tool profile "reviewer"; profiles: reviewer-agent, admin, all/,
    );
    expect(() => selectTools(OPERATIONS, { tools: ['reviews', 'finding'] })).toThrow(
      /unknown tool area or tool name\(s\): finding; areas: .*findings/,
    );
  });
});

describe('MCP tool naming and subsets over HTTP and stdio', () => {
  let t: TestApp;
  let base: string;
  let projectId: string;
  const clients: Client[] = [];

  const connect = async (query: string, key = t.workspaceKey) => {
    const client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}${MCP_PATH}${query}`), {
        requestInit: { headers: bearer(key) },
      }),
    );
    clients.push(client);
    return client;
  };
  const errorOf = (result: CallToolResult) =>
    (result.structuredContent as { error: { code: string; message: string; details?: unknown } }).error;

  beforeAll(async () => {
    const reposDir = makeReposDir();
    makeRepo(reposDir, 'acme/tools', { 'a.ts': 'export const a = 1;\n' });
    t = await createTestApp({ reposDir });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/projects',
      headers: bearer(t.workspaceKey),
      payload: { name: 'tools', repository: { full_name: 'acme/tools', installation_id: 1 } },
    });
    projectId = created.json().project.id;
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await t?.close();
  });

  it('takes `finding_id`, still takes the deprecated `id`, and names `finding_id` in its errors', async () => {
    const client = await connect('');
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;

    const byNewName = await call('findings_get', { project_id: projectId, finding_id: 'fnd_missing' });
    expect(errorOf(byNewName)).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('fnd_missing'),
    });
    const byAlias = await call('findings_get', { project_id: projectId, id: 'fnd_missing' });
    expect(errorOf(byAlias)).toMatchObject({ code: 'not_found', message: errorOf(byNewName).message });

    const both = await call('findings_get', { project_id: projectId, finding_id: 'fnd_a', id: 'fnd_b' });
    expect(errorOf(both)).toMatchObject({
      code: 'validation_failed',
      message: 'findings_get: pass `finding_id` only (`id` is its deprecated alias)',
    });
    const missing = await call('findings_get', { project_id: projectId });
    expect(errorOf(missing).message).toBe('findings_get: missing required argument(s): finding_id');

    // A body field renamed: the new reviewer's `id` is `reviewer_id`, in its errors too.
    const badSlug = await call('reviewers_create', {
      project_id: projectId,
      reviewer_id: 'Not A Slug!',
      name: 'Style',
      instructions: 'Look for style problems.',
    });
    expect(errorOf(badSlug)).toMatchObject({
      code: 'validation_failed',
      message: expect.stringMatching(/^invalid argument `reviewer_id`: /),
      details: { issues: [expect.objectContaining({ argument: 'reviewer_id' })] },
    });
    const reviewer = await call('reviewers_create', {
      project_id: projectId,
      reviewer_id: 'tools-style',
      name: 'Style',
      instructions: 'Look for style problems.',
    });
    expect(reviewer.isError, JSON.stringify(reviewer.structuredContent)).toBeFalsy();
    expect(reviewer.structuredContent).toMatchObject({ id: 'tools-style' });
    const read = await call('reviewers_get', { project_id: projectId, reviewer_id: 'tools-style' });
    expect(read.structuredContent).toMatchObject({ id: 'tools-style' });
  });

  it('marks project_id required for a workspace key and optional for a pinned key', async () => {
    const workspace = await connect('?tools=findings');
    const listed = (await workspace.listTools()).tools.find((tool) => tool.name === 'findings_list');
    expect(listed?.inputSchema.required).toContain('project_id');

    const key = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(t.workspaceKey),
      payload: { name: 'pinned', kind: 'project', project_id: projectId },
    });
    const pinned = await connect('?tools=findings', key.json().secret);
    const pinnedList = (await pinned.listTools()).tools.find((tool) => tool.name === 'findings_list');
    expect(pinnedList?.inputSchema.required ?? []).not.toContain('project_id');
    const own = (await pinned.callTool({ name: 'findings_list', arguments: {} })) as CallToolResult;
    expect(own.isError, JSON.stringify(own.structuredContent)).toBeFalsy();
  });

  it('lists only the tools of a profile or of the areas asked for, and runs no other', async () => {
    const agent = await connect('?profile=reviewer-agent');
    const names = (await agent.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(
      selectTools(OPERATIONS, { profile: 'reviewer-agent' })
        .map((op) => op.tool)
        .sort(),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'pull_requests_check',
        'findings_list',
        'findings_append_event',
        'reviews_create',
        'tasks_status',
      ]),
    );
    expect(names).not.toContain('keys_create');
    const outside = (await agent.callTool({ name: 'keys_list', arguments: {} })) as CallToolResult;
    expect(outside.isError).toBe(true);

    const areas = await connect('?tools=reviews,findings&tools=pull_requests_check');
    const areaNames = (await areas.listTools()).tools.map((tool) => tool.name);
    expect(new Set(areaNames)).toEqual(
      new Set(
        OPERATIONS.filter((op) => ['reviews', 'findings'].includes(areaOf(op)))
          .map((op) => op.tool)
          .concat('pull_requests_check'),
      ),
    );
  });

  it('serves the same subsets in the tool catalog (GET /api/v1/tools), without a key', async () => {
    const agent = await t.app.inject({ method: 'GET', url: '/api/v1/tools?profile=reviewer-agent' });
    expect(agent.statusCode).toBe(200);
    const names = (agent.json().tools as { name: string }[]).map((tool) => tool.name).sort();
    expect(names).toEqual(
      selectTools(OPERATIONS, { profile: 'reviewer-agent' })
        .map((op) => op.tool)
        .sort(),
    );
    const whole = await t.app.inject({ method: 'GET', url: '/api/v1/tools' });
    expect(agent.json().contract_hash).toBe(whole.json().contract_hash);
    expect(whole.json().tools).toHaveLength(OPERATIONS.length);
    const unknown = await t.app.inject({ method: 'GET', url: '/api/v1/tools?tools=finding' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringMatching(/unknown tool area or tool name\(s\): finding; areas: /),
    });
  });

  it('answers 400 validation_failed to an unknown profile or area', async () => {
    for (const query of ['?profile=reviewer', '?tools=reviews,nonsense']) {
      const res = await fetch(`${base}${MCP_PATH}${query}`, {
        method: 'POST',
        headers: {
          ...bearer(t.workspaceKey),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        }),
      });
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('validation_failed');
      expect(body.error.message).toMatch(/profiles: reviewer-agent|areas: /);
    }
  });

  it('serves a profile over stdio (svc mcp --profile) and refuses an unknown one with exit 2', async () => {
    const stdio = new Client({ name: 'mcp-tools-stdio', version: '1.0.0' });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['bin/svc.mjs', 'mcp', '--url', base, '--profile', 'reviewer-agent'],
        env: { ...(process.env as Record<string, string>), SVC_API_KEY: t.workspaceKey },
        stderr: 'pipe',
      }),
    );
    clients.push(stdio);
    const overStdio = (await stdio.listTools()).tools.map((tool) => tool.name).sort();
    const agent = await connect('?profile=reviewer-agent');
    expect(overStdio).toEqual((await agent.listTools()).tools.map((tool) => tool.name).sort());

    const refused = spawnSync(
      process.execPath,
      ['bin/svc.mjs', 'mcp', '--url', base, '--tools', 'nonsense'],
      {
        env: { ...process.env, SVC_API_KEY: t.workspaceKey },
        input: '',
        encoding: 'utf8',
      },
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/svc mcp: unknown tool area or tool name\(s\): nonsense; areas: /);
  });
});
