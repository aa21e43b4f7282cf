/**
 * Path globs for a rule's `files` and `ignores`: `**` spans directories, `*` and `?` stay within
 * one path segment, `{a,b}` is an alternative. A glob without `/` matches the file name anywhere.
 */
const compiled = new Map<string, RegExp>();

function toRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more directories; a trailing `**` matches the rest.
      if (glob[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') out += '(?:';
    else if (c === '}') out += ')';
    else if (c === ',') out += '|';
    else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(glob.includes('/') ? `^${out}$` : `(?:^|/)${out}$`);
}

export function matchesGlob(path: string, glob: string): boolean {
  let re = compiled.get(glob);
  if (!re) {
    re = toRegExp(glob);
    compiled.set(glob, re);
  }
  return re.test(path);
}

/**
 * One test for a whole list of globs: their expressions joined into one, so a path is read once
 * rather than once per glob (file roles test ~100 conventional globs against every changed file).
 */
export function globListMatcher(globs: readonly string[]): (path: string) => boolean {
  if (globs.length === 0) return () => false;
  const re = new RegExp(globs.map((g) => `(?:${toRegExp(g).source})`).join('|'));
  return (path) => re.test(path);
}

/** Whether a rule with these `files`/`ignores` runs on `path`. */
export function pathSelected(
  path: string,
  files: string[] | undefined,
  ignores: string[] | undefined,
): boolean {
  if (files && !files.some((g) => matchesGlob(path, g))) return false;
  return !ignores?.some((g) => matchesGlob(path, g));
}
