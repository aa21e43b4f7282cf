/**
 * The skill catalog shipped with the build: one folder per skill under `src/skills/<id>/`, each
 * with a `SKILL.md` (YAML front matter + what the reviewer checks and why) and, for rule skills,
 * `rules/*.yml` (ast-grep rule configs written here). A skill's identity is its content hash, so a
 * run can say exactly which bytes it executed (`executed_hash` in its skill provenance).
 *
 * Front matter keys are flat (`id`, `title`, `description`, `languages`, `engine`, `category`,
 * `default_severity`, `severity_policy`, engine options in flow style) because biome's markdown
 * formatter flattens indented YAML in front matter.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { runCooperatively, type Steps } from '../core/cooperative';
import { packagePath } from '../core/install-paths';
import type { Severity } from '../core/review';
import { SEVERITIES } from '../core/review';

/** Languages the builtin rules parse; a rule names the ones its patterns are written for. */
export const RULE_LANGUAGES = ['javascript', 'typescript', 'tsx', 'python', 'go', 'java'] as const;
export type RuleLanguage = (typeof RULE_LANGUAGES)[number];

/** How a skill executes: ast-grep rules, secretlint, or instructions for a model reviewer. */
export const SKILL_ENGINES = ['ast-grep', 'secretlint', 'llm'] as const;
export type SkillEngine = (typeof SKILL_ENGINES)[number];

/** A skill's files: path relative to the skill folder (`/`-separated) → UTF-8 text. */
export type SkillFiles = Record<string, string>;

/**
 * One ast-grep rule as written in `rules/*.yml`. The YAML follows ast-grep's rule config (`id`,
 * `language`, `message`, `note`, `rule`, `constraints`, `utils`, `files`, `ignores`) with two
 * differences: `language` may be a list (one rule body for JS, TS and TSX), and `severity` is
 * ours (`P0`/`P1`/`P2`, default: the skill's). Several documents in one file may share an `id`
 * (one per language family); they report under the same rule id.
 */
export interface SkillRule {
  /** `<rule>`; findings carry `<skill>/<rule>`. */
  id: string;
  languages: RuleLanguage[];
  severity: Severity;
  category: string;
  /** Finding title; `$NAME` is replaced by the text the metavariable matched. */
  message: string;
  /** Finding body (markdown): why it is a defect and how to fix it. */
  note: string;
  rule: Record<string, unknown>;
  constraints?: Record<string, unknown>;
  utils?: Record<string, unknown>;
  /** Globs (relative to the repository root) the rule is limited to; omitted: every file. */
  files?: string[];
  /** Globs the rule never runs on. */
  ignores?: string[];
  /**
   * Report only when the value bound to metavariable `value` is not constant within its function
   * (see reviewers/builtin/flow); with `text`, only when the value's known text also matches that
   * regular expression (case-insensitive), e.g. a SQL statement rather than a cache key. With
   * `unless_bound_by` (calls, `pkg.Func`), a variable its function binds anywhere from one of
   * those calls (`git, err := exec.LookPath("git")`) is not reported: the host chose it. Only the
   * Go adapter reads `unless_bound_by` (from its per-parse index, so the check stays linear in a
   * file's sinks); the catalog rejects it on rules of other languages. With `callers: true`, a
   * function of the file whose parameter reaches the sink is a sink for its callers, at any depth:
   * a changed call passing it a non-constant value is reported at the call, even when the helper
   * and its sink are on lines the change left alone (the adapter's `callersReaching`; a language
   * without it follows no helper). With `caller_text` as well, what a caller passes is held to
   * that expression instead of `text`, and a sink whose own value fails `text` (a wrapper's
   * parameter: `void execute(String sql) { stmt.executeUpdate(sql); }`) is not reported itself
   * but still makes its callers sinks. With `guards: true`, a sink whose line the change left
   * alone is reported at the condition of the `if` around it when the change edited that
   * condition: it decides which values reach the sink (an allow-list check dropped from it).
   */
  flow?: {
    value: string;
    text?: string;
    unlessBoundBy?: string[];
    callers?: boolean;
    callerText?: string;
    guards?: boolean;
  };
  /**
   * A metavariable of the rule (`CTOR` for `$CTOR`) naming where the defect is made when that is
   * not the match itself: the finding is placed there when the change touched its lines, else at
   * the match, so `new ObjectInputStream(socket.getInputStream())` added above an unchanged
   * `readObject()` is reported, and once when both changed.
   */
  anchor?: string;
  /**
   * A regular expression a file must contain a match of for the rule to run there: the names of
   * its sinks (`\\b(exec|spawn)\\w*\\(`). ast-grep compiles a rule on every search, about a
   * millisecond for the larger ones, so skipping files that cannot match keeps a 2,000-file review
   * fast. It must match every text the rule can report; the labelled cases check that it does.
   */
  prefilter?: string;
  /**
   * True for rules that only matter in code that runs in production: they do not run on tests,
   * fixtures, examples, docs, generated or vendored files. Default: the skill's `production_only`.
   */
  productionOnly: boolean;
  /**
   * The runtime versions the rule is right for (`runtime: { name: python, min: '3.12' }`): it runs
   * only where the repository states a version of that runtime (svc.json, engines, .nvmrc,
   * pyproject.toml, go.mod, ...) whose lowest allowed version is at least `min` and at most `max`
   * (a prefix: `3.13` covers every 3.13.x). Where no version is stated, it does not run. See
   * reviewers/builtin/runtime-version.ts.
   */
  runtime?: RuleRuntime;
  /** The rule file it came from, relative to the skill folder. */
  source: string;
}

/** A rule's runtime applicability: a runtime name and versions `1`, `1.2` or `1.2.3`. */
export interface RuleRuntime {
  name: string;
  min?: string;
  max?: string;
}

export interface CatalogSkill {
  id: string;
  title: string;
  description: string;
  languages: string[];
  engine: SkillEngine;
  /** Category of the findings it reports unless a rule says otherwise. */
  category: string;
  /** Severity of a rule that names none. */
  defaultSeverity: Severity;
  /** The severity policy in words (front matter `severity_policy`). */
  severityPolicy: string;
  /** Markdown body of SKILL.md. */
  instructions: string;
  /** SHA-256 hex over the skill's files; see `skillContentHash`. */
  hash: string;
  files: SkillFiles;
  rules: SkillRule[];
  /** Extra front matter an engine reads (e.g. secretlint severities); free-form. */
  options: Record<string, unknown>;
}

export const CATALOG_DIR = packagePath('src', 'skills');

/**
 * SHA-256 hex over a skill's files in sorted path order (code-unit order); each file contributes
 * `path \0 byteLength \0 bytes` (UTF-8), so no two different file sets hash alike.
 */
export function skillContentHash(files: SkillFiles | readonly { path: string; bytes: Uint8Array }[]): string {
  const entries = Array.isArray(files)
    ? files.map((f) => ({ path: f.path, bytes: f.bytes }))
    : Object.entries(files as SkillFiles).map(([path, text]) => ({ path, bytes: Buffer.from(text, 'utf8') }));
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const hash = createHash('sha256');
  for (const { path, bytes } of entries) {
    hash.update(`${path}\u0000${bytes.byteLength}\u0000`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

async function listFiles(dir: string, root = dir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => {
      const full = join(dir, e.name);
      if (e.isDirectory()) return listFiles(full, root);
      return e.isFile() ? [relative(root, full).split(sep).join('/')] : [];
    }),
  );
  return nested.flat();
}

class SkillDefinitionError extends Error {
  constructor(skillDir: string, file: string, problem: string) {
    super(`skill ${skillDir}: ${file}: ${problem}`);
    this.name = 'SkillDefinitionError';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isSeverity = (v: unknown): v is Severity => SEVERITIES.includes(v as Severity);
const stringList = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : typeof v === 'string' ? [v] : null;

function splitFrontMatter(text: string): { front: string; body: string } | null {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  return m ? { front: m[1] ?? '', body: m[2] ?? '' } : null;
}

/** Reads one skill folder; throws SkillDefinitionError naming the file and what is wrong. */
export async function loadSkill(skillDir: string): Promise<CatalogSkill> {
  const paths = (await listFiles(skillDir)).sort();
  const files: SkillFiles = {};
  for (const path of paths) files[path] = await readFile(join(skillDir, path), 'utf8');
  return runCooperatively(parseSkill(files, skillDir));
}

/** Skills parsed from in-memory files, by content hash: a revision is immutable, so it is parsed once. */
const parsedByHash = new Map<string, CatalogSkill>();
const PARSED_KEPT = 64;

/**
 * A skill from files held in memory (a project override or an immutable skill revision). The
 * given `id` names it (rule ids become `<id>/<rule>`) whatever its front matter says; throws
 * SkillDefinitionError naming the file and what is wrong.
 */
export async function skillFromFiles(id: string, files: SkillFiles): Promise<CatalogSkill> {
  const key = `${id}\u0000${skillContentHash(files)}`;
  let skill = parsedByHash.get(key);
  if (!skill) {
    skill = { ...(await runCooperatively(parseSkill(files, `override ${id}`))), id };
    if (parsedByHash.size >= PARSED_KEPT) parsedByHash.delete(parsedByHash.keys().next().value as string);
    parsedByHash.set(key, skill);
  }
  return skill;
}

/**
 * Parses a skill's files, yielding after each rule file (core/cooperative.ts): the catalog's YAML
 * takes a few hundred milliseconds to read, and a review's first use of it runs in the server.
 */
function* parseSkill(files: SkillFiles, skillDir: string): Steps<CatalogSkill> {
  const fail = (file: string, problem: string): never => {
    throw new SkillDefinitionError(skillDir, file, problem);
  };
  const manifest = files['SKILL.md'] ?? fail('SKILL.md', 'missing');
  const split = splitFrontMatter(manifest) ?? fail('SKILL.md', 'no front matter');
  const front: unknown = parseYaml(split.front);
  if (!isRecord(front)) return fail('SKILL.md', 'front matter is not a mapping');
  const str = (key: string) => {
    const v = front[key];
    return typeof v === 'string' && v.trim() !== ''
      ? v.trim()
      : fail('SKILL.md', `front matter needs ${key}`);
  };
  const id = str('id');
  const defaultSeverity = front.default_severity ?? 'P1';
  if (!isSeverity(defaultSeverity)) return fail('SKILL.md', 'default_severity must be P0, P1 or P2');
  const engine = front.engine ?? 'ast-grep';
  if (!SKILL_ENGINES.includes(engine as SkillEngine)) return fail('SKILL.md', `unknown engine ${engine}`);
  const category = typeof front.category === 'string' ? front.category : id;
  const languages = stringList(front.languages) ?? fail('SKILL.md', 'languages must be a list');
  const productionOnly = front.production_only === true;
  const {
    id: _i,
    title: _t,
    description: _d,
    languages: _l,
    default_severity: _s,
    severity_policy: _p,
    engine: _e,
    ...options
  } = front;

  const rules: SkillRule[] = [];
  for (const path of Object.keys(files).sort()) {
    if (!/^rules\/.+\.ya?ml$/.test(path)) continue;
    for (const doc of parseAllDocuments(files[path] ?? '')) {
      if (doc.errors.length > 0) fail(path, doc.errors[0]?.message ?? 'YAML error');
      const raw: unknown = doc.toJS();
      if (raw === null || raw === undefined) continue;
      rules.push(toRule(raw, path, { defaultSeverity, category, productionOnly }, fail));
    }
    yield;
  }
  if (engine === 'ast-grep' && rules.length === 0)
    fail('rules/', 'an ast-grep skill needs at least one rule');

  return {
    id,
    title: str('title'),
    description: str('description'),
    languages,
    engine: engine as SkillEngine,
    category,
    defaultSeverity,
    severityPolicy: typeof front.severity_policy === 'string' ? front.severity_policy.trim() : '',
    instructions: split.body.trim(),
    hash: skillContentHash(files),
    files,
    rules,
    options,
  };
}

function toRule(
  raw: unknown,
  source: string,
  defaults: { defaultSeverity: Severity; category: string; productionOnly: boolean },
  fail: (file: string, problem: string) => never,
): SkillRule {
  if (!isRecord(raw)) return fail(source, 'a rule document must be a mapping');
  const id = typeof raw.id === 'string' && /^[a-z0-9][a-z0-9-]*$/.test(raw.id) ? raw.id : null;
  if (!id) return fail(source, 'rule id must be kebab-case');
  const where = `${source} (${id})`;
  const languages = stringList(raw.language);
  if (
    !languages ||
    languages.length === 0 ||
    !languages.every((l) => RULE_LANGUAGES.includes(l as RuleLanguage))
  )
    return fail(where, `language must be one or more of ${RULE_LANGUAGES.join(', ')}`);
  const severity = raw.severity ?? defaults.defaultSeverity;
  if (!isSeverity(severity)) return fail(where, 'severity must be P0, P1 or P2');
  if (typeof raw.message !== 'string' || typeof raw.note !== 'string')
    return fail(where, 'message and note are required');
  if (!isRecord(raw.rule)) return fail(where, 'rule must be a mapping');
  const optionalRecord = (key: string) => {
    const v = raw[key];
    if (v === undefined) return undefined;
    return isRecord(v) ? v : fail(where, `${key} must be a mapping`);
  };
  const optionalGlobs = (key: string) => {
    const v = raw[key];
    if (v === undefined) return undefined;
    return stringList(v) ?? fail(where, `${key} must be a list of globs`);
  };
  const metadata = isRecord(raw.metadata) ? raw.metadata : {};
  const rule: SkillRule = {
    id,
    languages: languages as RuleLanguage[],
    severity,
    category: typeof metadata.category === 'string' ? metadata.category : defaults.category,
    message: raw.message.trim(),
    note: raw.note.trim(),
    rule: raw.rule,
    source,
    productionOnly:
      raw.production_only === undefined
        ? defaults.productionOnly
        : raw.production_only === true || fail(where, 'production_only must be true or false'),
  };
  if (raw.flow !== undefined) rule.flow = toFlow(raw.flow, where, fail);
  if (rule.flow?.unlessBoundBy && rule.languages.some((l) => l !== 'go'))
    return fail(where, 'flow.unless_bound_by is read by the Go flow adapter only: language must be go');
  if (raw.anchor !== undefined) {
    if (typeof raw.anchor !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(raw.anchor))
      return fail(where, 'anchor must name a metavariable (e.g. CTOR for $CTOR)');
    rule.anchor = raw.anchor;
  }
  if (raw.prefilter !== undefined) rule.prefilter = toPrefilter(raw.prefilter, where, fail);
  if (raw.runtime !== undefined) rule.runtime = toRuntime(raw.runtime, where, fail);
  const constraints = optionalRecord('constraints');
  const utils = optionalRecord('utils');
  const files = optionalGlobs('files');
  const ignores = optionalGlobs('ignores');
  if (constraints) rule.constraints = constraints;
  if (utils) rule.utils = utils;
  if (files) rule.files = files;
  if (ignores) rule.ignores = ignores;
  return rule;
}

function toFlow(raw: unknown, where: string, fail: (file: string, problem: string) => never) {
  if (!isRecord(raw) || typeof raw.value !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(raw.value))
    return fail(where, 'flow.value must name a metavariable (e.g. SQL for $SQL)');
  const flow: NonNullable<SkillRule['flow']> = { value: raw.value };
  /** A regular expression under `key` (tested case-insensitively), or undefined when absent. */
  const pattern = (key: 'text' | 'caller_text'): string | undefined => {
    const value = raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return fail(where, `flow.${key} must be a regular expression`);
    try {
      new RegExp(value, 'i');
    } catch (error) {
      return fail(where, `flow.${key} is not a regular expression: ${(error as Error).message}`);
    }
    return value;
  };
  const flag = (key: 'callers' | 'guards'): boolean => {
    if (raw[key] !== undefined && typeof raw[key] !== 'boolean')
      return fail(where, `flow.${key} must be true or false`);
    return raw[key] === true;
  };
  const text = pattern('text');
  if (text !== undefined) flow.text = text;
  if (raw.unless_bound_by !== undefined) {
    const callees = stringList(raw.unless_bound_by);
    if (!callees || callees.length === 0 || !callees.every((c) => CALLEE.test(c)))
      return fail(where, 'flow.unless_bound_by must list calls as pkg.Func (e.g. exec.LookPath)');
    flow.unlessBoundBy = callees;
  }
  if (flag('callers')) flow.callers = true;
  const callerText = pattern('caller_text');
  if (callerText !== undefined) {
    if (!flow.callers) return fail(where, 'flow.caller_text needs flow.callers: true');
    flow.callerText = callerText;
  }
  if (flag('guards')) flow.guards = true;
  return flow;
}

const CALLEE = /^([A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*$/;

const RUNTIME_VERSION = /^\d+(\.\d+){0,2}$/;

function toRuntime(raw: unknown, where: string, fail: (file: string, problem: string) => never): RuleRuntime {
  if (!isRecord(raw) || typeof raw.name !== 'string' || !/^[a-z][a-z0-9-]*$/.test(raw.name))
    return fail(where, 'runtime.name must name a runtime (node, python, go, ...)');
  const runtime: RuleRuntime = { name: raw.name };
  for (const key of ['min', 'max'] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    // YAML reads `min: 3.12` as a number: 3.1 and 3.10 would be the same version.
    if (typeof value !== 'string' || !RUNTIME_VERSION.test(value))
      return fail(where, `runtime.${key} must be a quoted version ('3.12', '1.16', '18.13.0')`);
    runtime[key] = value;
  }
  if (runtime.min === undefined && runtime.max === undefined)
    return fail(where, 'runtime needs min, max or both');
  return runtime;
}

function toPrefilter(raw: unknown, where: string, fail: (file: string, problem: string) => never) {
  if (typeof raw !== 'string' || raw === '') return fail(where, 'prefilter must be a regular expression');
  try {
    new RegExp(raw);
  } catch (error) {
    return fail(where, `prefilter is not a regular expression: ${(error as Error).message}`);
  }
  return raw;
}

let cached: Promise<CatalogSkill[]> | null = null;

/** Every catalog skill, sorted by id; read and hashed once per process. */
export function loadCatalog(): Promise<CatalogSkill[]> {
  cached ??= (async () => {
    const entries = await readdir(CATALOG_DIR, { withFileTypes: true });
    const dirs = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    const skills = await Promise.all(
      dirs.map(async (d) => {
        const names = await readdir(join(CATALOG_DIR, d));
        return names.includes('SKILL.md') ? loadSkill(join(CATALOG_DIR, d)) : null;
      }),
    );
    return skills.filter((s): s is CatalogSkill => s !== null).sort((a, b) => a.id.localeCompare(b.id));
  })();
  cached.catch(() => {
    cached = null;
  });
  return cached;
}

/** The catalog skill with this id, or null. */
export async function catalogSkill(id: string): Promise<CatalogSkill | null> {
  return (await loadCatalog()).find((s) => s.id === id) ?? null;
}
