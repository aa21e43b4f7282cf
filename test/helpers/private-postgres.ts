/**
 * A PostgreSQL cluster of one test's own, for fault tests that stop, restart or crash the server:
 * the machine's shared server (127.0.0.1:5432) serves the other test files running in parallel
 * and must never go down. initdb into a temporary directory, trust authentication, a free TCP
 * port on 127.0.0.1 and the unix socket in the same directory; `cleanup` stops it and removes
 * every file.
 *
 * PostgreSQL refuses to run as root, and the tests run as root here: the binaries are then run as
 * the `postgres` user (`runuser`), in a directory that user owns.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './net';

const run = promisify(execFile);

const PG_ROOT = '/usr/lib/postgresql';
const MISSING =
  'the fault tests need the PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/<version>/bin: ' +
  'install them with `apt-get install postgresql` (Debian/Ubuntu), or set SVC_TEST_PG_BIN to the directory that holds them';

export type StopMode = 'fast' | 'immediate';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** Starts the server and waits until it accepts connections. */
  start(): Promise<void>;
  /** `pg_ctl stop -m <mode>`: `fast` ends every session cleanly, `immediate` is a crash (recovery at the next start). */
  stop(mode?: StopMode): Promise<void>;
  /** Stops (`mode`), stays down for `downMs`, starts again. */
  restart(mode?: StopMode, downMs?: number): Promise<void>;
  /** The server's own log, for a failing test's message. */
  log(): string;
  /** Stops the server (immediately) if it runs and removes its directory. */
  cleanup(): Promise<void>;
}

/** The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl; throws naming the package to install. */
export function postgresBinDir(): string {
  const candidates = process.env.SVC_TEST_PG_BIN
    ? [process.env.SVC_TEST_PG_BIN]
    : existsSync(PG_ROOT)
      ? readdirSync(PG_ROOT)
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => join(PG_ROOT, v, 'bin'))
      : [];
  const found = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
  if (!found) throw new Error(MISSING);
  return found;
}

/** uid and gid of the `postgres` user, to run the server as when this process is root. */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      `running as root, the fault tests run PostgreSQL as the \`postgres\` user, which is missing: ${MISSING}`,
    );
  }
}

/** Creates (initdb) and starts a private cluster. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const pgCommand = async (tool: string, args: string[], timeoutMs = 60_000) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args];
    try {
      await run(file, argv, { cwd: dir, timeout: timeoutMs });
    } catch (error) {
      const e = error as Error & { stderr?: string; stdout?: string };
      throw new Error(`${tool} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`, {
        cause: error,
      });
    }
  };

  await pgCommand('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // fsync off: a test's cluster need not survive a power cut, and a crash (immediate stop) of
  // the server processes alone loses nothing the kernel already has. synchronous_commit stays
  // on: an acknowledged commit must be in the WAL when the server is killed.
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c shared_buffers=32MB',
    '-c max_connections=100',
  ].join(' ');
  let running = false;

  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pgCommand('pg_ctl', ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60', '-o', options]);
      running = true;
    },
    async stop(mode = 'fast') {
      await pgCommand('pg_ctl', ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '60']);
      running = false;
    },
    async restart(mode = 'fast', downMs = 0) {
      await pg.stop(mode);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await pg.start();
    },
    log() {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
    async cleanup() {
      if (running) await pg.stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await pg.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return pg;
}
