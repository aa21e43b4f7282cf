import { join } from 'node:path';

export const ADMIN_URL = process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const CACHE_DIR = join(process.cwd(), 'node_modules', '.cache', 'svc-test');
export const SNAPSHOT_FILE = join(CACHE_DIR, 'pglite-migrated.tar');

export function urlFor(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export const templateName = (hash: string) => `svc_tpl_${hash}`;
