/**
 * Every package the lockfile installs accepts every Node version svc says it runs on
 * (package.json `engines.node`, the README's "Node.js … or newer"). npm only warns about an
 * engines mismatch, and quietly installs an older major when the newest needs a newer Node, so
 * the check is here rather than left to an install log nobody reads.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: Record<string, string> | string[] }>;
};

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
});
