/**
 * The tasks operations against a real engine (PGlite): every answer parses with its declared
 * response schema, foreign tasks are `not_found`, and a failed run's transcript note names the
 * code and its remedy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors';
import { RUN_FAILURE_REMEDY } from '../../src/core/failures';
import { Worker } from '../../src/engine/worker';
import type { Operation, OperationContext } from '../../src/operations/registry';
import type { Services } from '../../src/operations/services';
import { operations } from '../../src/operations/tasks';
import { type Fixture, fixture, settled } from './helpers';

const op = (tool: string) => {
  const found = operations.find((o) => o.tool === tool);
  if (!found) throw new Error(`no operation ${tool}`);
  return found;
};

describe('tasks operations', () => {
  let f: Fixture;
  let worker: Worker;

  beforeAll(async () => {
    f = await fixture('pglite');
    worker = new Worker(f.engine, { sweeper: false });
    await worker.start();
  });
  afterAll(async () => {
    await worker.drain(0);
    await f.close();
  });

  function ctx(projectId = f.projectId): OperationContext {
    return {
      services: { engine: f.engine, db: f.tdb.db } as unknown as Services,
      principal: { keyId: 'key_t', kind: 'workspace', workspaceId: f.workspaceId, pinnedProjectId: null },
      workspaceId: f.workspaceId,
      projectId,
      requestId: 'req_test',
      headers: {},
      setHeader: () => {},
      setStatus: () => {},
    };
  }

  /** Calls the handler the way the HTTP layer would: inputs parsed, output checked against the schema. */
  async function call(
    o: Operation,
    params: Record<string, unknown>,
    query: Record<string, unknown> = {},
    c = ctx(),
  ) {
    const out = await o.handler(
      {
        params: o.params ? o.params.parse(params) : {},
        query: o.query ? o.query.parse(query) : {},
        body: undefined,
      },
      c,
    );
    return o.response.parse(out);
  }

  const diagnostic = (input: Record<string, unknown>) =>
    f.engine.createTask({
      workspaceId: f.workspaceId,
      projectId: f.projectId,
      kind: 'diagnostic',
      title: 'op',
      input,
    });

  it('tasks_get inlines the latest run receipt; tasks_status has the whole status block', async () => {
    const { task, run } = await diagnostic({ sleep_ms: 10 });
    await settled(f.engine, run.id);
    const record = await call(op('tasks_get'), { task_id: task.id });
    expect(record).toMatchObject({ object: 'task', id: task.id, run: { id: run.id, status: 'completed' } });
    const block = await call(op('tasks_status'), { task_id: task.id }, { include: 'cost' });
    expect(block).toMatchObject({
      status: 'completed',
      terminal_event_count: 1,
      cost_usd: null,
      usage_line_items: [],
    });
    for (const field of [
      'state',
      'phase',
      'status_text',
      'current_step',
      'progress_pct',
      'error_json',
      'warnings',
      'retry',
      'lifecycle',
      'row_clock',
      'runner_clock',
      'queue_ahead',
      'backend',
      'limits',
      'timeouts',
      'harness',
      'seed_graph',
      'skills',
      'usage_json',
      'live',
      'live_warning',
      'sweep',
      'callback',
    ]) {
      expect(block).toHaveProperty(field);
    }
    const without = await call(op('tasks_status'), { task_id: task.id }, { run_id: run.id });
    expect(without).not.toHaveProperty('usage_line_items');
  });

  it('tasks_messages: a failed run ends with a note naming the code and its remedy', async () => {
    const { task, run } = await diagnostic({ fail_with: 'tool_failed' });
    await settled(f.engine, run.id);
    const transcript = await call(op('tasks_messages'), { task_id: task.id });
    const note = transcript.data.at(-1);
    expect(note?.role).toBe('note');
    expect(note?.content).toContain('tool_failed');
    expect(note?.content).toContain(RUN_FAILURE_REMEDY.tool_failed);
    const block = await call(op('tasks_status'), { task_id: task.id });
    expect(block.error_json).toMatchObject({ code: 'tool_failed', run_id: run.id });
  });

  it('tasks_runs pages newest first; tasks_cancel cancels the active run', async () => {
    await worker.drain(0);
    const { task, run } = await diagnostic({});
    await f.engine.startRun(task.id);
    const first = await call(op('tasks_runs'), { task_id: task.id }, { limit: 1 });
    expect(first.data).toHaveLength(1);
    expect(first.next_cursor).not.toBeNull();
    const second = await call(
      op('tasks_runs'),
      { task_id: task.id },
      { limit: 1, cursor: first.next_cursor },
    );
    expect(second.data[0]?.id).toBe(run.id);
    expect(second.next_cursor).toBeNull();
    const canceled = await call(op('tasks_cancel'), { task_id: task.id });
    expect(canceled.run?.status).toBe('canceled');
    worker = new Worker(f.engine, { sweeper: false });
    await worker.start();
  });

  it('a task of another project is not_found', async () => {
    const { task } = await diagnostic({});
    const other = await f.project();
    await expect(call(op('tasks_get'), { task_id: task.id }, {}, ctx(other))).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(call(op('tasks_get'), { task_id: 'tsk_nope' })).rejects.toBeInstanceOf(ApiError);
    await f.engine.cancel(task.id);
  });
});
