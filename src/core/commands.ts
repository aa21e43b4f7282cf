/**
 * Pull request comment commands (`@service …`) and finding-thread replies (`wontfix: …`,
 * `fix this`). Parsing only; what they do lives with the code host integration.
 */
export type Command =
  | { kind: 'help' }
  | { kind: 'review_off'; reason: string | null }
  | { kind: 'review_on' }
  | { kind: 'review_now' }
  | { kind: 'review_force' }
  | { kind: 'review_status' }
  | { kind: 'unknown'; text: string };

export const COMMAND_HELP = [
  '`@service` or `@service help` — this list',
  '`@service review off [reason]` — turn automatic review off for this pull request',
  '`@service review on` — turn it back on and review now',
  '`@service review now` — one review, without changing the setting',
  '`@service review force` — review again even when the head commit was already reviewed',
  "`@service review status` — the pull request's current review state",
  'On a finding: `wontfix: <reason>` dismisses it; `fix this` opens a fix task.',
];

/**
 * The first `@service` command in a comment, or null when the comment does not address svc.
 * `mention` is the handle (default `@service`); quoted lines (`> …`) are ignored so a quoted
 * command does not run twice.
 */
export function parseCommand(body: string, mention = '@service'): Command | null {
  const lines = body.split(/\r?\n/).filter((line) => !line.trimStart().startsWith('>'));
  const escaped = mention.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(?:^|\\s)${escaped}(?![\\w-])(.*)$`, 'i');
  for (const line of lines) {
    const match = pattern.exec(line);
    if (!match) continue;
    const rest = (match[1] ?? '').trim();
    const words = rest.split(/\s+/).filter(Boolean);
    const [first, second] = [words[0]?.toLowerCase(), words[1]?.toLowerCase()];
    if (!first || first === 'help') return { kind: 'help' };
    if (first !== 'review') return { kind: 'unknown', text: rest };
    switch (second) {
      case 'off':
        return { kind: 'review_off', reason: words.slice(2).join(' ') || null };
      case 'on':
        return { kind: 'review_on' };
      case 'now':
      case undefined:
        return { kind: 'review_now' };
      case 'force':
        return { kind: 'review_force' };
      case 'status':
        return { kind: 'review_status' };
      default:
        return { kind: 'unknown', text: rest };
    }
  }
  return null;
}

export type ThreadReply = { kind: 'wontfix'; reason: string } | { kind: 'fix_this' } | null;

/** A reply on a finding's thread: `wontfix: <reason>` (a reason is required) or `fix this`. */
export function parseThreadReply(body: string): ThreadReply {
  const text = body
    .split(/\r?\n/)
    .filter((line) => !line.trimStart().startsWith('>'))
    .join('\n')
    .trim();
  const wontfix = /^wontfix\s*:\s*(\S[\s\S]*)$/i.exec(text);
  if (wontfix?.[1]) return { kind: 'wontfix', reason: wontfix[1].trim() };
  if (/^(?:@service\s+)?fix this\b/i.test(text)) return { kind: 'fix_this' };
  return null;
}
