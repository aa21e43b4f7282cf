/**
 * One process per embedded data directory: two PGlite instances on one directory silently lose
 * writes. The lock is proper-lockfile's (`<dir>.lock`, kept fresh while held, stale after 15 s);
 * beside it `<dir>.lock-owner` names the holder's pid and host, so a lock left by a process that
 * was killed (`kill -9`, an OOM kill) on this host is taken over at once instead of refusing
 * every restart for 15 s.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import lockfile from 'proper-lockfile';

interface Owner {
  pid: number;
  host: string;
  since: string;
}

const STALE_MS = 15_000;

function readOwner(path: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<Owner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? (owner as Owner) : null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists on this host (one we may not signal still exists). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of `dir` (an existing directory, absolute path) or throws naming the process
 * that holds it.
 * `note` hears of a takeover. Returns the release.
 */
export async function lockDataDir(
  dir: string,
  note: (message: string) => void,
): Promise<() => Promise<void>> {
  const lockPath = `${dir}.lock`;
  const ownerPath = `${dir}.lock-owner`;
  const take = () => lockfile.lock(dir, { lockfilePath: lockPath, stale: STALE_MS, update: STALE_MS / 3 });
  let release: () => Promise<void>;
  try {
    release = await take();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const owner = readOwner(ownerPath);
    if (!owner || owner.host !== hostname() || isAlive(owner.pid)) {
      const holder = owner
        ? `process ${owner.pid} on ${owner.host}, since ${owner.since}`
        : 'another svc process';
      throw new Error(
        `the data directory ${dir} is in use by ${holder} (lock ${lockPath}). Stop that process, or set ` +
          'DATABASE_URL to share a PostgreSQL database between processes.',
        { cause: error },
      );
    }
    note(
      `the data directory ${dir} was locked by process ${owner.pid}, which no longer runs (killed?); taking the lock over`,
    );
    rmSync(lockPath, { recursive: true, force: true });
    release = await take();
  }
  writeFileSync(
    ownerPath,
    JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }),
  );
  return async () => {
    rmSync(ownerPath, { force: true });
    await release();
  };
}
