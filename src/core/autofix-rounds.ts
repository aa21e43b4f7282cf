/**
 * Counting autofix rounds. The autofix contract (./fix-prompt.ts) has a coding agent answer the
 * check's fix prompt with one comment titled "autofix round N" and one commit whose message holds
 * `[autofix]`, at most MAX_AUTOFIX_ROUNDS times; after that a person decides. The limit is only
 * kept if svc counts: from the pull request's commits and comments it tells which round the
 * next fix prompt asks for, and when none is left.
 */

export const MAX_AUTOFIX_ROUNDS = 2;

/** The mark an autofix commit carries in its message. */
export const AUTOFIX_COMMIT_MARK = '[autofix]';

/**
 * The title of a round comment, on its first non-blank line: `autofix round 2`, also as a
 * Markdown heading or in bold (`## Autofix round 2`, `**autofix round 2**`).
 */
const ROUND_TITLE = /^[#>*_\s]*autofix round (\d{1,3})\b/i;

export interface AutofixRounds {
  /** Rounds an agent has done: the more of `[autofix]` commits and the highest round comment. */
  done: number;
  limit: number;
  /** The round the fix prompt asks for now; null when the limit is reached. */
  next: number | null;
  limitReached: boolean;
  /** The `[autofix]` commits of the pull request, oldest first. */
  commits: string[];
  /** The round numbers of the round comments, in the order they were posted. */
  comments: number[];
}

/** The round a comment's title names, or null when it is no round comment. */
export function roundOfComment(body: string): number | null {
  const firstLine = body.split('\n').find((line) => line.trim() !== '') ?? '';
  const match = ROUND_TITLE.exec(firstLine);
  return match ? Number(match[1]) : null;
}

export function isAutofixCommit(message: string): boolean {
  return message.toLowerCase().includes(AUTOFIX_COMMIT_MARK);
}

/**
 * The rounds done on a pull request, from its commits (base..head) and its comments. Either mark
 * counts a round: an agent that forgot the comment, or whose commit is still to be pushed, has
 * still spent it.
 */
export function countAutofixRounds(
  commits: readonly { sha: string; message: string }[],
  comments: readonly { body: string }[],
  limit = MAX_AUTOFIX_ROUNDS,
): AutofixRounds {
  const autofixCommits = commits.filter((c) => isAutofixCommit(c.message)).map((c) => c.sha);
  const rounds = comments.map((c) => roundOfComment(c.body)).filter((n): n is number => n !== null);
  const done = Math.max(autofixCommits.length, ...rounds, 0);
  const limitReached = done >= limit;
  return {
    done,
    limit,
    next: limitReached ? null : done + 1,
    limitReached,
    commits: autofixCommits,
    comments: rounds,
  };
}

/** One line for a check's summary: which round is next, or that a person decides now. */
export function roundsSentence(rounds: AutofixRounds): string {
  if (rounds.limitReached)
    return `Autofix limit reached: ${rounds.done} of ${rounds.limit} rounds done. A coding agent must stop here and ask a person to decide on the open findings.`;
  return `Autofix: round ${rounds.next} of ${rounds.limit} is next (${rounds.done} done).`;
}
