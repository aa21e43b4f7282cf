/**
 * Upgrades depend on released migrations never changing: a database records which migrations it
 * applied, so an edited or regenerated one would be skipped (or re-run against tables that
 * exist). drizzle/released.json fixes each migration's bytes; a new migration is added there
 * with its hash, on purpose.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/storage/migrate';

interface Released {
  migrations: { tag: string; sha256: string }[];
}

const released = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'released.json'), 'utf8')) as Released;
const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
  entries: { tag: string }[];
};

describe('migrations', () => {
  it('keeps every released migration byte for byte', () => {
    for (const { tag, sha256 } of released.migrations) {
      const bytes = readFileSync(join(MIGRATIONS_DIR, `${tag}.sql`));
      expect(
        createHash('sha256').update(bytes).digest('hex'),
        `${tag}.sql changed after release: add a new migration instead`,
      ).toBe(sha256);
    }
  });

  it('journals exactly the released migrations, in order (a new one is recorded with its hash)', () => {
    expect(journal.entries.map((entry) => entry.tag)).toEqual(released.migrations.map((m) => m.tag));
  });
});
