/**
 * The base's files for rule reviewers (reviewers/types.ts BaseReader), decoded as the head's are
 * and read once per review: the rule skills run side by side and each asks for the base of the
 * files it found something in, often the same files.
 */
import { decodeText } from '../core/decode-text';
import type { BaseReader } from '../reviewers/types';

export function baseReader(
  readBytes: (paths: readonly string[]) => Promise<Map<string, Buffer | null>>,
): BaseReader {
  const read = new Map<string, Promise<string | null>>();
  return async (paths) => {
    const missing = [...new Set(paths.filter((p) => !read.has(p)))];
    if (missing.length > 0) {
      const bytes = readBytes(missing);
      // A failed read is not kept: the next skill asks again (and names the failure itself).
      bytes.catch(() => {
        for (const p of missing) read.delete(p);
      });
      for (const p of missing)
        read.set(
          p,
          bytes.then((b) => decodeText(b.get(p))),
        );
    }
    return new Map(await Promise.all(paths.map(async (p) => [p, (await read.get(p)) ?? null] as const)));
  };
}
