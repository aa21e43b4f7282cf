/**
 * A new embedded data directory comes from the build's template when the installed PGlite made
 * it, from initdb otherwise, and never replaces a directory that holds something else.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../src/core/install-paths';
import { openDatabase } from '../../src/storage/database';
import { migrate } from '../../src/storage/migrate';
import { createDataDir } from '../../src/storage/pglite-data-dir';

const scratch = mkdtempSync(join(tmpdir(), 'svc-datadir-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const BUILD = packagePath('dist');

/** The build's template with one extra file in it, so a directory made from it shows where it came from. */
function markedTemplate(): string {
  const unpacked = join(scratch, 'unpacked');
  mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', join(BUILD, 'pglite-template.tar.gz'), '-C', unpacked]);
  writeFileSync(join(unpacked, 'from-the-template'), '');
  const templateDir = join(scratch, 'marked');
  mkdirSync(templateDir);
  execFileSync('tar', ['-czf', join(templateDir, 'pglite-template.tar.gz'), '-C', unpacked, '.']);
  writeFileSync(join(templateDir, 'pglite-template.json'), readFileSync(join(BUILD, 'pglite-template.json')));
  return templateDir;
}

function emptyDir(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  return dir;
}

describe('a new embedded data directory', () => {
  it('is unpacked from the build template, leaves no staging folder, and opens as a database', async () => {
    const dir = emptyDir('from-template');
    // A staging folder left by a start that was killed halfway.
    mkdirSync(`${dir}.creating-999999`);
    expect(await createDataDir(dir, markedTemplate())).toBe('template');
    expect(existsSync(join(dir, 'from-the-template'))).toBe(true);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
    expect(readdirSync(scratch).filter((name) => name.includes('.creating-'))).toEqual([]);

    const db = await openDatabase({ dataDir: dir });
    try {
      await migrate(db);
      const [row] = await db.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM projects`);
      expect(row?.n).toBe(0);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('falls back to initdb when the template was made by another PGlite version', async () => {
    const templateDir = emptyDir('stale-template');
    writeFileSync(join(templateDir, 'pglite-template.tar.gz'), 'not a tarball');
    writeFileSync(join(templateDir, 'pglite-template.json'), JSON.stringify({ pglite: '0.0.0-another' }));
    const dir = emptyDir('from-initdb');
    expect(await createDataDir(dir, templateDir)).toBe('initdb');
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
  }, 180_000); // initdb: seconds alone, far more on a loaded machine

  it('refuses a directory that holds something other than a database, and leaves it as it was', async () => {
    const dir = emptyDir('someone-elses');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    await expect(createDataDir(dir, BUILD)).rejects.toThrow(/not empty but holds no database.*SVC_DATA_DIR/);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });
});
