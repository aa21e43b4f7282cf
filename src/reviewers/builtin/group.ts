/**
 * One finding per idiom per file. A rule that matches the same idiom at six places of one file
 * (a deprecated call all through a test file) is one finding listing the six, not six findings
 * on six lines: a reader fixes them the same way, at once.
 *
 * "The same idiom" is the same rule with the same message, the message's metavariables filled
 * from each match (`datetime.utcnow()` is deprecated..., `ioutil.ReadAll` is deprecated...): the
 * rule's own name for what it found, whatever the arguments around it. Only P2 findings are
 * grouped. A P0 or P1 finding is a defect of its own at each place (two injection sinks are two
 * defects even with the same code: each has its own data reaching it, and its own fix), so those
 * stay one per place.
 *
 * The finding is placed at its first location, its body lists the others, and `locations` holds
 * them all. Its `identity` is its message, so the ledger knows it by path, rule and message
 * (review/ledger-reconcile.ts): a copy added above the first, or the first copy fixed while the
 * others remain, leaves it the same finding, neither new nor fixed; every P2 finding carries it,
 * so one copy becoming two (or two one) is the same finding too.
 *
 * The secrets skill's P2 credentials (throwaway keys in test fixtures) are grouped a step wider, over
 * the files of one directory (`groupAcrossDirectory`): a test suite's key files are one thing to
 * confirm.
 */
import { type FindingDraft, FOUND_SECRETS, type LineRange, normalizeAnchor } from '../../core/review';

/** The severities whose findings are grouped per idiom; the others stay one per place. */
const GROUPED: ReadonlySet<FindingDraft['severity']> = new Set(['P2']);

/**
 * `findings` with each P2 idiom of a file made one finding (the others as they are), in the
 * order the groups' first findings came.
 */
export function groupRepeats(findings: readonly FindingDraft[]): FindingDraft[] {
  const groups = new Map<string, FindingDraft[]>();
  const out: (FindingDraft | FindingDraft[])[] = [];
  for (const finding of findings) {
    if (!GROUPED.has(finding.severity)) {
      out.push(finding);
      continue;
    }
    const key = `${finding.path}\u0000${finding.rule}\u0000${normalizeAnchor(finding.title)}`;
    const members = groups.get(key);
    if (members) members.push(finding);
    else {
      const created = [finding];
      groups.set(key, created);
      out.push(created);
    }
  }
  return out.map((item) => (Array.isArray(item) ? grouped(item) : item));
}

function grouped(members: FindingDraft[]): FindingDraft {
  const sorted = [...members].sort((a, b) => a.line - b.line || a.endLine - b.endLine);
  const first = sorted[0] as FindingDraft;
  const identity = normalizeAnchor(first.title);
  const locations: LineRange[] = [];
  for (const m of sorted) {
    const last = locations.at(-1);
    if (last && last.start === m.line && last.end === m.endLine) continue;
    locations.push({ start: m.line, end: m.endLine });
  }
  if (locations.length === 1) return { ...first, identity };
  return {
    ...first,
    body: `${first.body}\n\n${alsoAt(locations)}`,
    locations,
    identity,
  };
}

/** "Also at lines 12, 40 and 77-79 of this file (4 places in all)." */
export function alsoAt(locations: readonly LineRange[]): string {
  const rest = locations.slice(1).map((l) => (l.end > l.start ? `${l.start}-${l.end}` : `${l.start}`));
  const list = rest.length === 1 ? rest[0] : `${rest.slice(0, -1).join(', ')} and ${rest.at(-1)}`;
  return `**Also at line${rest.length === 1 ? '' : 's'} ${list}** of this file: the same rule and message, ${locations.length} places in all, reported as one finding.`;
}

/** Files named in a directory group's body at most; the rest are counted. */
const SHOWN_FILES = 12;

const directoryOf = (path: string) => path.slice(0, path.lastIndexOf('/') + 1);

/**
 * `findings` with each P2 finding of one rule and message repeated over the files of one
 * directory made one finding, for the secrets skill: a release that adds a key parser's test
 * vectors (ssh2-streams 0.3.0: thirty throwaway keys in `test/fixtures/`, one per format, and the
 * parse expected of each) asks a reader to confirm once that the directory's keys are throwaway,
 * not thirty times. P0/P1 credentials stay one per place: each is a secret to rotate.
 *
 * The finding is placed at the first file (path order) and first line, its body names the other
 * files, its `locations` are its own file's places, its secrets are all the group's (so the ledger
 * masks each) and its `identity` is its message, as `groupRepeats` gives.
 */
export function groupAcrossDirectory(findings: readonly FindingDraft[]): FindingDraft[] {
  const groups = new Map<string, FindingDraft[]>();
  const out: (FindingDraft | FindingDraft[])[] = [];
  for (const finding of findings) {
    if (!GROUPED.has(finding.severity)) {
      out.push(finding);
      continue;
    }
    const key = `${directoryOf(finding.path)}\u0000${finding.rule}\u0000${normalizeAnchor(finding.title)}`;
    const members = groups.get(key);
    if (members) members.push(finding);
    else {
      const created = [finding];
      groups.set(key, created);
      out.push(created);
    }
  }
  return out.map((item) => (Array.isArray(item) ? groupedAcrossFiles(item) : item));
}

function groupedAcrossFiles(members: FindingDraft[]): FindingDraft {
  const sorted = [...members].sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line);
  const first = sorted[0] as FindingDraft;
  const own = grouped(sorted.filter((m) => m.path === first.path));
  const others = sorted.filter((m) => m.path !== first.path);
  if (others.length === 0) return own;
  const secrets = [...new Set(sorted.flatMap((m) => m[FOUND_SECRETS] ?? []))];
  return {
    ...own,
    body: `${own.body}\n\n${alsoInFiles(directoryOf(first.path), others, sorted.length)}`,
    ...(secrets.length > 0 ? { [FOUND_SECRETS]: secrets } : {}),
  };
}

/** "Also in 3 other files of `test/fixtures/`: `b` (line 1), `c` (lines 2 and 9) and `d` (line 4) …" */
function alsoInFiles(directory: string, others: readonly FindingDraft[], places: number): string {
  const linesByFile = new Map<string, number[]>();
  for (const m of others) linesByFile.set(m.path, [...(linesByFile.get(m.path) ?? []), m.line]);
  const named = [...linesByFile].slice(0, SHOWN_FILES).map(([path, lines]) => {
    const list = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(', ')}`;
    return `\`${path.slice(directory.length)}\` (${list})`;
  });
  const rest = linesByFile.size - named.length;
  if (rest > 0) named.push(`${rest} more`);
  const list = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  const where = directory === '' ? 'the root directory' : `\`${directory}\``;
  return `**Also in ${linesByFile.size} other file${linesByFile.size === 1 ? '' : 's'} of ${where}**: ${list}; the same rule and message, ${places} places in all, reported as one finding.`;
}
