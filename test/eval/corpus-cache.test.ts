/**
 * The eval's real code is fetched from the npm registry into a cache instead of being installed
 * with svc (eval/shared/corpus-cache.ts): what it fetches must be the pinned bytes, and when the
 * registry cannot be reached the error must say what to do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORPORA } from '../../eval/shared/corpora';
import { corpusCacheDir, corpusPackage } from '../../eval/shared/corpus-cache';

describe('the eval corpus cache', () => {
  let cache: string;
  const saved = { ...process.env };

  beforeEach(async () => {
    cache = await mkdtemp(join(tmpdir(), 'svc-eval-cache-'));
    process.env.SVC_EVAL_CACHE = cache;
  });
  afterEach(async () => {
    process.env = { ...saved };
    await rm(cache, { recursive: true, force: true });
  });

  it('unpacks a pinned version under name@version, its package.json at the top, checked against its integrity', async () => {
    const pkg = await corpusPackage('reselect@5.0.1');
    expect(corpusCacheDir()).toBe(cache);
    expect(pkg).toEqual({
      dir: join(cache, 'reselect@5.0.1', 'package'),
      name: 'reselect',
      version: '5.0.1',
    });
    const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    expect([manifest.name, manifest.version]).toEqual(['reselect', '5.0.1']);
    expect(readFileSync(join(cache, 'reselect@5.0.1', 'integrity'), 'utf8').trim()).toBe(
      CORPORA['reselect@5.0.1'],
    );
    // Nothing but the package: the integrity record sits beside it, not in the reviewed tree.
    expect(existsSync(join(pkg.dir, 'integrity'))).toBe(false);
  }, 120_000);

  it('refuses a tarball whose bytes are not the pinned ones, and keeps nothing of it', async () => {
    const spec = 'reselect@5.1.1';
    const pinned = CORPORA[spec] as string;
    CORPORA[spec] = `sha512-${Buffer.alloc(64).toString('base64')}`;
    try {
      await expect(corpusPackage(spec)).rejects.toThrow(/is not the pinned tarball: integrity sha512-/);
    } finally {
      CORPORA[spec] = pinned;
    }
    expect(existsSync(join(cache, spec))).toBe(false);
  }, 120_000);

  it('says where it fetches from and what to do when the registry cannot be reached', async () => {
    // An empty npm cache and offline mode: npm cannot get the tarball anywhere.
    process.env.npm_config_cache = join(cache, 'empty-npm-cache');
    process.env.npm_config_offline = 'true';
    const error = await corpusPackage('marked@4.2.12').catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /could not fetch marked@4\.2\.12, real code the eval reads, from the npm registry/,
    );
    expect((error as Error).message).toContain(cache);
    expect((error as Error).message).toContain('SVC_EVAL_CACHE');
  }, 120_000);

  it('knows only pinned versions', () => {
    expect(() => corpusPackage('left-pad@1.3.0')).toThrow(/not a pinned eval corpus/);
  });
});
