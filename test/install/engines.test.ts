/**
 * Every package the lockfile installs accepts every Node version svc says it runs on
 * (package.json `engines.node`, the README's "Node.js … or newer"). npm only warns about an
 * engines mismatch, and quietly installs an older major when the newest needs a newer Node, so
 * the check is here rather than left to an install log nobody reads.
 *
 * The lockfile is only what this checkout installs: a user's `npm install -g svc-review` reads
 * neither it nor package.json `overrides` (they apply to the root project only). So the
 * production packages must also be the versions their dependents' ranges choose on their own;
 * test/cli-package.test.ts installs the packed tarball to confirm it.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string };
};
interface LockedPackage {
  version?: string;
  dev?: boolean;
  engines?: Record<string, string> | string[];
  dependencies?: Record<string, string>;
}
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

/** The lockfile path `name` resolves to from the package at `from`, as Node looks it up. */
function resolveFrom(from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!base) return undefined;
    const parent = base.lastIndexOf('/node_modules/');
    base = parent < 0 ? '' : base.slice(0, parent);
  }
}

describe('engines', () => {
  const ours = manifest.engines.node;

  it('names a Node range the README repeats', () => {
    const minimum = semver.minVersion(ours)?.version.replace(/\.0$/, '');
    expect(minimum).toBeTruthy();
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    expect(readme).toContain(`Node.js ${minimum} or newer`);
    expect(readme).toContain(`\`${ours}\``);
  });

  it('accepts, in every installed package, every Node version svc supports', () => {
    const refused: string[] = [];
    for (const [path, pkg] of Object.entries(lock.packages)) {
      const engines = pkg.engines;
      // An old array form (`["node >= 0.4"]`) carries no range npm enforces.
      const theirs = engines && !Array.isArray(engines) ? engines.node : undefined;
      if (!path || !theirs || !semver.validRange(theirs)) continue;
      if (!semver.subset(ours, theirs)) refused.push(`${path}@${pkg.version}: node ${theirs}`);
    }
    expect(refused, `packages whose engines refuse part of ${ours}`).toEqual([]);
  });

  it('installs for production only versions their dependents accept, with no override', () => {
    // An override that breaks a range (content-type@2 under a package asking for ^3) holds here
    // but not in a user's install, which then takes the newest match and its engines.
    const overridden: string[] = [];
    for (const [path, pkg] of Object.entries(lock.packages)) {
      if (!path || pkg.dev) continue;
      for (const [name, range] of Object.entries(pkg.dependencies ?? {})) {
        const target = resolveFrom(path, name);
        const version = target ? lock.packages[target]?.version : undefined;
        if (version && semver.validRange(range) && !semver.satisfies(version, range))
          overridden.push(`${path} wants ${name}@${range}, the lockfile has ${version}`);
      }
    }
    expect(overridden).toEqual([]);
  });
});
