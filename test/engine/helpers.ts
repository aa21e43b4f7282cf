/**
 * Engine test fixtures: a fresh migrated database (both kinds, from test/helpers/db.ts), a
 * workspace and project to hang runs on, fast limits, and polling helpers.
 */
import pino from 'pino';
import { Engine } from '../../src/engine/engine';
import type { EngineLimits, RunRow } from '../../src/engine/types';
import { newId } from '../../src/storage/ids';
import { projects, workspaces } from '../../src/storage/schema';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from '../helpers/db';

export const silent = pino({ level: 'silent' });

/** Short leases and timers so the engine's behaviour shows within a second or two. */
export const FAST: EngineLimits = {
  leaseMs: 800,
  heartbeatMs: 150,
  livenessMs: 10_000,
  pickupTimeoutMs: 60_000,
  wallClockMs: 20_000,
  maxReplacements: 2,
  pollMs: 100,
  shutdownGraceMs: 500,
};

export interface Fixture {
  tdb: TestDatabase;
  engine: Engine;
  workspaceId: string;
  projectId: string;
  /** Another engine over the same database with different limits. */
  engineWith(limits: Partial<EngineLimits>): Engine;
  /** A new project with these stored settings. */
  project(settings?: unknown): Promise<string>;
  close(): Promise<void>;
}

export async function fixture(kind: DatabaseKind, limits: Partial<EngineLimits> = {}): Promise<Fixture> {
  const tdb = await createTestDatabase(kind);
  const db = tdb.db;
  const workspaceId = newId('workspace');
  await db.orm.insert(workspaces).values({ id: workspaceId, name: 'test' });
  const project = async (settings: unknown = {}) => {
    const id = newId('project');
    await db.orm.insert(projects).values({
      id,
      workspaceId,
      name: id,
      repoFullName: 'acme/widgets',
      installationId: 1,
      settings: settings as Record<string, unknown>,
    });
    return id;
  };
  const projectId = await project();
  const engineWith = (l: Partial<EngineLimits>) => new Engine(db, { ...FAST, ...limits, ...l }, {}, silent);
  return {
    tdb,
    engine: engineWith({}),
    workspaceId,
    projectId,
    engineWith,
    project,
    close: () => tdb.close(),
  };
}

export async function waitFor<T>(
  probe: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the task's latest run (or the given run) is terminal and returns it. */
export async function settled(engine: Engine, runId: string, timeoutMs = 15_000): Promise<RunRow> {
  return waitFor(
    async () => {
      const run = await engine.getRun(runId);
      return run && run.terminalEventCount === 1 ? run : null;
    },
    `run ${runId} to end`,
    timeoutMs,
  );
}
