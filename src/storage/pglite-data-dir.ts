/**
 * A new embedded data directory. Unpacked from the build's template (scripts/pglite-template.mjs)
 * when the installed PGlite made it, which takes well under a second; otherwise made by initdb
 * in a child process (~5 s, and initdb's WebAssembly heap is returned when the child exits).
 * Either way it is made beside the target and renamed into place, so a start killed halfway
 * leaves nothing a later start would take for a database.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { packagePath } from '../core/install-paths';

const run = promisify(execFile);
const TEMPLATE_FILE = 'pglite-template.tar.gz';
const VERSION_FILE = 'pglite-template.json';
const INIT_SCRIPT = packagePath('src', 'storage', 'pglite-init.mjs');

/** How a data directory was made. */
export type DataDirOrigin = 'template' | 'initdb';

/**
 * Makes the database in `dir`, an existing directory this process holds the lock of; it must be
 * empty. `templateDir` holds the template (default: the build, dist/).
 */
export async function createDataDir(dir: string, templateDir = packagePath('dist')): Promise<DataDirOrigin> {
  if (readdirSync(dir).length > 0)
    throw new Error(
      `${dir} is not empty but holds no database (no PG_VERSION): point SVC_DATA_DIR at a new or empty directory`,
    );
  // Staging folders left by starts that were killed: the lock says none of them is in use.
  const parent = dirname(dir);
  const prefix = `${basename(dir)}.creating-`;
  for (const name of readdirSync(parent))
    if (name.startsWith(prefix)) await rm(join(parent, name), { recursive: true, force: true });

  const staging = join(parent, `${prefix}${process.pid}`);
  await mkdir(staging);
  try {
    const origin: DataDirOrigin = (await templateFits(templateDir)) ? 'template' : 'initdb';
    if (origin === 'template') await run('tar', ['-xzf', join(templateDir, TEMPLATE_FILE), '-C', staging]);
    else await initdbInChild(staging);
    await rmdir(dir);
    await rename(staging, dir);
    return origin;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(
      `could not create the embedded database in ${dir}: ${stderr || (error as Error).message}`,
      { cause: error },
    );
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Whether `templateDir` holds a template made by the PGlite installed now. */
async function templateFits(templateDir: string): Promise<boolean> {
  const recorded = await readFile(join(templateDir, VERSION_FILE), 'utf8').then(
    (text) => (JSON.parse(text) as { pglite?: string }).pglite,
    () => undefined,
  );
  return recorded !== undefined && recorded === installedPgliteVersion();
}

function installedPgliteVersion(): string | undefined {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === '@electric-sql/pglite') return manifest.version;
    } catch {
      // No package.json at this level (PGlite's dist/); keep walking up.
    }
  }
  return undefined;
}

async function initdbInChild(dir: string): Promise<void> {
  await run(process.execPath, [INIT_SCRIPT, dir], { timeout: 120_000 });
}
