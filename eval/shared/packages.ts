/**
 * Where an installed npm package lives, found the way Node resolves it from this folder. The
 * external material is read straight from node_modules (nothing copied into the repository), and
 * some packages' `exports` hide `package.json`, so the folder is located rather than resolved.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

export interface InstalledPackage {
  dir: string;
  name: string;
  version: string;
}

/** The installed package `name` (an npm alias is its own name here), or an error naming the fix. */
export function installedPackage(name: string): InstalledPackage {
  for (const root of require.resolve.paths(name) ?? []) {
    const dir = join(root, name);
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    return { dir, name: parsed.name ?? name, version: parsed.version ?? '?' };
  }
  throw new Error(`${name} is not installed: run npm install (it is a pinned devDependency of the eval)`);
}
