/**
 * `svc review` without the service runs version-dependent rules on the runtime versions the
 * repository states at its root: svc.json's `runtimes` first, then what the service's knowledge
 * derives from the same files (requires-python, engines.node, .nvmrc, go.mod, ...).
 */
import { describe, expect, it } from 'vitest';
import { reviewLocalRange, rootRuntimes } from '../../src/review/local-review';
import { commitFiles, gitIn, makeRepo, makeReposDir } from '../helpers/git';

describe('rootRuntimes', () => {
  it('reads root manifests and version files as the repository knowledge does', () => {
    const texts = new Map<string, string | null>([
      ['pyproject.toml', '[project]\nname = "app"\nrequires-python = ">=3.12"\n'],
      ['.nvmrc', 'lts/iron\n'],
      ['go.mod', 'module example.com/app\n\ngo 1.22\n'],
      ['package.json', null],
    ]);
    const { runtimes, gaps } = rootRuntimes(texts, 'head');
    expect(gaps).toEqual([]);
    expect(runtimes.map((r) => [r.name, r.version, r.source])).toEqual([
      ['node', 'lts/iron', '.nvmrc'],
      ['python', '>=3.12', 'pyproject.toml#project.requires-python'],
      ['go', '1.22', 'go.mod#go'],
    ]);
  });

  it('lets svc.json replace what is derived, and names an invalid svc.json', () => {
    const declared = rootRuntimes(
      new Map([
        ['svc.json', JSON.stringify({ runtimes: [{ name: 'python', version: '3.13' }] })],
        ['.python-version', '3.9\n'],
      ]),
      'head',
    );
    expect(declared.runtimes).toEqual([
      { name: 'python', version: '3.13', source: 'svc.json#runtimes[0]', declared: true },
    ]);
    const invalid = rootRuntimes(new Map([['svc.json', '{ nope']]), 'head');
    expect(invalid.runtimes).toEqual([]);
    expect(invalid.gaps.map((g) => g.code)).toEqual(['repo_knowledge_file_invalid']);
    expect(rootRuntimes(new Map(), 'head')).toEqual({ runtimes: [], gaps: [] });
  });
});

describe('reviewLocalRange', () => {
  const CLOCK = ['from datetime import datetime', 'def stamp():', '    return datetime.utcnow()', ''].join(
    '\n',
  );

  const reviewWith = async (root: Record<string, string>) => {
    const repo = makeRepo(makeReposDir(), 'me/app', { 'README.md': 'app\n', ...root });
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const head = commitFiles(repo, { 'app/clock.py': CLOCK });
    const result = await reviewLocalRange({
      dir: repo,
      base,
      head,
      ledgerPaths: [],
      reviewers: ['correctness'],
      env: {},
    });
    return result.findings.map((f) => [f.rule, f.line]);
  };

  it('reports a version-dependent finding on the version svc.json declares', async () => {
    expect(await reviewWith({ 'svc.json': '{"runtimes":[{"name":"python","version":"3.12"}]}' })).toEqual([
      ['correctness/deprecated-utcnow', 3],
    ]);
  });

  it('stays quiet below the rule`s version and with no version stated', async () => {
    expect(await reviewWith({ '.python-version': '3.11.9\n' })).toEqual([]);
    expect(await reviewWith({})).toEqual([]);
  });
});
