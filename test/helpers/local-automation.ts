/**
 * The pull request automation over the local code host, as the local flow tests start it: a test
 * app serving `reposDir`, a worker, a project for acme/api with its request headers, the local
 * host and the automation's dependencies.
 */
import type { AutomationDeps } from '../../src/automation/triggers';
import type { LocalCodeHost } from '../../src/codehost/local/local-host';
import { Worker } from '../../src/engine/worker';
import { bearer, createProject, createTestApp, type TestApp } from './app';

export interface LocalAutomation {
  t: TestApp;
  worker: Worker;
  headers: Record<string, string>;
  host: LocalCodeHost;
  deps: AutomationDeps;
}

export async function startLocalAutomation(reposDir: string): Promise<LocalAutomation> {
  const t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
  const worker = new Worker(t.services.engine, { concurrency: 2 });
  await worker.start();
  const headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/api') };
  const host = t.services.codeHosts.forInstallation(1) as LocalCodeHost;
  const deps = { db: t.services.db, engine: t.services.engine, codeHosts: t.services.codeHosts };
  return { t, worker, headers, host, deps };
}
