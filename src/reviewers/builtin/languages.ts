/**
 * Which files the builtin rules read, in which grammar, and one parse per file shared by every
 * skill that reads it (the parse is cached on the ReviewFile object).
 */

import go from '@ast-grep/lang-go';
import java from '@ast-grep/lang-java';
import python from '@ast-grep/lang-python';
import { Lang, parseAsync, registerDynamicLanguage, type SgRoot } from '@ast-grep/napi';
import type { Steps } from '../../core/cooperative';
import type { RuleLanguage } from '../../skills/catalog';
import { findAllSliced } from './find-sliced';

let registered = false;
function ensureLanguages() {
  if (registered) return;
  registerDynamicLanguage({ python, go, java });
  registered = true;
}

const BY_EXTENSION: Record<string, RuleLanguage> = {
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  py: 'python',
  pyi: 'python',
  go: 'go',
  java: 'java',
};

/** The grammar a path is parsed with, by extension; null when no rule language covers it. */
export function ruleLanguageOf(path: string): RuleLanguage | null {
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return null;
  return BY_EXTENSION[path.slice(dot + 1).toLowerCase()] ?? null;
}

const NAPI_LANG: Record<RuleLanguage, string> = {
  // tree-sitter-javascript parses JSX too.
  javascript: Lang.JavaScript,
  typescript: Lang.TypeScript,
  tsx: Lang.Tsx,
  python: 'python',
  go: 'go',
  java: 'java',
};

export interface ParsedFile {
  language: RuleLanguage;
  root: SgRoot;
  /**
   * 0-based line ranges the parser could not make sense of (tree-sitter ERROR nodes); null until
   * `parseErrors` searched for them.
   */
  errors: { start: number; end: number }[] | null;
}

const cache = new WeakMap<object, { content: string; parsed: Promise<ParsedFile> }>();

/**
 * Parses `content` once per `owner` (a ReviewFile) and language; later calls with the same owner
 * and content reuse the tree. Parsing runs on libuv's thread pool, so it neither blocks the event
 * loop (heartbeats keep flowing) nor leaves a second core idle.
 */
export function parseOnce(owner: object, language: RuleLanguage, content: string): Promise<ParsedFile> {
  const hit = cache.get(owner);
  if (hit && hit.content === content) return hit.parsed;
  ensureLanguages();
  const parsed = parseAsync(NAPI_LANG[language], content).then(
    (root): ParsedFile => ({ language, root, errors: null }),
  );
  cache.set(owner, { content, parsed });
  return parsed;
}

/**
 * The file's unparseable regions, searched once per parse in slices (./find-sliced.ts): on the
 * main thread, a search of a 1 MB tree in one piece would stop the server for a few hundred ms.
 */
export function* parseErrors(
  parsed: ParsedFile,
  yieldNow: () => boolean,
): Steps<{ start: number; end: number }[]> {
  if (parsed.errors) return parsed.errors;
  const nodes = yield* findAllSliced(parsed.root.root(), { rule: { kind: 'ERROR' } }, yieldNow);
  parsed.errors = nodes.map((n) => {
    const r = n.range();
    return { start: r.start.line, end: r.end.line };
  });
  return parsed.errors;
}

/** The napi language id for a rule language (for compiling and validating rules). */
export const napiLanguage = (language: RuleLanguage) => {
  ensureLanguages();
  return NAPI_LANG[language];
};
