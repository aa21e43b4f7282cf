/**
 * Where svc's own files are: the package root (the folder with svc's package.json), found by
 * walking up from this module. The same answer whether this module runs from src/ (tests,
 * benchmarks, through tsx) or bundled into dist/ (the compiled `svc`), so files read at run
 * time (migrations, the skill catalog, the web console) are found from either.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'svc-review';

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === PACKAGE_NAME)
          return dir;
      } catch {
        // A package.json that is not JSON is not ours; keep walking up.
      }
    }
    if (dirname(dir) === dir)
      throw new Error(`svc's package.json (name ${PACKAGE_NAME}) is not above ${from}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package, from its root. */
export const packagePath = (...parts: string[]) => join(PACKAGE_ROOT, ...parts);
