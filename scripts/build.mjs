#!/usr/bin/env node
// Compiles svc's TypeScript into dist/ with esbuild: one ES module per command (main.ts loads
// each command's modules only when it runs, and splitting keeps that), packages left as imports
// of node_modules, source maps for stack traces. `bin/svc.mjs` runs the result, so starting svc
// needs no TypeScript loader. Files read at run time (migrations, skills, the console) stay
// where they are; src/core/install-paths.ts finds them from dist/ as from src/.
//
// dist/ also holds the embedded database's first data directory (scripts/pglite-template.mjs),
// made again only when the installed PGlite changes.
//
// `--if-stale` (npm start, the test set-up) builds only when a source is newer than the build,
// and a build is written next to dist/ and swapped in, so a `svc` already running from dist/
// (another test run, a server) does not see it half-written.
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ensurePgliteTemplate, TEMPLATE_FILE } from './pglite-template.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
const META = join(DIST, 'meta.json');

/** Newest modification time (ms) of the files under `path`, or of `path` itself. */
async function newest(path) {
  const info = await stat(path).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = 0;
  for (const entry of await readdir(path)) latest = Math.max(latest, await newest(join(path, entry)));
  return latest;
}

/** True when dist/ is missing or older than anything it is built from. */
export async function isStale() {
  const built = await newest(META);
  if (built === 0) return true;
  // A build from before the template existed (or one whose template was deleted).
  if (!(await stat(join(DIST, TEMPLATE_FILE)).catch(() => null))) return true;
  const inputs = [
    'src',
    'package.json',
    'package-lock.json',
    'scripts/build.mjs',
    'scripts/pglite-template.mjs',
  ].map((p) => join(ROOT, p));
  for (const input of inputs) if ((await newest(input)) > built) return true;
  return false;
}

/** Builds dist/ from src/; returns esbuild's metafile, or null when `ifStale` found it current. */
export async function buildSvc({ ifStale = false } = {}) {
  if (ifStale && !(await isStale())) return null;
  const staging = `${DIST}.building-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    // The analysis thread's module is started by path (src/reviewers/builtin/match-pool.ts).
    entryPoints: ['src/cli/main.ts', 'src/reviewers/builtin/match-thread.ts'],
    outdir: staging,
    outbase: 'src',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  // Which sources went into which module: for size checks, and for tests of what a command loads.
  // Output paths name the staging folder; record them as dist/ paths.
  const metafile = JSON.parse(
    JSON.stringify(result.metafile).replaceAll(`${staging.slice(ROOT.length + 1)}/`, 'dist/'),
  );
  await writeFile(join(staging, 'meta.json'), JSON.stringify(metafile));
  await ensurePgliteTemplate(ROOT, staging, DIST);
  const retired = `${DIST}.old-${process.pid}`;
  await rename(DIST, retired).catch(() => undefined);
  await rename(staging, DIST);
  await rm(retired, { recursive: true, force: true });
  return metafile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const meta = await buildSvc({ ifStale: process.argv.includes('--if-stale') });
  if (meta) {
    const files = Object.keys(meta.outputs).filter((f) => f.endsWith('.js')).length;
    console.log(`built dist/ (${files} modules) in ${Math.round(performance.now() - started)} ms`);
  }
}
