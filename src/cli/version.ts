/** The package's version, read from its package.json (no build step embeds it). */
import { readFileSync } from 'node:fs';
import { packagePath } from '../core/install-paths';

let cached: string | null = null;

export function packageVersion(): string {
  cached ??= (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  return cached;
}
