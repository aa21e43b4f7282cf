/**
 * Credentials a review finds are never repeated where svc keeps or shows findings: each is
 * replaced by SECRET_MASK, whatever its length (the length is a hint too). The secrets skill
 * masks its messages with it, and the ledgers store a finding's anchor (the code it points at)
 * masked, so the database and the CLI's ledger file hold no planted credential either.
 */
import { normalizeAnchor } from './review';

export const SECRET_MASK = '********';

/** `text` with every occurrence of each of `values` replaced by SECRET_MASK, longest first. */
export function maskSecrets(text: string, values: Iterable<string>): string {
  const sorted = [...new Set(values)].filter((v) => v !== '').sort((a, b) => b.length - a.length);
  return sorted.reduce((out, value) => out.replaceAll(value, SECRET_MASK), text);
}

/**
 * A normalized anchor with the credentials in it masked: each value as written and as
 * normalized (a private key spans lines, which the anchor's whitespace folding joins).
 */
export function maskAnchor(anchor: string, values: Iterable<string>): string {
  const all = [...values];
  return maskSecrets(anchor, [...all, ...all.map(normalizeAnchor)]);
}

/**
 * The most characters a mask in a stored anchor stands for when the anchor is searched for
 * again: a long private key, not the rest of a file.
 */
const MASKED_SPAN_LIMIT = 8_192;

/**
 * Whether a stored anchor still occurs in `normalizedText` (a file's text, normalized). A plain
 * anchor must occur as it is; in a masked one each SECRET_MASK stands for one or more characters
 * (at most MASKED_SPAN_LIMIT), so the code around a credential is still recognised, and an
 * anchor that was nothing but a credential is found only where something of it remains.
 */
export function anchorOccursIn(anchor: string, normalizedText: string): boolean {
  if (anchor === '') return true;
  if (!anchor.includes(SECRET_MASK)) return normalizedText.includes(anchor);
  const parts = anchor.split(SECRET_MASK);
  if (parts.every((part) => part.trim() === '')) return false;
  const [first, ...rest] = parts as [string, ...string[]];
  // Every place the first literal part occurs (one place when the anchor starts with a mask: the
  // start of the text is as early as it gets), then each next part within a mask's span.
  for (let start = normalizedText.indexOf(first); start !== -1; ) {
    if (followsFrom(rest, normalizedText, start + first.length)) return true;
    if (first === '') return false;
    start = normalizedText.indexOf(first, start + 1);
  }
  return false;
}

/** Whether each of `parts` follows in `text` from `at`, after a gap of 1..MASKED_SPAN_LIMIT. */
function followsFrom(parts: string[], text: string, at: number): boolean {
  let end = at;
  for (const part of parts) {
    // Searched in a window, so a part that is not near costs the window, not the rest of the file.
    const window = text.slice(end + 1, end + MASKED_SPAN_LIMIT + part.length);
    if (window === '') return false;
    const found = window.indexOf(part);
    if (found === -1) return false;
    end = end + 1 + found + part.length;
  }
  return true;
}
