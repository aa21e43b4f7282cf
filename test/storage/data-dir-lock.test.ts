/**
 * The embedded data directory's lock: a live holder is refused by name; a holder killed with
 * SIGKILL (its lock still fresh) is recognised as gone and its lock taken over at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src/storage/data-dir-lock';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A separate process that takes the lock as svc does and holds it until killed. */
async function holder(dir: string): Promise<ChildProcess> {
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(new URL('../../src/storage/data-dir-lock.ts', import.meta.url).href)});
    await lockDataDir(${JSON.stringify(dir)}, () => {});
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited ${code}`)));
  });
  return child;
}

describe('data directory lock', () => {
  it('refuses while the holder lives, naming it; takes the lock over at once when it was killed', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'svc-lock-')), 'data');
    mkdirSync(dir);
    const child = await holder(dir);
    const notes: string[] = [];
    await expect(lockDataDir(dir, (m) => notes.push(m))).rejects.toThrow(
      new RegExp(`in use by process ${child.pid} on `),
    );

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const started = Date.now();
    const release = await lockDataDir(dir, (m) => notes.push(m));
    // Well inside the 15 s after which proper-lockfile would call the lock stale by itself.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(notes).toEqual([
      expect.stringMatching(new RegExp(`locked by process ${child.pid}, which no longer runs`)),
    ]);
    expect(JSON.parse(readFileSync(`${dir}.lock-owner`, 'utf8')).pid).toBe(process.pid);

    await release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
    expect(existsSync(`${dir}.lock-owner`)).toBe(false);
  });
});
