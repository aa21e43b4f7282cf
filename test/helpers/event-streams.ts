/**
 * Helpers for tests of the event streams (GET /tasks/{id}/events): how many streams a server
 * has open, read from its metrics as an operator would, and a bounded wait for a condition.
 */
import type { TestApp } from './app';

/** The streams the server has open, as its metrics say. */
export async function openStreams(t: TestApp): Promise<number> {
  const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(/^svc_event_streams_open (\d+)$/m.exec(metrics)?.[1]);
}

/** Waits until `probe` holds, looking every 25 ms for at most 10 s. */
export async function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}
