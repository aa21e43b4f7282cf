/**
 * The builtin reviewer engine: runs one catalog skill over the changed files without a model.
 * ast-grep skills parse each file once (shared across skills) and run the skill's rules for that
 * language; the secrets skill runs secretlint over the text. Only findings on changed lines are
 * reported; a file that cannot be read as its language becomes a named gap, never a crash. A rule
 * with a `runtime` range runs only where the repository's stated runtime versions put it in range
 * (./runtime-version.ts), and its findings say which statement did.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { NapiConfig, SgNode } from '@ast-grep/napi';
import { parse } from '@ast-grep/napi';
import { runCooperatively, StepBudgetExhausted, type Steps, slicer, TURN_MS } from '../../core/cooperative';
import { isForeignCode, roleOfPath } from '../../core/file-roles';
import { pathSelected } from '../../core/globs';
import { type FindingDraft, FOUND_SECRETS } from '../../core/review';
import type { Gap } from '../../core/runs';
import type { CatalogSkill, RuleLanguage, SkillRule } from '../../skills/catalog';
import type { BaseReader, ReviewerResult, ReviewFile } from '../types';
import { findAllSliced } from './find-sliced';
import { prepareFlow, shapeOf } from './flow';
import { napiLanguage, type ParsedFile, parseErrors, parseOnce, ruleLanguageOf } from './languages';
import { basePathOf, matchKey, PreexistingCounter, type Touched } from './preexisting';
import { type RuntimeStatement, RuntimeTargets } from './runtime-version';
import { scanSecrets, secretSeverity } from './secrets';

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
   * Milliseconds of matching one file may take, counted over that file's own slices of work (files
   * matched side by side and the turns the server gets in between do not count): past it the file's
   * analysis stops and is a `file_analysis_budget` gap, with the findings made before it kept.
   * Default DEFAULT_FILE_BUDGET_MS (the service reads SVC_FILE_ANALYSIS_BUDGET_MS); 0: no budget.
   * Each skill has its own budget per file.
   */
  fileBudgetMs?: number | undefined;
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

interface CompiledRule {
  rule: SkillRule;
  /** `<skill>/<rule>` */
  ruleId: string;
  config: NapiConfig;
  /** The rule's `flow.text`, compiled. */
  flowText: RegExp | null;
  /** The rule's `prefilter`, compiled: a file without a match cannot hold a finding. */
  prefilter: RegExp | null;
}

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
    const config = {
      rule: rule.rule,
      ...(rule.constraints ? { constraints: rule.constraints } : {}),
      ...(rule.utils ? { utils: rule.utils } : {}),
    } as NapiConfig;
    for (const language of rule.languages) {
      try {
        parse(napiLanguage(language), '').root().findAll(config);
      } catch (error) {
        invalid.push({
          code: 'builtin_rule_invalid',
          message: `${skill.id}/${rule.id} (${language}, ${rule.source}) was not run: ${(error as Error).message.replace(/\s*\n\s*(\|->)?/g, ' ')}`,
        });
        continue;
      }
      const list = byLanguage.get(language) ?? [];
      const flowText = rule.flow?.text ? new RegExp(rule.flow.text, 'i') : null;
      const prefilter = rule.prefilter ? new RegExp(rule.prefilter) : null;
      list.push({ rule, ruleId: `${skill.id}/${rule.id}`, config, flowText, prefilter });
      byLanguage.set(language, list);
    }
  }
  return { byLanguage, invalid };
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

/** The first changed line within [start, end] (1-based, inclusive), or null. */
function firstChangedLineIn(file: ReviewFile, start: number, end: number): number | null {
  let best: number | null = null;
  for (const r of file.diff.changedLines) {
    if (r.end < start || r.start > end) continue;
    const candidate = Math.max(r.start, start);
    if (best === null || candidate < best) best = candidate;
  }
  return best;
}

const METAVAR = /\$([A-Z_][A-Z0-9_]*)/g;

/** Replaces `$NAME` with the (first line of the) text the metavariable matched. */
function interpolate(template: string, node: SgNode): string {
  return template.replace(METAVAR, (whole, name: string) => {
    const text = node.getMatch(name)?.text();
    if (text === undefined) return whole;
    const line = text.split('\n')[0] ?? '';
    return line.length > 60 ? `${line.slice(0, 57)}...` : line;
  });
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
    gaps.push({
      code: 'builtin_file_too_large',
      message: `${file.diff.path}: ${file.content.length} characters, over the ${MAX_FILE_BYTES} the ${skill.id} reviewer reads`,
    });
    return true;
  };

  if (skill.engine === 'secretlint') {
    await pool(candidates, CONCURRENCY, options.signal, async (file) => {
      if (tooLarge(file)) return;
      for (const m of await scanSecrets(
        skill,
        file.diff.path,
        file.content,
        file.role ?? roleOfPath(file.diff.path),
      )) {
        const line = firstChangedLineIn(file, m.line, m.endLine);
        if (line === null) continue;
        findings.push({
          severity: secretSeverity(skill, m.messageId),
          path: file.diff.path,
          line,
          endLine: Math.max(line, m.endLine),
          title: `Credential committed: ${m.message.replace(/^found\s+/i, '')}`,
          body: secretBody(m.messageId),
          rule: `${skill.id}/${m.rule}`,
          category: skill.category,
          reviewer: options.reviewerId,
          [FOUND_SECRETS]: m[FOUND_SECRETS],
        });
      }
    });
  } else if (skill.engine === 'ast-grep') {
    const compiled = await compileSkill(skill);
    gaps.push(...compiled.invalid);
    const targets = new RuntimeTargets(options.runtimes);
    const keys = new Map<FindingDraft, string>();
    const touched: Touched<CompiledRule>[] = [];
    await pool(candidates, CONCURRENCY, options.signal, async (file) => {
      const language = ruleLanguageOf(file.diff.path);
      if (!language) return;
      const role = file.role ?? 'production';
      // Generated and vendored code was not written in this change: only secrets are looked for.
      if (isForeignCode(role)) return;
      const rules = (compiled.byLanguage.get(language) ?? []).filter(
        (c) =>
          (role === 'production' || !c.rule.productionOnly) &&
          (c.rule.runtime === undefined || targets.applies(c.rule.runtime)) &&
          pathSelected(file.diff.path, c.rule.files, c.rule.ignores) &&
          (c.prefilter === null || c.prefilter.test(file.content)),
      );
      if (rules.length === 0 || tooLarge(file)) return;
      let parsed: ParsedFile;
      try {
        parsed = await parseOnce(file, language, file.content);
      } catch (error) {
        gaps.push({
          code: 'builtin_parse_failed',
          message: `${file.diff.path}: not parsed as ${language} (${(error as Error).message}); the ${skill.id} rules did not run on it`,
        });
        return;
      }
      options.signal.throwIfAborted();
      const found: FindingDraft[] = [];
      try {
        await runCooperatively(
          matchFile(
            file,
            parsed,
            rules,
            options.reviewerId,
            gaps,
            targets,
            options.turnMs ?? TURN_MS,
            found,
            keys,
          ),
          stepLimits(options),
        );
      } catch (error) {
        if (!(error instanceof StepBudgetExhausted)) throw error;
        gaps.push({
          code: 'file_analysis_budget',
          message: `${file.diff.path}: the ${skill.id} rules stopped after ${Math.round(error.spentMs)} ms of analysis, over the ${error.budgetMs} ms a file may take (SVC_FILE_ANALYSIS_BUDGET_MS); ${found.length} finding(s) made before were kept, the rest of the file was not analysed`,
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
      const dropped = await dropPreexisting(touched, keys, options.readBase, targets, options, gaps);
      const kept = findings.filter((f) => !dropped.has(f));
      findings.length = 0;
      findings.push(...kept);
    }
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
  touched: Touched<CompiledRule>[],
  keys: Map<FindingDraft, string>,
  readBase: BaseReader,
  targets: RuntimeTargets,
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
    const baseFile: ReviewFile = {
      ...file,
      diff: { ...file.diff, changedLines: [{ start: 1, end: lines }] },
      content: base,
    };
    let parsed: ParsedFile;
    try {
      parsed = await parseOnce(baseFile, language, base);
    } catch {
      continue; // a base that cannot be parsed proves nothing: its findings stay reported
    }
    const baseKeys = new Map<FindingDraft, string>();
    try {
      await runCooperatively(
        matchFile(
          baseFile,
          parsed,
          rules,
          options.reviewerId,
          [],
          targets,
          options.turnMs ?? TURN_MS,
          [],
          baseKeys,
        ),
        stepLimits(options),
      );
    } catch (error) {
      // A base too costly to analyse proves nothing: its findings stay reported.
      if (error instanceof StepBudgetExhausted) continue;
      throw error;
    }
    counter.add(file.diff.path, [...baseKeys.values()], found, keys);
  }
  const gap = counter.gap();
  if (gap) gaps.push(gap);
  return counter.dropped;
}

/** What stops one file's matching early: the run's signal, and the file's budget. */
function stepLimits(options: BuiltinRunOptions) {
  const budgetMs = options.fileBudgetMs ?? DEFAULT_FILE_BUDGET_MS;
  return { signal: options.signal, budgetMs: budgetMs > 0 ? budgetMs : undefined };
}

/**
 * Runs the rules over one parsed file, yielding every few milliseconds (core/cooperative.ts): a
 * file where hundreds of matches each need a data-flow walk takes hundreds of milliseconds, and the
 * server must go on answering meanwhile. Findings go to `out` as they are made, so those made
 * before the run stops it (its signal, the file's budget) are still there.
 */
function* matchFile(
  file: ReviewFile,
  parsed: ParsedFile,
  rules: CompiledRule[],
  reviewer: string,
  gaps: Gap[],
  targets: RuntimeTargets,
  turnMs: number,
  out: FindingDraft[],
  keys?: Map<FindingDraft, string>,
): Steps<FindingDraft[]> {
  const seen = new Set<string>();
  const root = parsed.root.root();
  const tick = slicer(Number.POSITIVE_INFINITY, turnMs);
  const errors = yield* parseErrors(parsed, tick);
  let flowPrepared = false;
  let droppedInErrors = 0;
  for (const compiled of rules) {
    if (tick()) yield;
    let nodes: SgNode[];
    try {
      nodes = yield* findAllSliced(root, compiled.config, tick);
    } catch (error) {
      gaps.push({
        code: 'builtin_rule_failed',
        message: `${compiled.ruleId} on ${file.diff.path}: ${(error as Error).message.split('\n')[0]}`,
      });
      continue;
    }
    if (compiled.rule.flow && nodes.length > 0 && !flowPrepared) {
      // The flow adapter's search of the whole file, in slices, before its first question.
      yield* prepareFlow(parsed.language, root, parsed, tick);
      flowPrepared = true;
    }
    for (const node of nodes) {
      if (tick()) yield;
      const range = node.range();
      // Text the parser could not read may be matched as something it is not: no finding there.
      if (errors.some((e) => e.start <= range.end.line && e.end >= range.start.line)) {
        droppedInErrors++;
        continue;
      }
      if (!flowReaches(compiled, node, parsed)) continue;
      const start = range.start.line + 1;
      const end =
        range.end.column === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
      const line = firstChangedLineIn(file, start, end);
      if (line === null) continue;
      const key = `${compiled.ruleId}:${start}:${end}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const { rule } = compiled;
      const body = interpolate(rule.note, node);
      const finding: FindingDraft = {
        severity: rule.severity,
        path: file.diff.path,
        line,
        endLine: Math.max(line, end),
        title: interpolate(rule.message, node),
        // A version-dependent finding says which declared version made it apply.
        body: rule.runtime ? `${body}\n\n_${targets.because(rule.runtime)}_` : body,
        rule: compiled.ruleId,
        category: rule.category,
        reviewer,
      };
      out.push(finding);
      keys?.set(finding, matchKey(compiled.ruleId, node.text()));
    }
  }
  const firstError = errors[0];
  if (firstError) {
    gaps.push({
      code: 'builtin_parse_error',
      message: `${file.diff.path}: ${errors.length} region(s) not parseable as ${parsed.language} (first at line ${firstError.start + 1}); rules skipped there${droppedInErrors > 0 ? `, ${droppedInErrors} match(es) dropped` : ''}`,
    });
  }
  return out;
}

/**
 * A rule with `flow` reports only when the value bound to its metavariable is not constant within
 * its function (and, with `flow.text`, when the value's known text matches). A rule whose pattern
 * did not bind the metavariable on this match reports nothing: the rule says what must be checked.
 */
function flowReaches(compiled: CompiledRule, node: SgNode, parsed: ParsedFile): boolean {
  const flow = compiled.rule.flow;
  if (!flow) return true;
  const value = node.getMatch(flow.value);
  if (!value) return false;
  const shape = shapeOf(parsed.language, value, parsed);
  if (shape.constant) return false;
  return compiled.flowText === null || compiled.flowText.test(shape.text);
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
