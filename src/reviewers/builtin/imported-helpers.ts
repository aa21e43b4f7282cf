/**
 * The helpers a JavaScript or TypeScript file imports from other files of its repository that are
 * sinks (issue 24.2, one import deep): for `const { run } = require('./utils')`, utils.js is read
 * at head (from the change when it is in it, else through the review's head reader), the rules
 * with `flow.callers` run over it, and each exported function whose parameter reaches a sink
 * there (directly or through utils.js's own functions) becomes an ImportedSink for the importing
 * file (./imported-calls.ts reports its calls). An import of an import is not followed.
 *
 * Bounded: a few imports per file, a few dozen modules per review, modules of a limited size, each
 * read and summarised once per review (the skill's run); a module that cannot be read or parsed
 * adds nothing.
 */
import { posix } from 'node:path';
import { runCooperatively } from '../../core/cooperative';
import type { RuleLanguage } from '../../skills/catalog';
import type { BaseReader } from '../types';
import { prepareFlow, shapeOf } from './flow';
import { callableName, parametersReaching } from './flow/javascript-callers';
import { exportedNames, exportLists } from './flow/javascript-modules';
import { moduleParametersReaching } from './flow/python-callers';
import { pythonCandidatePaths, pythonImportSpecifiers } from './flow/python-modules';
import type { ImportedSink } from './imported-calls';
import { parseOnce, ruleLanguageOf } from './languages';
import type { CompiledRule } from './match-file';

/** Relative imports of one file followed. */
const MAX_IMPORTS_PER_FILE = 10;
/** Modules read in one review (per skill). */
const MAX_MODULES = 40;
/** A module larger than this is not read for helpers. */
const MAX_MODULE_CHARS = 200_000;

const JS_LANGUAGES = new Set<RuleLanguage>(['javascript', 'typescript', 'tsx']);
const SPECIFIER = /(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"\n]+)['"]/g;
const EXTENSIONS = ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];
const NOT_CODE =
  /^\.(json|json5|css|scss|less|sass|html?|svg|png|jpe?g|gif|webp|node|wasm|md|txt|ya?ml|graphql|gql|vue|svelte)$/i;

/** The paths a relative import may name, most likely first. */
export function candidatePaths(importer: string, specifier: string): string[] {
  const joined = posix.normalize(posix.join(posix.dirname(importer), specifier));
  if (joined.startsWith('..') || posix.isAbsolute(joined)) return [];
  const own = posix.extname(importer);
  const ext = posix.extname(joined);
  const out: string[] = [];
  if (EXTENSIONS.includes(ext)) {
    out.push(joined);
    // TypeScript's ESM imports name the `.js` the compiler will write.
    const stem = joined.slice(0, -ext.length);
    if (ext === '.js' || ext === '.mjs' || ext === '.cjs')
      out.push(`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`);
    return out;
  }
  // `./package.json`, `./style.css`, `./addon.node`: not code the rules read (a dotted module
  // name such as `./jquery.min` is still looked for).
  if (NOT_CODE.test(ext)) return [];
  const order = [own, ...EXTENSIONS.filter((e) => e !== own)].filter((e) => EXTENSIONS.includes(e));
  out.push(`${joined}${order[0] ?? '.js'}`);
  out.push(...order.slice(1, 3).map((e) => `${joined}${e}`));
  out.push(`${joined}/index${order[0] ?? '.js'}`, ...order.slice(1, 3).map((e) => `${joined}/index${e}`));
  return out;
}

interface ModuleSummary {
  path: string;
  sinks: Omit<ImportedSink, 'specifier'>[];
}

/** One review's imported helpers: modules read and summarised once, shared by its files. */
export class ImportedHelpers {
  private readonly summaries = new Map<string, Promise<ModuleSummary | null>>();
  private readonly resolved = new Map<string, Promise<string | null>>();
  private readonly contents = new Map<string, Promise<string | null>>();
  private queued: string[] = [];
  private flush: Promise<Map<string, string | null>> | null = null;

  constructor(
    private readonly readHead: BaseReader,
    /** The change's files at head, by path (read from there rather than again). */
    private readonly headFiles: ReadonlyMap<string, string>,
    private readonly rulesFor: (language: RuleLanguage) => CompiledRule[],
  ) {}

  /** The sinks `path` reaches through its relative imports (none for a file that is not JS/TS). */
  async forFile(path: string, content: string, language: RuleLanguage): Promise<ImportedSink[]> {
    if (!JS_LANGUAGES.has(language) && language !== 'python') return [];
    const written =
      language === 'python'
        ? pythonImportSpecifiers(content)
        : [...content.matchAll(SPECIFIER)].map((m) => m[1] as string);
    const specifiers = [...new Set(written)].slice(0, MAX_IMPORTS_PER_FILE);
    // Side by side: each round of candidates of every import is one read (batched).
    const modulePaths = await Promise.all(specifiers.map((specifier) => this.resolve(path, specifier)));
    const sinks: ImportedSink[] = [];
    for (const [i, specifier] of specifiers.entries()) {
      const modulePath = modulePaths[i];
      if (!modulePath || modulePath === path) continue;
      const summary = await this.summary(modulePath);
      for (const sink of summary?.sinks ?? []) sinks.push({ ...sink, specifier });
    }
    return sinks;
  }

  /** The first candidate path that exists at head. */
  private resolve(importer: string, specifier: string): Promise<string | null> {
    const key = `${posix.dirname(importer)}\u0000${specifier}\u0000${posix.extname(importer)}`;
    let found = this.resolved.get(key);
    if (!found) {
      found = (async () => {
        const candidates =
          posix.extname(importer) === '.py'
            ? pythonCandidatePaths(importer, specifier)
            : candidatePaths(importer, specifier);
        for (const candidate of candidates) {
          if ((await this.read(candidate)) !== null) return candidate;
        }
        return null;
      })();
      this.resolved.set(key, found);
    }
    return found;
  }

  private read(path: string): Promise<string | null> {
    let content = this.contents.get(path);
    if (!content) {
      const inChange = this.headFiles.get(path);
      content =
        inChange !== undefined
          ? Promise.resolve(inChange)
          : this.contents.size >= MAX_MODULES * 4
            ? Promise.resolve(null)
            : this.batched(path);
      this.contents.set(path, content);
    }
    return content;
  }

  /**
   * Paths asked for in the same turn are read together: one `git cat-file --batch` for a local
   * review rather than a git process per candidate path.
   */
  private batched(path: string): Promise<string | null> {
    this.queued.push(path);
    this.flush ??= Promise.resolve().then(() => {
      const paths = this.queued;
      this.queued = [];
      this.flush = null;
      return this.readHead(paths);
    });
    return this.flush.then(
      (m) => m.get(path) ?? null,
      () => null,
    );
  }

  private summary(path: string): Promise<ModuleSummary | null> {
    let summary = this.summaries.get(path);
    if (!summary) {
      summary =
        this.summaries.size >= MAX_MODULES
          ? Promise.resolve(null)
          : this.read(path).then((content) => (content === null ? null : this.summarise(path, content)));
      this.summaries.set(path, summary);
    }
    return summary;
  }

  /** The module's exported functions whose parameter reaches a sink of a `flow.callers` rule. */
  private async summarise(path: string, content: string): Promise<ModuleSummary | null> {
    const language = ruleLanguageOf(path, undefined);
    if (
      !language ||
      !(JS_LANGUAGES.has(language) || language === 'python') ||
      content.length > MAX_MODULE_CHARS
    )
      return null;
    const rules = this.rulesFor(language).filter(
      (r) => r.rule.flow?.callers && (r.prefilter === null || r.prefilter.test(content)),
    );
    if (rules.length === 0) return { path, sinks: [] };
    let parsed: Awaited<ReturnType<typeof parseOnce>>;
    try {
      parsed = await parseOnce({}, language, content);
    } catch {
      return null;
    }
    const root = parsed.root.root();
    await runCooperatively(prepareFlow(language, root, parsed, () => false));
    const exported = exportLists(root);
    const sinks: ModuleSummary['sinks'] = [];
    const seen = new Set<string>();
    for (const compiled of rules) {
      const flow = compiled.rule.flow;
      if (!flow) continue;
      for (const node of root.findAll(compiled.config)) {
        const value = node.getMatch(flow.value);
        if (!value) continue;
        const shape = shapeOf(language, value, parsed);
        if (shape.constant || (compiled.flowText && !compiled.flowText.test(shape.text))) continue;
        // A Python module exports every module-level function (python-callers.ts).
        const reaches =
          language === 'python'
            ? moduleParametersReaching(value, parsed).map((r) => ({ ...r, names: [r.exported] }))
            : parametersReaching(value, parsed).map((reach) => {
                const callable = callableName(reach.ref.fn);
                const declared = callable?.declared ? callable.name : null;
                return { ...reach, names: exportedNames(reach.ref.fn, declared, exported) };
              });
        for (const reach of reaches) {
          for (const name of reach.names) {
            const key = `${compiled.ruleId}:${name}:${reach.index}`;
            if (seen.has(key)) continue;
            seen.add(key);
            sinks.push({
              exported: name,
              index: reach.index,
              rest: reach.rest,
              through: reach.through,
              path,
              sinkLine: node.range().start.line + 1,
              sinkText: excerpt(node.text()),
              ruleId: compiled.ruleId,
              severity: compiled.rule.severity,
              category: compiled.rule.category,
              title: fill(compiled.rule.message, node),
              note: fill(compiled.rule.note, node),
            });
          }
        }
      }
    }
    return { path, sinks };
  }
}

const excerpt = (text: string): string => {
  const line = text.split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
};

/** The rule's message or note with its metavariables filled in from the sink's match. */
function fill(template: string, node: import('@ast-grep/napi').SgNode): string {
  return template.replace(/\$([A-Z_][A-Z0-9_]*)/g, (whole, name: string) => {
    const text = node.getMatch(name)?.text();
    return text === undefined ? whole : excerpt(text);
  });
}
