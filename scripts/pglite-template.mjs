// The embedded database's first data directory, made once at build time instead of at every
// first start: PGlite's initdb (PostgreSQL's bootstrap under WebAssembly) takes ~5 s on a small
// machine, unpacking its result takes well under one. `svc` unpacks this into a new data
// directory (src/storage/pglite.ts) when it was made by the PGlite version installed now, and
// falls back to initdb otherwise.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const TEMPLATE_FILE = 'pglite-template.tar.gz';
const VERSION_FILE = 'pglite-template.json';

/** The installed PGlite's version: a template is only good for the version that made it. */
export async function pgliteVersion(root) {
  const entry = createRequire(join(root, 'package.json')).resolve('@electric-sql/pglite');
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = await readFile(join(dir, 'package.json'), 'utf8').catch(() => null);
    if (manifest && JSON.parse(manifest).name === '@electric-sql/pglite') return JSON.parse(manifest).version;
  }
  throw new Error('@electric-sql/pglite has no package.json above its entry point');
}

async function templateVersion(dir) {
  const text = await readFile(join(dir, VERSION_FILE), 'utf8').catch(() => null);
  return text ? JSON.parse(text).pglite : null;
}

/**
 * Puts a template for the installed PGlite into `outDir`: the one in `previousDir` (the build
 * being replaced) when it was made by this version, else a new one (initdb in a child process).
 */
export async function ensurePgliteTemplate(root, outDir, previousDir) {
  const version = await pgliteVersion(root);
  if (previousDir && (await templateVersion(previousDir)) === version) {
    await copyFile(join(previousDir, TEMPLATE_FILE), join(outDir, TEMPLATE_FILE));
    await copyFile(join(previousDir, VERSION_FILE), join(outDir, VERSION_FILE));
    return false;
  }
  const scratch = await mkdtemp(join(tmpdir(), 'svc-pglite-template-'));
  try {
    const data = join(scratch, 'data');
    await mkdir(data);
    await run(process.execPath, [join(root, 'src', 'storage', 'pglite-init.mjs'), data], {
      timeout: 300_000,
    });
    // System tar: the unpacking side (svc) uses it too, and Debian and the image both have it.
    await run('tar', ['-czf', join(outDir, TEMPLATE_FILE), '-C', data, '.']);
    await writeFile(join(outDir, VERSION_FILE), JSON.stringify({ pglite: version }));
    return true;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
