/**
 * The analysis thread (node:worker_threads): parses a file and runs a skill's rules over it
 * (./match-file.ts), for ./match-pool.ts. It exists because part of the analysis of a large file
 * cannot be cut into slices on the main thread: one native `findAll` over a module of thousands
 * of small functions runs 70-800 ms, and the tree's JavaScript wrappers make the main heap's
 * collections long. Here they stop nothing but this thread.
 *
 * One request at a time. The last few parses are kept (by content) with their flow memos, so the
 * next skill over the same file (security, then correctness) and the base of a file reuse them.
 */
import { parentPort } from 'node:worker_threads';
import type { FindingDraft } from '../../core/review';
import type { Gap } from '../../core/runs';
import type { RuleLanguage, SkillRule } from '../../skills/catalog';
import { parseOnce } from './languages';
import { compileRule, type MatchTarget, matchParsed } from './match-file';
import type { RuntimeStatement } from './runtime-version';

export interface MatchRequest {
  id: number;
  target: MatchTarget;
  language: RuleLanguage;
  content: string;
  skillId: string;
  /** The rules to run, as the main thread chose them for this file. */
  rules: SkillRule[];
  runtimes: readonly RuntimeStatement[] | undefined;
  reviewer: string;
  /** As runCooperatively's budgetMs: this file's own work, in milliseconds; undefined: none. */
  budgetMs: number | undefined;
  /** Milliseconds between two checks of the budget; default SLICE_MS (tests give 0). */
  turnMs: number | undefined;
}

export type MatchReply =
  | {
      id: number;
      found: FindingDraft[];
      /** Each finding's match key (./preexisting.ts), in the order of `found`. */
      keys: string[];
      gaps: Gap[];
      /** Set when the budget stopped the file: the findings made before it are in `found`. */
      budget: { spentMs: number; budgetMs: number } | null;
    }
  | { id: number; parseFailed: string }
  | { id: number; error: string };

/** Parses kept, newest last: a review's largest files are 1 MB, and each parse holds its tree. */
const KEPT_PARSES = 4;
/**
 * Slices of matching between two checks of the budget: nothing else waits on this thread's event
 * loop, so the slices are longer than the main thread's TURN_MS; a spent budget still ends the
 * file within this long.
 */
const SLICE_MS = 50;
const parses: { language: RuleLanguage; content: string; owner: object }[] = [];

/** The object the parse of this content is cached under (languages.ts parseOnce), reused if kept. */
function parseOwner(language: RuleLanguage, content: string): object {
  const index = parses.findIndex((p) => p.language === language && p.content === content);
  const kept = index >= 0 ? parses.splice(index, 1)[0] : undefined;
  const entry = kept ?? { language, content, owner: {} };
  parses.push(entry);
  if (parses.length > KEPT_PARSES) parses.shift();
  return entry.owner;
}

export async function analyse(request: MatchRequest): Promise<MatchReply> {
  const { id, target, language, content } = request;
  let parsed: Awaited<ReturnType<typeof parseOnce>>;
  try {
    parsed = await parseOnce(parseOwner(language, content), language, content);
  } catch (error) {
    return { id, parseFailed: (error as Error).message };
  }
  const rules = request.rules.map((rule) => compileRule(request.skillId, rule));
  const matched = await matchParsed(target, parsed, rules, {
    reviewer: request.reviewer,
    runtimes: request.runtimes,
    turnMs: request.turnMs ?? SLICE_MS,
    budgetMs: request.budgetMs,
  });
  return { id, ...matched };
}

parentPort?.on('message', (request: MatchRequest) => {
  analyse(request).then(
    (reply) => parentPort?.postMessage(reply),
    (error: unknown) =>
      parentPort?.postMessage({ id: request.id, error: (error as Error)?.stack ?? String(error) }),
  );
});
