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
import { type LineRegion, linesIn, recoverParse } from './parse-recovery';

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

/** Linguist's names and aliases of the rule languages (`linguist-language=<name>`, lower-cased). */
const BY_LINGUIST_NAME: Record<string, RuleLanguage> = {
  javascript: 'javascript',
  js: 'javascript',
  node: 'javascript',
  jsx: 'javascript',
  typescript: 'typescript',
  ts: 'typescript',
  tsx: 'tsx',
  python: 'python',
  python3: 'python',
  py: 'python',
  go: 'go',
  golang: 'go',
  java: 'java',
};

/**
 * The grammar a path is parsed with: the language `.gitattributes` declares for it
 * (`linguist-language`, ReviewFile.declaredLanguage) when given, else by extension; null when no
 * rule language covers it (a declared language no rule reads, such as `c++` or `text`, included).
 * TypeScript declared on a `.tsx` file is read with the TSX grammar, which JSX needs.
 */
export function ruleLanguageOf(path: string, declared?: string): RuleLanguage | null {
  const dot = path.lastIndexOf('.');
  const extension = dot < 0 || dot < path.lastIndexOf('/') ? null : path.slice(dot + 1).toLowerCase();
  const byExtension = extension === null ? null : (BY_EXTENSION[extension] ?? null);
  if (declared === undefined) return byExtension;
  const language = BY_LINGUIST_NAME[declared.toLowerCase().replace(/[\s_]+/g, '-')] ?? null;
  return language === 'typescript' && byExtension === 'tsx' ? 'tsx' : language;
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
  /** The parse the rules read: replaced by a better one when `parseErrors` recovered the file. */
  root: SgRoot;
  /**
   * 0-based line ranges the parser could not make sense of (tree-sitter ERROR nodes, and the
   * declarations a recovery set aside); null until `parseErrors` searched for them.
   */
  errors: LineRegion[] | null;
  /** How a file with a large error was read again (./parse-recovery.ts); null: as first parsed. */
  recovery: string | null;
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
    (root): ParsedFile => ({ language, root, errors: null, recovery: null }),
  );
  cache.set(owner, { content, parsed });
  return parsed;
}

/**
 * Unread lines past which a file is parsed again (./parse-recovery.ts). An error of a few lines is
 * tree-sitter's local recovery around the construct it cannot read; a larger one may have
 * swallowed valid code after it.
 */
export const RECOVER_ABOVE_LINES = 3;

/**
 * The file's unparseable regions, searched once per parse in slices (./find-sliced.ts): on the
 * main thread, a search of a 1 MB tree in one piece would stop the server for a few hundred ms.
 * When they cover more than RECOVER_ABOVE_LINES, the file is read again and the better parse
 * replaces `parsed.root`: call this before reading the tree.
 */
export function* parseErrors(parsed: ParsedFile, yieldNow: () => boolean): Steps<LineRegion[]> {
  if (parsed.errors) return parsed.errors;
  const nodes = yield* findAllSliced(parsed.root.root(), { rule: { kind: 'ERROR' } }, yieldNow);
  let errors = nodes.map((n) => {
    const r = n.range();
    return { start: r.start.line, end: r.end.line };
  });
  if (linesIn(errors) > RECOVER_ABOVE_LINES) {
    yield;
    const recovered = recoverParse(NAPI_LANG[parsed.language], parsed.root.root().text(), errors);
    if (recovered) {
      parsed.root = recovered.root;
      parsed.recovery = recovered.how;
      errors = recovered.errors;
    }
  }
  parsed.errors = errors;
  return errors;
}

/** The napi language id for a rule language (for compiling and validating rules). */
export const napiLanguage = (language: RuleLanguage) => {
  ensureLanguages();
  return NAPI_LANG[language];
};
