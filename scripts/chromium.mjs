#!/usr/bin/env node
// Finds the Chromium the browser tests and `npm run screenshots` drive, and installs Debian's
// `chromium` package when it is missing and this process may install it (root, apt-get present).
//
//   node scripts/chromium.mjs            prints the executable path (installing it if it can),
//                                        or why there is none (exit 1)
//
// The executable is `SVC_CHROMIUM` when set, else `/usr/bin/chromium`. `SVC_CHROMIUM_INSTALL=0`
// turns the install off. Installing runs `apt-get update && apt-get install -y chromium` once:
// a lock file in the temporary directory makes parallel test workers wait for the first one
// instead of running apt twice, and a failed install is remembered for an hour, so every test file
// after it skips with the same reason instead of trying again.
import { execFileSync, spawn } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/** The flags every launch uses: no sandbox (root, containers), no GPU, no background traffic. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];

const LOCK_FILE = join(tmpdir(), 'svc-chromium-install.lock');
const FAILED_FILE = join(tmpdir(), 'svc-chromium-install.failed');
const FAILURE_MEMORY_MS = 60 * 60 * 1000;
const INSTALL_TIMEOUT_MS = 20 * 60 * 1000;

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function onPath(command) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => isExecutable(join(dir, command)));
}

/** The version line Chromium prints (`Chromium 156.0.8078.79 built on Debian …`), or null. */
export function chromiumVersion(path) {
  try {
    return execFileSync(path, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 30_000 })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the install lock, or returns false when a live process holds it. A dead holder's lock is taken over. */
function tryLock() {
  try {
    const fd = openSync(LOCK_FILE, 'wx');
    writeFileSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  let holder = Number.NaN;
  try {
    holder = Number(readFileSync(LOCK_FILE, 'utf8').trim());
  } catch {
    // Removed between our open and read: try again.
    return tryLock();
  }
  if (Number.isInteger(holder) && holder > 0 && pidAlive(holder)) return false;
  rmSync(LOCK_FILE, { force: true });
  return tryLock();
}

function recentFailure() {
  try {
    if (Date.now() - statSync(FAILED_FILE).mtimeMs > FAILURE_MEMORY_MS) return null;
    return readFileSync(FAILED_FILE, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function runLogged(command, args, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let tail = '';
    const keep = (chunk) => {
      tail = (tail + chunk).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGTERM'), INSTALL_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new Error(`${command} ${args.join(' ')} exited ${code ?? signal}: ${tail.trim().slice(-500)}`),
        );
    });
    log(`svc: running ${command} ${args.join(' ')}`);
  });
}

async function install(path, log) {
  // Another worker may be installing right now: wait for it rather than running apt twice.
  while (!tryLock()) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  try {
    if (isExecutable(path)) return null;
    const failed = recentFailure();
    if (failed) return failed;
    log('svc: Chromium is not installed; installing Debian’s chromium package (once, a few minutes)');
    try {
      await runLogged('apt-get', ['update'], log);
      await runLogged('apt-get', ['install', '-y', 'chromium'], log);
    } catch (error) {
      const reason = `installing chromium with apt-get failed: ${error.message}`;
      writeFileSync(FAILED_FILE, reason);
      return reason;
    }
    if (!isExecutable(path)) {
      const reason = `apt-get installed chromium but ${path} is not there`;
      writeFileSync(FAILED_FILE, reason);
      return reason;
    }
    rmSync(FAILED_FILE, { force: true });
    return null;
  } finally {
    rmSync(LOCK_FILE, { force: true });
  }
}

/**
 * The Chromium to launch: `{ path, version }`, installing Debian's package first when it is
 * missing and that is possible; otherwise `{ reason }`, a sentence saying why there is none and
 * how to get one.
 *
 * @param {{ install?: boolean, log?: (line: string) => void }} [options]
 * @returns {Promise<{ path: string, version: string | null } | { reason: string }>}
 */
export async function findChromium(options = {}) {
  const log = options.log ?? ((line) => console.error(line));
  const explicit = process.env.SVC_CHROMIUM;
  const path = explicit || DEFAULT_CHROMIUM;
  if (isExecutable(path)) return { path, version: chromiumVersion(path) };
  if (explicit) return { reason: `SVC_CHROMIUM=${explicit} is not an executable file` };

  const allowed = options.install ?? process.env.SVC_CHROMIUM_INSTALL !== '0';
  const manual = 'install it with `apt-get install chromium` (or set SVC_CHROMIUM to a Chromium executable)';
  if (!allowed) return { reason: `${path} is missing and SVC_CHROMIUM_INSTALL=0; ${manual}` };
  if (process.platform !== 'linux') return { reason: `${path} is missing (not Linux); ${manual}` };
  if (process.getuid?.() !== 0)
    return { reason: `${path} is missing and this process is not root; ${manual}` };
  if (!onPath('apt-get')) return { reason: `${path} is missing and apt-get is not available; ${manual}` };

  const failure = await install(path, log);
  if (failure) return { reason: failure };
  return { path, version: chromiumVersion(path) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const found = await findChromium();
  if ('path' in found) {
    console.log(found.path);
    if (found.version) console.error(found.version);
  } else {
    console.error(`svc: no Chromium: ${found.reason}`);
    process.exitCode = 1;
  }
}
