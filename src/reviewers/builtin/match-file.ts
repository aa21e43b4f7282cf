/**
 * One file's ast-grep matching: every rule of a skill over one parse, with the data-flow check of
 * rules that have `flow`, reported on changed lines only. Pure CPU on a parse, so it runs the same
 * on the main thread (in slices, core/cooperative.ts) and in an analysis thread (./match-thread.ts).
 */
import type { NapiConfig, SgNode } from '@ast-grep/napi';
import { runCooperatively, StepBudgetExhausted, type Steps, slicer } from '../../core/cooperative';
import type { FindingDraft } from '../../core/review';
import { fileNotAnalyzedGap, type Gap } from '../../core/runs';
import type { SkillRule } from '../../skills/catalog';
import { findAllSliced } from './find-sliced';
import { boundBy, callersReaching, type HelperCall, prepareFlow, shapeOf, sourcesOf } from './flow';
import { DYNAMIC } from './flow/types';
import { type ImportedSink, importedCallFindings } from './imported-calls';
import { type ParsedFile, parseErrors } from './languages';
import { linesIn } from './parse-recovery';
import { matchKey } from './preexisting';
import { type RuntimeStatement, RuntimeTargets } from './runtime-version';

export interface CompiledRule {
  rule: SkillRule;
  /** `<skill>/<rule>` */
  ruleId: string;
  config: NapiConfig;
  /** The rule's `flow.text`, compiled. */
  flowText: RegExp | null;
  /** The rule's `flow.caller_text`, compiled: what a caller passes is held to it. */
  callerText: RegExp | null;
  /** The rule's `prefilter`, compiled: a file without a match cannot hold a finding. */
  prefilter: RegExp | null;
  /** The rule's `flow.unless_bound_by`, as a set. */
  unlessBoundBy: ReadonlySet<string> | null;
}

/** A skill's rule as the matcher runs it (ast-grep's config, the regular expressions compiled). */
export function compileRule(skillId: string, rule: SkillRule): CompiledRule {
  const config = {
    rule: rule.rule,
    ...(rule.constraints ? { constraints: rule.constraints } : {}),
    ...(rule.utils ? { utils: rule.utils } : {}),
  } as NapiConfig;
  return {
    rule,
    ruleId: `${skillId}/${rule.id}`,
    config,
    flowText: rule.flow?.text ? new RegExp(rule.flow.text, 'i') : null,
    callerText: rule.flow?.callerText ? new RegExp(rule.flow.callerText, 'i') : null,
    prefilter: rule.prefilter ? new RegExp(rule.prefilter) : null,
    unlessBoundBy: rule.flow?.unlessBoundBy ? new Set(rule.flow.unlessBoundBy) : null,
  };
}

/** What matching needs of the file besides its parse: where it is and which lines changed. */
export interface MatchTarget {
  path: string;
  /** 1-based inclusive line ranges the change added or modified. */
  changedLines: readonly { start: number; end: number }[];
  /** Helpers of modules the file imports that reach a sink there (./imported-helpers.ts). */
  importedSinks?: readonly ImportedSink[];
}

/** The first changed line within [start, end] (1-based, inclusive), or null. */
export function firstChangedLineIn(
  changedLines: MatchTarget['changedLines'],
  start: number,
  end: number,
): number | null {
  let best: number | null = null;
  for (const r of changedLines) {
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
    return text === undefined ? whole : shortText(text);
  });
}

/** A node's text as a title quotes it: its first line, at most 60 characters. */
function shortText(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

/**
 * Runs the rules over one parsed file, yielding every few milliseconds (core/cooperative.ts): a
 * file where hundreds of matches each need a data-flow walk takes hundreds of milliseconds, and the
 * server must go on answering meanwhile. Findings go to `out` as they are made, so those made
 * before the run stops it (its signal, the file's budget) are still there; with `keys`, each
 * finding's match key (./preexisting.ts) goes there, in the same order.
 */
export function* matchFile(
  file: MatchTarget,
  parsed: ParsedFile,
  rules: CompiledRule[],
  reviewer: string,
  gaps: Gap[],
  targets: RuntimeTargets,
  turnMs: number,
  out: FindingDraft[],
  keys?: string[],
): Steps<FindingDraft[]> {
  const seen = new Set<string>();
  const tick = slicer(Number.POSITIVE_INFINITY, turnMs);
  // First: a file with a large error is parsed again there, and the rules read the better parse.
  const errors = yield* parseErrors(parsed, tick);
  const root = parsed.root.root();
  let flowPrepared = false;
  let droppedInErrors = 0;
  const trailingKeys: string[] = [];
  const lines = sourceLines(root);
  for (const compiled of rules) {
    if (tick()) yield;
    let nodes: SgNode[];
    try {
      nodes = yield* findAllSliced(root, compiled.config, tick);
    } catch (error) {
      gaps.push({
        code: 'builtin_rule_failed',
        message: `${compiled.ruleId} on ${file.path}: ${(error as Error).message.split('\n')[0]}`,
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
      const reach = flowReach(compiled, node, parsed);
      if (reach === null) continue;
      const { rule } = compiled;
      const body = interpolate(rule.note, node);
      // `keyed`: the code the finding is known by in the base (./preexisting.ts), wherever it is placed.
      const report = (at: SgNode, more: string | null, keyed: string) => {
        const lines = changedLinesOf(file, at);
        if (!lines) return;
        const key = `${compiled.ruleId}:${lines.start}:${lines.end}`;
        if (seen.has(key)) return;
        seen.add(key);
        const text = more ? `${body}\n\n${more}` : body;
        out.push({
          severity: rule.severity,
          path: file.path,
          line: lines.line,
          endLine: Math.max(lines.line, lines.end),
          title: interpolate(rule.message, node),
          // A version-dependent finding says which declared version made it apply.
          body: rule.runtime ? `${text}\n\n_${targets.because(rule.runtime)}_` : text,
          rule: compiled.ruleId,
          category: rule.category,
          reviewer,
        });
        keys?.push(matchKey(compiled.ruleId, keyed));
      };
      // `anchor`: where the defect was made (`new ObjectInputStream(socket...)`) when the change
      // touched it, else the match (its `readObject()`): one finding either way.
      const anchor = rule.anchor ? node.getMatch(rule.anchor) : null;
      const flagged = rule.flow ? (node.getMatch(rule.flow.value) ?? null) : null;
      const identity = identityOf(node, flagged);
      if (reach === 'sink') report(anchor && changedLinesOf(file, anchor) ? anchor : node, null, identity);
      // `flow.guards`: the sink's line untouched, the condition deciding whether it runs edited.
      // Known by the sink and the condition's code, so a base with the same condition had it.
      const guard = rule.flow?.guards && reach === 'sink' ? guardOf(node) : null;
      if (guard) {
        const keyed = `${node.text()}\u0000${lines.of(guard)}`;
        if (changedLinesOf(file, node)) trailingKeys.push(matchKey(compiled.ruleId, keyed));
        else report(guard, guardedHere(node), keyed);
      }
      // `flow.callers`: a same-file function whose parameter reaches this sink is a sink for its
      // callers; each call passing it a value the code does not fix is reported where it is made.
      const value = rule.flow?.callers ? flagged : null;
      if (value) {
        const passedText = compiled.callerText ?? compiled.flowText;
        const sinkText = passedText ? shapeOf(parsed.language, value, parsed).text : '';
        for (const call of callersReaching(parsed.language, value, parsed)) {
          if (passedText && !passedText.test(asPassed(sinkText, call, parsed))) continue;
          // Known by the sink it reaches and what it passes, not the helper's name: renaming the
          // helper does not make an old call new.
          report(call.call, throughHelpers(call, node), `${identity}\u0000${call.argument.text()}`);
        }
        // A sink reached only through its callers has no value of its own to trace.
        if (reach === 'callers') continue;
        // The sink's line untouched, a line its value is built on edited: the change altered what
        // reaches the sink there. Known by the sink and that line's code, so a base that built the
        // same value the same way (./preexisting.ts, the trailing keys below) had it already.
        const sources = sourcesOf(parsed.language, value, parsed);
        const keyOf = (source: SgNode) => `${node.text()}\u0000${lines.of(source)}`;
        if (!changedLinesOf(file, node)) {
          const edited = sources.find((source) => changedLinesOf(file, source));
          if (edited) report(edited, builtHere(edited, node), keyOf(edited));
        } else for (const source of sources) trailingKeys.push(matchKey(compiled.ruleId, keyOf(source)));
      }
    }
  }
  // Changed calls of helpers the file imports from the repository that reach a sink there.
  if (file.importedSinks?.length) {
    if (!flowPrepared) yield* prepareFlow(parsed.language, root, parsed, tick);
    const firstChanged = (from: number, to: number) => firstChangedLineIn(file.changedLines, from, to);
    for (const call of importedCallFindings(file.path, parsed, file.importedSinks, reviewer, firstChanged)) {
      const key = `${call.finding.rule}:${call.start}:${call.end}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(call.finding);
      keys?.push(call.key);
    }
  }
  const firstError = errors[0];
  if (firstError) {
    const dropped = droppedInErrors > 0 ? `, ${droppedInErrors} match(es) dropped` : '';
    const recovery = parsed.recovery ? `${parsed.recovery}; ` : '';
    gaps.push(
      fileNotAnalyzedGap(
        {
          path: file.path,
          reason: `not parseable as ${parsed.language}`,
          lines_left_out: linesIn(errors),
          lines: lineCount(root),
        },
        `${recovery}${errors.length} region(s), the first at line ${firstError.start + 1}; rules skipped there${dropped}`,
      ),
    );
  }
  // After every finding's own key (engine.ts reads one per finding): the lines each sink reported
  // at its own place is built on, which only the base's comparison reads.
  keys?.push(...trailingKeys);
  return out;
}

/**
 * The sink's text as this caller makes it (`flow.text` is asked of it): the argument's text in
 * place of the sink's first part the code does not fix. So an argument vector with a fixed
 * program handed to a `run(List<String> cmd)` helper reads as that vector, and a ref handed to a
 * `fetch(remote)` helper reads as `git fetch <ref>`. (Which unfixed part is the parameter is not
 * tracked: the first stands for it.)
 */
function asPassed(sinkText: string, reach: HelperCall, parsed: ParsedFile): string {
  const passed = shapeOf(parsed.language, reach.argument, parsed).text;
  return sinkText.includes(DYNAMIC) ? sinkText.replace(DYNAMIC, () => passed) : passed;
}

/** The text of a node's first line in the file, read once per file. */
function sourceLines(root: SgNode): { of(node: SgNode): string } {
  let all: string[] | null = null;
  return {
    of(node: SgNode) {
      all ??= root.text().split('\n');
      return all[node.range().start.line] ?? '';
    },
  };
}

/**
 * What a finding is known by in the other version of its file (./preexisting.ts): the match up to
 * the end of the value its rule flags (`spawn(cmd` of `spawn(cmd, { shell: true })`), else the
 * whole match. An option added after the flagged value is not a new defect; a new value is.
 */
function identityOf(node: SgNode, flagged: SgNode | null): string {
  const text = node.text();
  if (!flagged) return text;
  const length = flagged.range().end.index - node.range().start.index;
  return length > 0 && length <= text.length ? text.slice(0, length) : text;
}
/** What a finding on a line the sink's value is built on adds to the rule's note. */
function builtHere(source: SgNode, sink: SgNode): string {
  return `This line gives the value \`${shortText(source.text())}\`, which reaches \`${shortText(sink.text())}\` at line ${sink.range().start.line + 1}: the change altered the value that reaches it.`;
}

/** The `if` conditions that decide whether a sink runs (`elif` in Python); their function ends the search. */
const CONDITIONALS = new Set(['if_statement', 'elif_clause']);
const FUNCTIONS = new Set([
  'function_definition',
  'function_declaration',
  'function_expression',
  'arrow_function',
  'method_definition',
  'method_declaration',
  'constructor_declaration',
  'lambda',
  'lambda_expression',
  'func_literal',
]);

/** The condition of the nearest `if` around `sink` within its function, unless the sink is in it. */
function guardOf(sink: SgNode): SgNode | null {
  for (const a of sink.ancestors()) {
    const kind = a.kind() as string;
    if (FUNCTIONS.has(kind)) return null;
    if (!CONDITIONALS.has(kind)) continue;
    const condition = a.field('condition');
    const end = condition?.range().end.index ?? -1;
    return condition && sink.range().start.index >= end ? condition : null;
  }
  return null;
}

/** What a finding on the condition of an unchanged sink adds to the rule's note. */
function guardedHere(sink: SgNode): string {
  return `This condition decides whether \`${shortText(sink.text())}\` at line ${sink.range().start.line + 1} runs: the change altered which values reach it.`;
}

/** Where a helper call's value comes from and how it reaches the sink, for the finding's body. */
function throughHelpers(reach: HelperCall, sink: SgNode): string {
  const path = reach.through.map((t) => `\`${t.helper}()\` (parameter \`${t.parameter}\`)`).join(' → ');
  return `This call passes \`${shortText(reach.argument.text())}\`, which reaches the sink at line ${sink.range().start.line + 1} through ${path}.`;
}

/** The first changed line of `node` and its 1-based line span, or null when the change did not touch it. */
function changedLinesOf(
  file: MatchTarget,
  node: SgNode,
): { line: number; start: number; end: number } | null {
  const range = node.range();
  const start = range.start.line + 1;
  const end =
    range.end.column === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  const line = firstChangedLineIn(file.changedLines, start, end);
  return line === null ? null : { line, start, end };
}

/** The file's lines, the empty one after a final line end not counted. */
function lineCount(root: SgNode): number {
  const end = root.range().end;
  return end.column === 0 && end.line > 0 ? end.line : end.line + 1;
}

/**
 * A rule with `flow` reports only when the value bound to its metavariable is not constant within
 * its function (and, with `flow.text`, when the value's known text matches). A rule whose pattern
 * did not bind the metavariable on this match reports nothing: the rule says what must be checked.
 * With `flow.unless_bound_by`, a variable bound from one of those calls is not reported either.
 * `sink`: report the match (and follow its callers); `callers`: the value's text fails `flow.text`
 * but the rule holds callers to `flow.caller_text`, so only its callers are followed; null: neither.
 */
function flowReach(compiled: CompiledRule, node: SgNode, parsed: ParsedFile): 'sink' | 'callers' | null {
  const flow = compiled.rule.flow;
  if (!flow) return 'sink';
  const value = node.getMatch(flow.value);
  if (!value) return null;
  const shape = shapeOf(parsed.language, value, parsed);
  if (shape.constant) return null;
  // `git, err := exec.LookPath("git")`: a program the host found, whatever else is assigned.
  if (compiled.unlessBoundBy && boundBy(parsed.language, value, compiled.unlessBoundBy, parsed)) return null;
  if (compiled.flowText === null || compiled.flowText.test(shape.text)) return 'sink';
  return compiled.callerText ? 'callers' : null;
}

/** What matching one parse found; `budget` is set when the file's budget stopped it early. */
export interface MatchedFile {
  found: FindingDraft[];
  /** Each finding's match key (./preexisting.ts), in the order of `found`. */
  keys: string[];
  gaps: Gap[];
  budget: { spentMs: number; budgetMs: number } | null;
}

/**
 * Runs `rules` over one parse in cooperative slices, as both the main thread (the CLI, tests) and
 * an analysis thread (the service) do: past `budgetMs` of the file's own work it stops, keeping
 * what it found; an aborted `signal` ends it at the next slice.
 */
export async function matchParsed(
  target: MatchTarget,
  parsed: ParsedFile,
  rules: CompiledRule[],
  options: {
    reviewer: string;
    runtimes: readonly RuntimeStatement[] | undefined;
    turnMs: number;
    budgetMs: number | undefined;
    signal?: AbortSignal;
  },
): Promise<MatchedFile> {
  const found: FindingDraft[] = [];
  const keys: string[] = [];
  const gaps: Gap[] = [];
  const targets = new RuntimeTargets(options.runtimes);
  const steps = matchFile(
    target,
    parsed,
    rules,
    options.reviewer,
    gaps,
    targets,
    options.turnMs,
    found,
    keys,
  );
  try {
    await runCooperatively(steps, {
      budgetMs: options.budgetMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (!(error instanceof StepBudgetExhausted)) throw error;
    return { found, keys, gaps, budget: { spentMs: error.spentMs, budgetMs: error.budgetMs } };
  }
  return { found, keys, gaps, budget: null };
}
