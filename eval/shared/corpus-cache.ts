/**
 * Published package versions the eval reads as real code (part 3's ranges, the knowledge tests'
 * published projects), fetched from the npm registry on first use rather than installed with
 * svc's devDependencies: `npm install` stays small and fast, and only `npm run eval` and the tests
 * that read them pay for them, once.
 *
 * Each version is pinned by the integrity of its tarball (corpora.ts). It is fetched with
 * `npm pack` (npm's own cache and registry settings, no lifecycle script runs), checked against
 * that integrity, unpacked with `tar` and kept as `node_modules/.cache/svc-eval/<name>@<version>/package`
 * (SVC_EVAL_CACHE names another folder). Nothing in it is ever executed: it is only read.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CORPORA } from './corpora';
import type { InstalledPackage } from './packages';

const run = promisify(execFile);

const ROOT = join(import.meta.dirname, '..', '..');
/**
 * Beside `package/` in a version's folder: the integrity it was checked against. The folder is
 * moved into place whole, so a folder that is there is complete.
 */
const VERIFIED = 'integrity';

export function corpusCacheDir(): string {
  return process.env.SVC_EVAL_CACHE || join(ROOT, 'node_modules', '.cache', 'svc-eval');
}

/** `name@version` → its folder name (a scope's slash would make a subfolder). */
const folderOf = (spec: string) => spec.replace('/', '+');

function splitSpec(spec: string): { name: string; version: string } {
  const at = spec.lastIndexOf('@');
  return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

/** The SRI string npm records for a tarball (`sha512-<base64>`). */
const integrityOf = (bytes: Buffer) => `sha512-${createHash('sha512').update(bytes).digest('base64')}`;

async function fetchInto(spec: string, integrity: string, cache: string, dir: string): Promise<void> {
  await mkdir(cache, { recursive: true });
  const work = await mkdtemp(join(cache, `.fetch-${folderOf(spec)}-`));
  try {
    try {
      await run(
        'npm',
        ['pack', spec, '--ignore-scripts', '--prefer-offline', '--silent', '--pack-destination', work],
        { cwd: work, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      const detail = String((error as { stderr?: string }).stderr ?? error)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ');
      throw new Error(
        `could not fetch ${spec}, real code the eval reads, from the npm registry (npm pack: ${detail}). ` +
          `It is fetched once into ${cache}; run again with access to the registry, or set SVC_EVAL_CACHE to a folder that holds it.`,
      );
    }
    const tarball = (await readdir(work)).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${spec} wrote no tarball into ${work}`);
    const got = integrityOf(await readFile(join(work, tarball)));
    if (got !== integrity)
      throw new Error(
        `${spec} from the registry is not the pinned tarball: integrity ${got}, expected ${integrity}`,
      );
    const version = join(work, 'version');
    await mkdir(join(version, 'package'), { recursive: true });
    // npm tarballs hold one top folder (usually `package/`, not always): strip it.
    await run('tar', [
      '-xzf',
      join(work, tarball),
      '-C',
      join(version, 'package'),
      '--strip-components=1',
      '--no-same-owner',
    ]);
    await writeFile(join(version, VERIFIED), `${integrity}\n`);
    // Another process may have finished the same version first; either copy is the same bytes.
    await rename(version, dir).catch((error: NodeJS.ErrnoException) => {
      if (!existsSync(join(dir, VERIFIED))) throw error;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const pending = new Map<string, Promise<InstalledPackage>>();

/**
 * The unpacked folder of `spec` (`name@version`, one of CORPORA), fetched and checked on first
 * use; an error saying what to do when the registry cannot be reached.
 */
export function corpusPackage(spec: string): Promise<InstalledPackage> {
  const integrity = CORPORA[spec];
  if (!integrity) throw new Error(`${spec} is not a pinned eval corpus (eval/shared/corpora.ts)`);
  let found = pending.get(spec);
  if (!found) {
    found = (async () => {
      const cache = corpusCacheDir();
      const dir = join(cache, folderOf(spec));
      const marker = join(dir, VERIFIED);
      if (!existsSync(marker)) await fetchInto(spec, integrity, cache, dir);
      else if (readFileSync(marker, 'utf8').trim() !== integrity) {
        // Pinned again to other bytes (a republished version is not allowed, so: edited by hand).
        await rm(dir, { recursive: true, force: true });
        await fetchInto(spec, integrity, cache, dir);
      }
      return { dir: join(dir, 'package'), ...splitSpec(spec) };
    })();
    // A failed fetch is tried again on the next call rather than remembered.
    found.catch(() => pending.delete(spec));
    pending.set(spec, found);
  }
  return found;
}
