/**
 * A second try at a file the grammar could not read in full. tree-sitter recovers from most
 * errors locally, but some constructs derail it for the rest of the file: an interface whose call
 * signatures end without semicolons and go on with a generic one (`(a: string): R` then
 * `<O extends Options>(o: O): R`) makes the TypeScript grammar read everything after it as one
 * ERROR, and every function below the interface went unreviewed.
 *
 * Two retries, the one that leaves the fewest lines unread is kept, and only if it beats the
 * first parse:
 * - the other TypeScript grammar (TSX for .ts, TypeScript for .tsx), for the constructs only one
 *   of them reads (`<T>value` casts, JSX in a .ts file);
 * - the declarations that fail on their own set aside: the file is cut at the lines that start a
 *   top-level declaration (column 0), each piece overlapping an error is parsed alone, and those
 *   that still fail are blanked (spaces, so every line and column stays where it was) before the
 *   whole file is parsed again. What was blanked counts as unread.
 *
 * Synchronous (a parse and a search per try): it runs only for a file with a large error.
 */
import { Lang, parse, type SgRoot } from '@ast-grep/napi';

/** 0-based inclusive line range. */
export interface LineRegion {
  start: number;
  end: number;
}

export interface Recovered {
  root: SgRoot;
  /** The regions still unread: ERROR nodes of the new parse and the lines set aside. */
  errors: LineRegion[];
  /** How the file was read, in words (for the gap). */
  how: string;
}

/** Lines covered by at least one region. */
export function linesIn(regions: readonly LineRegion[]): number {
  const covered = new Set<number>();
  for (const r of regions) for (let line = r.start; line <= r.end; line++) covered.add(line);
  return covered.size;
}

/** ERROR nodes' line ranges in a parse. */
export function errorRegions(root: SgRoot): LineRegion[] {
  return root
    .root()
    .findAll({ rule: { kind: 'ERROR' } })
    .map((n) => {
      const r = n.range();
      return { start: r.start.line, end: r.end.line };
    });
}

/**
 * A line that starts a top-level declaration or statement: not blank, not a closing bracket, and
 * not a continuation no statement starts with. Prettier puts the `>` that closes a declaration's
 * type parameters at column 0 (`export function f<\n  T\n>(a: T) {`, `type X<\n  T\n> = …`): cut
 * there, the declaration's head fails alone and its body, set aside too, leaves a whole function
 * unread. The same for a union's `|`, an intersection's `&`, a ternary's `?`/`:`, a chained `.`
 * and a list's `,`.
 */
const STARTS_DECLARATION = /^[^\s})\]>|&?:.,]/;
/** Comment lines (JavaScript's, Java's, Go's; a block comment's inner lines) and blank lines. */
const COMMENT_OR_BLANK = /^(\/\/|\/\*|\*)|^\s*$|^\s+\*/;
/** Lines that belong to the declaration after them: comments and decorators. */
const LEADS_INTO_NEXT = /^(\/\/|\/\*|\*|@|#)|^\s*$|^\s+\*/;

/**
 * The file cut into top-level pieces: each starts at a column-0 line; comments, decorators and
 * blank lines before a declaration go with it.
 */
export function topLevelPieces(lines: readonly string[]): LineRegion[] {
  const pieces: LineRegion[] = [];
  let start = 0;
  let leadingOnly = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (i > start && STARTS_DECLARATION.test(line) && !leadingOnly) {
      pieces.push({ start, end: i - 1 });
      start = i;
      leadingOnly = true;
    }
    if (!LEADS_INTO_NEXT.test(line)) leadingOnly = false;
  }
  if (lines.length > 0) pieces.push({ start, end: lines.length - 1 });
  return pieces;
}

const overlaps = (a: LineRegion, b: LineRegion) => a.start <= b.end && a.end >= b.start;

/** Every character but line ends of `regions` replaced by a space. */
function blank(lines: readonly string[], regions: readonly LineRegion[]): string {
  const out = [...lines];
  for (const r of regions)
    for (let i = r.start; i <= r.end; i++) out[i] = (out[i] as string).replace(/[^\r]/g, ' ');
  return out.join('\n');
}

/** Declarations set aside named in the gap at most; the rest are counted. */
const SHOWN_PIECES = 5;

function setAside(napiLang: string, content: string, errors: readonly LineRegion[]): Recovered | null {
  const lines = content.split('\n');
  const failing = topLevelPieces(lines).filter(
    (piece) =>
      errors.some((e) => overlaps(e, piece)) &&
      errorRegions(parse(napiLang, lines.slice(piece.start, piece.end + 1).join('\n'))).length > 0,
  );
  if (failing.length === 0) return null;
  // The comments before a declaration and the blank lines after it read fine: they stay, and are
  // not counted as unread.
  for (const piece of failing) {
    while (piece.start < piece.end && COMMENT_OR_BLANK.test(lines[piece.start] as string)) piece.start++;
    while (piece.end > piece.start && (lines[piece.end] as string).trim() === '') piece.end--;
  }
  const root = parse(napiLang, blank(lines, failing));
  const where = failing
    .slice(0, SHOWN_PIECES)
    .map((p) => (p.start === p.end ? `${p.start + 1}` : `${p.start + 1}-${p.end + 1}`));
  if (failing.length > SHOWN_PIECES) where.push(`${failing.length - SHOWN_PIECES} more`);
  return {
    root,
    errors: [...failing, ...errorRegions(root)].sort((a, b) => a.start - b.start),
    how: `${failing.length} declaration(s) the grammar cannot read set aside (line(s) ${where.join(', ')}), the rest parsed again`,
  };
}

const OTHER_GRAMMAR: Record<string, { lang: string; name: string }> = {
  [Lang.TypeScript]: { lang: Lang.Tsx, name: 'TSX' },
  [Lang.Tsx]: { lang: Lang.TypeScript, name: 'TypeScript' },
};

function otherGrammar(napiLang: string, content: string): Recovered | null {
  const other = OTHER_GRAMMAR[napiLang];
  if (!other) return null;
  const root = parse(other.lang, content);
  return { root, errors: errorRegions(root), how: `parsed with the ${other.name} grammar` };
}

/**
 * The better reading of `content` than the first parse's (whose ERROR regions are `errors`), or
 * null when no retry leaves fewer lines unread.
 */
export function recoverParse(
  napiLang: string,
  content: string,
  errors: readonly LineRegion[],
): Recovered | null {
  let best: Recovered | null = null;
  let bestLines = linesIn(errors);
  // On a tie the declarations set aside win: their lines are exactly what failed, where an ERROR
  // node may spill into the first line of the next function and drop a match there.
  const retries = [
    { retry: () => otherGrammar(napiLang, content), winsTie: false },
    { retry: () => setAside(napiLang, content, errors), winsTie: true },
  ];
  for (const { retry, winsTie } of retries) {
    const candidate = retry();
    if (!candidate) continue;
    const unread = linesIn(candidate.errors);
    if (unread < bestLines || (winsTie && unread === bestLines)) {
      best = candidate;
      bestLines = unread;
    }
    if (bestLines === 0) break;
  }
  return best;
}
