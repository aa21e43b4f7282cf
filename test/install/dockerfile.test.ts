/**
 * The container image carries what svc reads at run time. No Docker engine runs on the
 * machines this suite runs on, so the image is not built here; what can drift without a build
 * is checked instead: every file svc finds through `packagePath(...)` is copied into the final
 * stage, which runs as a non-root user with a health check on /healthz and production packages only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
/** The last stage: the image that runs. */
const finalStage = dockerfile.split(/^FROM /m).at(-1) ?? '';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Every `packagePath('a', 'b')` in src/, as 'a/b'. */
const runtimePaths = sourceFiles(join(root, 'src')).flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/packagePath\(([^)]*)\)/g)]
    .map((m) => [...(m[1] ?? '').matchAll(/'([^']+)'/g)].map((p) => p[1]).join('/'))
    .filter((p) => p !== ''),
);

/** What the final stage's COPY lines put under /app, as paths relative to it. */
const copied = [...finalStage.matchAll(/^COPY\s+(.+)$/gm)].flatMap((m) => {
  const args = (m[1] ?? '').split(/\s+/).filter((a) => !a.startsWith('--'));
  const dest = (args.pop() ?? '').replace(/^\.\/?/, '').replace(/\/$/, '');
  // Into the work dir itself: each source keeps its name.
  return dest === '' ? args.map((a) => a.replace(/\/$/, '')) : [dest];
});

describe('Dockerfile', () => {
  it('copies every file svc reads at run time into the image', () => {
    expect(runtimePaths).toEqual(
      expect.arrayContaining(['drizzle', 'src/skills', 'web/dist', 'package.json']),
    );
    const missing = runtimePaths.filter(
      (path) => !copied.some((dest) => path === dest || path.startsWith(`${dest}/`)),
    );
    expect(missing).toEqual([]);
    // And the compiled build that bin/svc.mjs runs.
    expect(copied).toEqual(expect.arrayContaining(['bin', 'dist']));
  });

  it('runs as a non-root user, with production packages only and a health check', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(finalStage).toMatch(/^USER (?!root)\S+/m);
    expect(finalStage).toMatch(/npm ci --omit=dev/);
    expect(finalStage).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    expect(finalStage).toMatch(/^CMD \["node", "bin\/svc\.mjs", "serve"\]/m);
  });
});
