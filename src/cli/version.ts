/** The package's version, read from package.json next to the sources (no build step embeds it). */
import { readFileSync } from 'node:fs';

let cached: string | null = null;

export function packageVersion(): string {
  cached ??= (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  return cached;
}
