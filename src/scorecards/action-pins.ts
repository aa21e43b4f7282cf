/**
 * How a repository refers to GitHub actions, so a workflow svc writes follows it: a repository
 * whose workflows pin actions to full commit SHAs gets SHAs, the same commit it already uses for
 * the same action, never a movable tag. When svc knows no commit for an action, it says which
 * references need pinning instead of writing a tag.
 */
import type { KnowledgeCiWorkflow } from '../core/repo-knowledge';

const FULL_SHA = /^[0-9a-f]{40}$/i;

interface ActionRef {
  /** `actions/checkout`, or `owner/repo/path` for an action in a subdirectory. */
  name: string;
  ref: string;
  file: string;
}

/** Remote actions only: a local action (`./x`) or a container (`docker://`) has no ref to pin. */
function remoteRefs(workflows: readonly KnowledgeCiWorkflow[]): ActionRef[] {
  return workflows
    .filter((w) => w.provider === 'github_actions')
    .flatMap((w) =>
      (w.uses ?? []).flatMap((u) => {
        const at = u.lastIndexOf('@');
        if (u.startsWith('./') || u.startsWith('docker://') || at <= 0) return [];
        return [{ name: u.slice(0, at).toLowerCase(), ref: u.slice(at + 1), file: w.path }];
      }),
    );
}

export interface Pinning {
  /** Whether most of the repository's action references are full commit SHAs. */
  bySha: boolean;
  shaRefs: number;
  refs: number;
}

/**
 * A repository pins by SHA when at least half its remote action references are full SHAs: one
 * pinned third-party action among tags of `actions/*` is not the team's convention.
 */
export function pinningOf(workflows: readonly KnowledgeCiWorkflow[]): Pinning {
  const refs = remoteRefs(workflows);
  const shaRefs = refs.filter((r) => FULL_SHA.test(r.ref)).length;
  return { bySha: refs.length > 0 && shaRefs * 2 >= refs.length, shaRefs, refs: refs.length };
}

const USES_LINE = /^(\s*-?\s*uses:\s*)([^@\s]+)@(\S+)\s*$/;

/**
 * The workflow text with each `uses:` pinned as the repository pins: unchanged when it does not
 * pin by SHA; else each action's SHA taken from the repository's own workflows (the one used most,
 * with a comment saying where), or, when one is unknown, why the workflow cannot be written.
 */
export function pinLikeRepository(
  content: string,
  workflows: readonly KnowledgeCiWorkflow[],
): { content: string; pinned: string[] } | { why: string } {
  const pinning = pinningOf(workflows);
  if (!pinning.bySha) return { content, pinned: [] };
  const known = new Map<string, { sha: string; file: string; count: number }>();
  for (const r of remoteRefs(workflows)) {
    if (!FULL_SHA.test(r.ref)) continue;
    const key = `${r.name}@${r.ref.toLowerCase()}`;
    const seen = known.get(key);
    known.set(key, { sha: r.ref, file: seen?.file ?? r.file, count: (seen?.count ?? 0) + 1 });
  }
  const shaFor = (name: string) =>
    [...known]
      .filter(([key]) => key.startsWith(`${name.toLowerCase()}@`))
      .map(([, v]) => v)
      .sort((a, b) => b.count - a.count)[0];
  const unknown: string[] = [];
  const pinned = new Set<string>();
  const lines = content.split('\n').map((line) => {
    const m = USES_LINE.exec(line);
    if (!m || FULL_SHA.test(m[3] as string)) return line;
    const name = m[2] as string;
    const found = shaFor(name);
    if (!found) {
      unknown.push(`${name}@${m[3]}`);
      return line;
    }
    pinned.add(`${name}@${found.sha}`);
    return `${m[1]}${name}@${found.sha} # the commit ${found.file} uses`;
  });
  if (unknown.length > 0) {
    const list = [...new Set(unknown)];
    return {
      why: `this repository pins actions to commit SHAs (${pinning.shaRefs} of its ${pinning.refs} action references), and no workflow of it uses ${list.map((u) => u.split('@')[0]).join(', ')}, so svc knows no commit to pin to and will not write a tag; add the workflow by hand with ${list.join(', ')} pinned to their commit SHAs`,
    };
  }
  return { content: lines.join('\n'), pinned: [...pinned] };
}
