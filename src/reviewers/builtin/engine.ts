/**
 * The builtin reviewer engine: runs one catalog skill over the changed files without a model.
 * ast-grep skills parse each file once (shared across skills) and run the skill's rules for that
 * language; the secrets skill runs secretlint over the text. Only findings on changed lines are
 * reported; a file that cannot be read as its language becomes a named gap, never a crash. A rule
 * with a `runtime` range runs only where the repository's stated runtime versions put it in range
 * (./runtime-version.ts), and its findings say which statement did. A rule's P2 idiom repeated
 * in a file is one finding listing every place (./group.ts).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse } from '@ast-grep/napi';
import { runCooperatively, type Steps, slicer, TURN_MS } from '../../core/cooperative';
import { isForeignCode, roleOfPath } from '../../core/file-roles';
import { pathSelected } from '../../core/globs';
import { type FindingDraft, FOUND_SECRETS } from '../../core/review';
import { fileNotAnalyzedGap, type Gap } from '../../core/runs';
import type { CatalogSkill, RuleLanguage } from '../../skills/catalog';
import type { BaseReader, ReviewerResult, ReviewFile } from '../types';
import { groupAcrossDirectory, groupRepeats } from './group';
import { ImportedHelpers } from './imported-helpers';
import { napiLanguage, type ParsedFile, parseOnce, ruleLanguageOf } from './languages';
import {
  type CompiledRule,
  compileRule,
  firstChangedLineIn,
  type MatchTarget,
  matchParsed,
} from './match-file';
import { matchInThread } from './match-pool';
import type { MatchReply } from './match-thread';
import { basePathOf, PreexistingCounter, type Touched } from './preexisting';
import { type RuntimeStatement, RuntimeTargets } from './runtime-version';
import { scanSecrets, secretVerdict } from './secrets';

export interface BuiltinRunOptions {
  /** The reviewer the findings are reported as. */
  reviewerId: string;
  signal: AbortSignal;
  /**
   * The runtime versions the repository states (its knowledge's `runtimes`). A rule with a
   * `runtime` runs only where they put the runtime's lowest version within the rule's range;
   * omitted or empty: no such rule runs.
   */
  runtimes?: readonly RuntimeStatement[] | undefined;
  /**
   * Milliseconds of matching before the event loop gets a turn (default TURN_MS); 0 gives it one
   * after every other rule and match (tests count them).
   */
  turnMs?: number;
  /**
   * The base's files. A rule finding on a line the change touched is not reported when the same
   * rule matched the same code (whitespace aside) in the file's base version: the change
   * re-indented, reformatted or moved it, it did not introduce it (./preexisting.ts). Omitted:
   * every finding on a changed line is reported.
   */
  readBase?: BaseReader | undefined;
  /**
   * The head's files (any of the repository's). A JavaScript/TypeScript file's relative imports are
   * read through it (the change's own files from the change), and an exported helper there whose
   * parameter reaches the sink of a `flow.callers` rule is a sink for the file's calls
   * (./imported-helpers.ts; one import deep). Omitted: imports are not followed.
   */
  readHead?: BaseReader | undefined;
  /**
   * Milliseconds of matching one file may take, counted over that file's own slices of work (files
   * matched side by side and the turns the server gets in between do not count): past it the file's
   * analysis stops and is a `file_analysis_budget` gap, with the findings made before it kept.
   * Default DEFAULT_FILE_BUDGET_MS (the service reads SVC_FILE_ANALYSIS_BUDGET_MS); 0: no budget.
   * Each skill has its own budget per file.
   */
  fileBudgetMs?: number | undefined;
  /**
   * Match each file in an analysis thread (./match-pool.ts) rather than on this one in slices: the
   * service sets it, so its event loop keeps answering while a review analyses 1 MB files (a native
   * search of such a file cannot be sliced). Abort ends a file's thread at once; `turnMs` there is
   * how often the budget is checked (default 50 ms).
   */
  analysisThread?: boolean | undefined;
}

/**
 * A file's matching budget when none is given. The largest file read (MAX_FILE_BYTES) of the worst
 * shape takes a few seconds (docs/benchmarks.md, bench:analysis); a run's liveness limit is 300 s.
 */
export const DEFAULT_FILE_BUDGET_MS = 30_000;

/** Files larger than this are not parsed (generated bundles, fixtures); each is a named gap. */
export const MAX_FILE_BYTES = 1_000_000;
/** Files in flight at once: parsing runs on the thread pool, matching on the main thread in slices. */
const CONCURRENCY = 4;

interface CompiledSkill {
  byLanguage: Map<RuleLanguage, CompiledRule[]>;
  /** Rules ast-grep rejected (a catalog defect, caught by the catalog test), by language. */
  invalid: Gap[];
}

const compiledSkills = new Map<string, Promise<CompiledSkill>>();

/**
 * Turns a skill's rules into napi configs once per skill hash, and checks each against an empty
 * tree of every language it names so a bad kind or pattern is found before any file is read. The
 * check takes a few hundred milliseconds for the catalog, so it yields between rules.
 */
export function compileSkill(skill: CatalogSkill): Promise<CompiledSkill> {
  let compiled = compiledSkills.get(skill.hash);
  if (!compiled) {
    compiled = runCooperatively(compileSteps(skill));
    compiledSkills.set(skill.hash, compiled);
  }
  return compiled;
}

function* compileSteps(skill: CatalogSkill): Steps<CompiledSkill> {
  const byLanguage = new Map<RuleLanguage, CompiledRule[]>();
  const invalid: Gap[] = [];
  for (const rule of skill.rules) {
    yield;
    const compiledRule = compileRule(skill.id, rule);
    for (const language of rule.languages) {
      try {
        parse(napiLanguage(language), '').root().findAll(compiledRule.config);
      } catch (error) {
        invalid.push({
          code: 'builtin_rule_invalid',
          message: `${skill.id}/${rule.id} (${language}, ${rule.source}) was not run: ${(error as Error).message.replace(/\s*\n\s*(\|->)?/g, ' ')}`,
        });
        continue;
      }
      const list = byLanguage.get(language) ?? [];
      list.push(compiledRule);
      byLanguage.set(language, list);
    }
  }
  return { byLanguage, invalid };
}

/**
 * The rules whose prefilter the content passes. Each test reads the whole file (a few to tens of
 * milliseconds for 1 MB), and this runs on the server's thread: it gives the event loop a turn
 * whenever this turn's cooperative work has had its share (core/cooperative.ts).
 */
async function rulesFor(rules: CompiledRule[], content: string): Promise<CompiledRule[]> {
  const turnOver = slicer(Number.POSITIVE_INFINITY);
  const passing: CompiledRule[] = [];
  for (const c of rules) {
    if (c.prefilter === null) {
      passing.push(c);
      continue;
    }
    if (turnOver()) await nextTurn();
    if (c.prefilter.test(content)) passing.push(c);
  }
  return passing;
}

/**
 * Loads the catalog and compiles every rule skill of it, so that the first review after a start
 * does not do it on the server's thread while it answers requests: parsing the rules' YAML and
 * checking each rule take about a second of CPU, in slices, but slices enough to delay requests
 * that need several turns of the event loop. `svc serve` and `svc worker` start it in the
 * background; a review that comes first awaits the same work (both are cached per process).
 */
export async function prepareBuiltinSkills(catalog: () => Promise<CatalogSkill[]>): Promise<void> {
  for (const skill of await catalog()) {
    if (skill.engine === 'ast-grep') await compileSkill(skill);
  }
}

/** Files a rule engine can read: present at head, text, diffed in full, with added lines. */
function readable(file: ReviewFile): file is ReviewFile & { content: string } {
  const d = file.diff;
  return (
    file.content !== null &&
    !d.binary &&
    d.skipped === null &&
    d.change !== 'deleted' &&
    d.changedLines.length > 0
  );
}

async function pool<T>(items: T[], limit: number, signal: AbortSignal, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal.throwIfAborted();
      const item = items[next++] as T;
      await work(item);
      // A parse already cached (the second skill on a file) or a scan that is all promises never
      // leaves the microtask queue: give the event loop a turn per file, so a long review does
      // not stop the server answering meanwhile.
      await nextTurn();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function runBuiltinSkill(
  skill: CatalogSkill,
  files: ReviewFile[],
  options: BuiltinRunOptions,
): Promise<ReviewerResult> {
  options.signal.throwIfAborted();
  const findings: FindingDraft[] = [];
  const gaps: Gap[] = [];
  const candidates = files.filter(readable);
  const tooLarge = (file: ReviewFile & { content: string }) => {
    if (file.content.length <= MAX_FILE_BYTES) return false;
    const lines = file.content.split('\n').length;
    gaps.push({
      code: 'builtin_file_too_large',
      message: `${file.diff.path}: ${file.content.length} characters, over the ${MAX_FILE_BYTES} the ${skill.id} reviewer reads`,
      // Named with the file, as a file not analyzed is: the review's coverage counts it by size.
      file: { path: file.diff.path, reason: 'too large', lines_left_out: lines, lines, share: 1 },
    });
    return true;
  };

  if (skill.engine === 'secretlint') {
    await pool(candidates, CONCURRENCY, options.signal, async (file) => {
      if (tooLarge(file)) return;
      const role = file.role ?? roleOfPath(file.diff.path);
      for (const m of await scanSecrets(skill, file.diff.path, file.content, role)) {
        const line = firstChangedLineIn(file.diff.changedLines, m.line, m.endLine);
        if (line === null) continue;
        const { severity, title } = secretVerdict(skill, m, role);
        findings.push({
          severity,
          path: file.diff.path,
          line,
          endLine: Math.max(line, m.endLine),
          title,
          body: secretBody(m.messageId),
          rule: `${skill.id}/${m.rule}`,
          category: skill.category,
          reviewer: options.reviewerId,
          [FOUND_SECRETS]: m[FOUND_SECRETS],
        });
      }
    });
    // A directory's P2 credentials (a test suite's throwaway keys) are one finding (./group.ts).
    const grouped = groupAcrossDirectory(findings);
    findings.length = 0;
    findings.push(...grouped);
  } else if (skill.engine === 'ast-grep') {
    const compiled = await compileSkill(skill);
    gaps.push(...compiled.invalid);
    const targets = new RuntimeTargets(options.runtimes);
    const keys = new Map<FindingDraft, string>();
    const touched: Touched<CompiledRule>[] = [];
    const imported = options.readHead
      ? new ImportedHelpers(
          options.readHead,
          new Map(candidates.map((f) => [f.diff.path, f.content])),
          (language) => compiled.byLanguage.get(language) ?? [],
        )
      : null;
    await pool(candidates, CONCURRENCY, options.signal, async (file) => {
      const language = ruleLanguageOf(file.diff.path, file.declaredLanguage);
      if (!language) return;
      const role = file.role ?? 'production';
      // Generated and vendored code was not written in this change: only secrets are looked for.
      if (isForeignCode(role)) return;
      const rules = await rulesFor(
        (compiled.byLanguage.get(language) ?? []).filter(
          (c) =>
            (role === 'production' || !c.rule.productionOnly) &&
            (c.rule.runtime === undefined || targets.applies(c.rule.runtime)) &&
            pathSelected(file.diff.path, c.rule.files, c.rule.ignores),
        ),
        file.content,
      );
      // A file may call a helper of a module it imports that runs a command, without naming any sink itself.
      const followsImports =
        imported !== null &&
        (compiled.byLanguage.get(language) ?? []).some(
          (c) =>
            c.rule.flow?.callers &&
            (role === 'production' || !c.rule.productionOnly) &&
            pathSelected(file.diff.path, c.rule.files, c.rule.ignores),
        );
      if ((rules.length === 0 && !followsImports) || tooLarge(file)) return;
      const importedSinks = followsImports
        ? await imported.forFile(file.diff.path, file.content, language)
        : [];
      if (rules.length === 0 && importedSinks.length === 0) return;
      const outcome = await matchOne(
        {
          path: file.diff.path,
          changedLines: file.diff.changedLines,
          ...(importedSinks.length > 0 ? { importedSinks } : {}),
        },
        language,
        file.content,
        file,
        skill.id,
        rules,
        options,
      );
      if ('parseFailed' in outcome) {
        const lines = file.content.split('\n').length;
        gaps.push(
          fileNotAnalyzedGap(
            { path: file.diff.path, reason: `not parsed as ${language}`, lines_left_out: lines, lines },
            `${outcome.parseFailed}; the ${skill.id} rules did not run on it`,
          ),
        );
        return;
      }
      const { found } = outcome;
      for (const [i, finding] of found.entries()) keys.set(finding, outcome.keys[i] as string);
      gaps.push(...outcome.gaps);
      if (outcome.budget) {
        gaps.push({
          code: 'file_analysis_budget',
          message: `${file.diff.path}: the ${skill.id} rules stopped after ${Math.round(outcome.budget.spentMs)} ms of analysis, over the ${outcome.budget.budgetMs} ms a file may take (SVC_FILE_ANALYSIS_BUDGET_MS); ${found.length} finding(s) made before were kept, the rest of the file was not analysed`,
        });
      }
      findings.push(...found);
      const basePath = found.length > 0 ? basePathOf(file) : null;
      if (basePath !== null) {
        const fired = new Set(found.map((f) => f.rule));
        touched.push({ file, basePath, language, rules: rules.filter((r) => fired.has(r.ruleId)), found });
      }
    });
    if (options.readBase && touched.length > 0) {
      const dropped = await dropPreexisting(skill.id, touched, keys, options.readBase, options, gaps);
      const kept = findings.filter((f) => !dropped.has(f));
      findings.length = 0;
      findings.push(...kept);
    }
    // After the base is compared, so a copy the base already had is left out per copy (./preexisting.ts).
    const grouped = groupRepeats(findings);
    findings.length = 0;
    findings.push(...grouped);
  } else {
    gaps.push({
      code: 'builtin_engine_unsupported',
      message: `skill ${skill.id} runs on the ${skill.engine} engine, not the builtin one`,
    });
  }

  findings.sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line || a.rule.localeCompare(b.rule));
  return {
    findings,
    gaps,
    usage: [],
    skills: [{ skill_id: skill.id, source: 'catalog', executed_hash: skill.hash }],
    backend: { harness: 'builtin', provider: null, model: null },
  };
}

/**
 * The findings of `touched` files whose rule matched the same code in the file's base version
 * (./preexisting.ts). Only the rules that fired run on the base, and only for files they fired
 * in, so a review with few findings pays next to nothing. Each one not reported is named in a
 * gap, so nothing is hidden.
 */
async function dropPreexisting(
  skillId: string,
  touched: Touched<CompiledRule>[],
  keys: Map<FindingDraft, string>,
  readBase: BaseReader,
  options: BuiltinRunOptions,
  gaps: Gap[],
): Promise<Set<FindingDraft>> {
  let bases: Map<string, string | null>;
  try {
    bases = await readBase(touched.map((t) => t.basePath));
  } catch (error) {
    gaps.push({
      code: 'builtin_base_unreadable',
      message: `the base's files could not be read (${(error as Error).message}), so findings the change only touched are reported too`,
    });
    return new Set();
  }
  const counter = new PreexistingCounter();
  for (const { file, basePath, language, rules, found } of touched) {
    options.signal.throwIfAborted();
    const base = bases.get(basePath);
    if (!base || base.length > MAX_FILE_BYTES) continue;
    // The base as a file whose every line counts, so every match there is kept.
    const lines = base.split('\n').length;
    const outcome = await matchOne(
      { path: file.diff.path, changedLines: [{ start: 1, end: lines }] },
      language,
      base,
      // Its own parse: the base is other content than the file's head.
      { base: file },
      skillId,
      rules,
      options,
    );
    // A base that cannot be parsed, or is too costly to analyse, proves nothing: its findings stay reported.
    if ('parseFailed' in outcome || outcome.budget) continue;
    counter.add(file.diff.path, outcome.keys, found, keys);
  }
  const gap = counter.gap();
  if (gap) gaps.push(gap);
  return counter.dropped;
}

/** One file's budget in milliseconds, as runCooperatively takes it (undefined: none). */
function budgetOf(options: BuiltinRunOptions): number | undefined {
  const budgetMs = options.fileBudgetMs ?? DEFAULT_FILE_BUDGET_MS;
  return budgetMs > 0 ? budgetMs : undefined;
}

/** What matching one file gave: as an analysis thread replies (./match-thread.ts). */
type MatchOutcome = Exclude<MatchReply, { error: string }>;

/**
 * Parses `content` and runs `rules` over it, in an analysis thread (options.analysisThread) or on
 * this thread in slices. `parseOwner` is what this thread caches the parse under (languages.ts).
 */
async function matchOne(
  target: MatchTarget,
  language: RuleLanguage,
  content: string,
  parseOwner: object,
  skillId: string,
  rules: CompiledRule[],
  options: BuiltinRunOptions,
): Promise<MatchOutcome> {
  if (options.analysisThread) {
    const reply = await matchInThread(
      {
        target,
        language,
        content,
        skillId,
        rules: rules.map((r) => r.rule),
        runtimes: options.runtimes,
        reviewer: options.reviewerId,
        budgetMs: budgetOf(options),
        turnMs: options.turnMs,
      },
      options.signal,
    );
    if ('error' in reply) throw new Error(`analysis thread: ${reply.error}`);
    return reply;
  }
  let parsed: ParsedFile;
  try {
    parsed = await parseOnce(parseOwner, language, content);
  } catch (error) {
    return { id: 0, parseFailed: (error as Error).message };
  }
  options.signal.throwIfAborted();
  const matched = await matchParsed(target, parsed, rules, {
    reviewer: options.reviewerId,
    runtimes: options.runtimes,
    turnMs: options.turnMs ?? TURN_MS,
    budgetMs: budgetOf(options),
    signal: options.signal,
  });
  return { id: 0, ...matched };
}

function secretBody(messageId: string): string {
  const base =
    'A credential in the source is readable by everyone with access to the repository, its forks, ' +
    'CI logs and every clone, and it stays in git history after the line is deleted.\n\n' +
    '**Fix:** revoke or rotate the credential at its provider first, then load it at runtime ' +
    '(environment variable, secret manager, CI secret) instead of committing it.';
  return messageId === 'AWSAccountID'
    ? 'An AWS account id is not a secret on its own, but next to code it tells an attacker which account ' +
        'to target. Prefer configuration over hard-coding it.'
    : base;
}
