#!/usr/bin/env node
/**
 * Writes test/fixtures/github-openapi.json: GitHub's own REST description (@octokit/openapi,
 * `generated/api.github.com.json`) cut down to the operations svc calls, with every `$ref` they
 * reach, so the fixture is self-contained. The GitHub double (test/helpers/github-double.ts)
 * validates every request svc makes against it.
 *
 *   node scripts/extract-github-openapi.mjs            # pinned version below
 *   OCTOKIT_OPENAPI_VERSION=23.0.3 node scripts/...     # another version
 *
 * The package is fetched with `npm pack` into a temporary directory and only the one JSON file
 * is unpacked (the whole package unpacks to hundreds of MB); it is never added to package.json.
 * Media-type `examples` are dropped (they are documentation, not contract, and are most of the
 * size); everything else of each kept operation is copied as GitHub publishes it.
 *
 * When svc starts calling another GitHub endpoint, add it to OPERATIONS and run this again.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSION = process.env.OCTOKIT_OPENAPI_VERSION || '23.0.2';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'test/fixtures/github-openapi.json');

/** Every GitHub operation svc calls (src/codehost/github/), as `METHOD path`. */
const OPERATIONS = [
  'GET /app',
  'POST /app/installations/{installation_id}/access_tokens',
  'GET /repos/{owner}/{repo}',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/files',
  'POST /repos/{owner}/{repo}/pulls',
  'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments',
  'POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies',
  'GET /repos/{owner}/{repo}/compare/{basehead}',
  'GET /repos/{owner}/{repo}/contents/{path}',
  'GET /repos/{owner}/{repo}/git/trees/{tree_sha}',
  'GET /repos/{owner}/{repo}/git/commits/{commit_sha}',
  'POST /repos/{owner}/{repo}/git/trees',
  'POST /repos/{owner}/{repo}/git/commits',
  'POST /repos/{owner}/{repo}/git/refs',
  'PUT /repos/{owner}/{repo}/branches/{branch}/protection',
  'GET /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks',
  'PATCH /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks',
  'GET /repos/{owner}/{repo}/commits/{ref}',
  'POST /repos/{owner}/{repo}/check-runs',
  'PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}',
  'GET /repos/{owner}/{repo}/issues/{issue_number}/comments',
  'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
  'PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}',
];

function fetchDescription() {
  const dir = mkdtempSync(join(tmpdir(), 'octokit-openapi-'));
  try {
    const out = execFileSync(
      'npm',
      ['pack', `@octokit/openapi@${VERSION}`, '--silent', '--pack-destination', dir],
      {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const tarball = join(dir, out.trim().split('\n').at(-1));
    execFileSync('tar', ['-xzf', tarball, '-C', dir, 'package/generated/api.github.com.json'], {
      stdio: 'inherit',
    });
    return JSON.parse(readFileSync(join(dir, 'package/generated/api.github.com.json'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A deep copy without media-type `examples` (and `example` stays: it is small and inline). */
function strip(value) {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'examples' && child && typeof child === 'object' && !Array.isArray(child)) continue;
    out[key] = strip(child);
  }
  return out;
}

/** Every `#/components/<kind>/<name>` reachable from `value`, followed transitively. */
function collectRefs(spec, value, seen) {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(spec, item, seen);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    if (key === '$ref' && typeof child === 'string') {
      if (seen.has(child)) continue;
      const match = /^#\/components\/([^/]+)\/([^/]+)$/.exec(child);
      if (!match) throw new Error(`unsupported $ref ${child}`);
      const target = spec.components?.[match[1]]?.[match[2]];
      if (target === undefined) throw new Error(`$ref ${child} does not resolve`);
      seen.add(child);
      collectRefs(spec, strip(target), seen);
    } else {
      collectRefs(spec, child, seen);
    }
  }
}

const sortKeys = (record) =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

function extract(spec) {
  const paths = {};
  for (const operation of OPERATIONS) {
    const [method, path] = operation.split(' ');
    const item = spec.paths[path];
    const op = item?.[method.toLowerCase()];
    if (!op) throw new Error(`${operation} is not in @octokit/openapi@${VERSION}`);
    paths[path] ??= item.parameters ? { parameters: strip(item.parameters) } : {};
    paths[path][method.toLowerCase()] = strip(op);
  }
  const refs = new Set();
  collectRefs(spec, paths, refs);
  const components = {};
  for (const ref of [...refs].sort()) {
    const [, , kind, name] = ref.split('/');
    components[kind] ??= {};
    components[kind][name] = strip(spec.components[kind][name]);
  }
  return {
    openapi: spec.openapi,
    info: {
      ...spec.info,
      'x-extracted-from': `@octokit/openapi@${VERSION} generated/api.github.com.json`,
      'x-extracted-by': 'scripts/extract-github-openapi.mjs',
      'x-operations': OPERATIONS,
    },
    servers: spec.servers,
    paths: sortKeys(paths),
    components: sortKeys(Object.fromEntries(Object.entries(components).map(([k, v]) => [k, sortKeys(v)]))),
  };
}

const fixture = extract(fetchDescription());
// The repository's formatter gives the layout. biome.json leaves test/fixtures/ out of its checks,
// so the text goes through stdin under a name outside that folder, which biome does format.
const formatted = execFileSync(
  join(ROOT, 'node_modules/.bin/biome'),
  ['format', '--stdin-file-path=github-openapi.json'],
  {
    cwd: ROOT,
    input: `${JSON.stringify(fixture, null, 2)}\n`,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  },
);
writeFileSync(OUT, formatted);
const counts = Object.entries(fixture.components).map(([k, v]) => `${Object.keys(v).length} ${k}`);
console.log(`wrote ${OUT}: ${OPERATIONS.length} operations, ${counts.join(', ')}`);
