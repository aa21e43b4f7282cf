/**
 * What a file is for, as a reviewer must know it: a finding in a test, a fixture, an example, the
 * docs or build tooling is never a P0, and rules that only matter in production do not run there;
 * generated and vendored files were not written in this change, so only secrets are looked for.
 *
 * A role comes from, in order: the repository's own configuration (extra test globs), its
 * `.gitattributes` (`linguist-generated`, `linguist-vendored`, `linguist-documentation`, then
 * `-diff`/`binary`: not meant to be read as a diff), the file's text (a generated marker in the
 * first lines or the opening comments, a bundler's or compiler's output, minified code), the
 * output directories its root `package.json`/`tsconfig.json` name, and the conventional paths and
 * names of each language.
 */
import { globListMatcher, matchesGlob } from './globs';

export const FILE_ROLES = [
  'production',
  'test',
  'fixture',
  'example',
  'docs',
  'tooling',
  'generated',
  'vendored',
] as const;
export type FileRole = (typeof FILE_ROLES)[number];

/** Roles whose code was not written by hand in this repository: only secrets are looked for. */
export const isForeignCode = (role: FileRole) => role === 'generated' || role === 'vendored';

/** Script languages a benchmark is named in (`bench.py`, `parse.bench.ts`). */
const SCRIPT_EXTENSIONS = '{py,js,mjs,cjs,jsx,ts,mts,cts,tsx,rb,php,sh,lua,pl}';

/** Conventional globs per role, checked in this order (a fixture under test/ is a fixture). */
const CONVENTIONS: [FileRole, string[]][] = [
  [
    'vendored',
    [
      '**/node_modules/**',
      '**/bower_components/**',
      '**/vendor/**',
      '**/vendors/**',
      '**/third_party/**',
      '**/third-party/**',
      '**/thirdparty/**',
      '**/external/**',
      '**/extern/**',
      '**/.yarn/**',
    ],
  ],
  [
    'generated',
    [
      '*.min.js',
      '*.min.mjs',
      '*.min.css',
      '*.bundle.js',
      '*.chunk.js',
      '*.map',
      '*.pb.go',
      '*.pb.gw.go',
      '*_pb2.py',
      '*_pb2_grpc.py',
      '*.generated.*',
      '*.g.dart',
      '*.g.cs',
      '*_generated.go',
      'zz_generated*.go',
      '**/generated/**',
      '**/__generated__/**',
      '**/gen/**/*.go',
      '**/dist/**',
      '**/out/**/*.js',
      'package-lock.json',
      'yarn.lock',
      'pnpm-lock.yaml',
      'poetry.lock',
      'Cargo.lock',
      'go.sum',
      'composer.lock',
      'Gemfile.lock',
    ],
  ],
  [
    'fixture',
    [
      '**/fixtures/**',
      '**/fixture/**',
      '**/__fixtures__/**',
      '**/testdata/**',
      '**/test-data/**',
      '**/test_data/**',
      '**/__mocks__/**',
      '**/mocks/**',
      '**/__snapshots__/**',
      '*.snap',
    ],
  ],
  [
    'test',
    [
      '**/test/**',
      '**/tests/**',
      '**/__tests__/**',
      '**/spec/**',
      '**/specs/**',
      '**/e2e/**',
      '**/cypress/**',
      '**/testing/**',
      '**/src/test/**',
      '**/src/androidTest/**',
      '*.test.*',
      '*.spec.*',
      '*.e2e.*',
      '*-test.*',
      '*_test.go',
      'test_*.py',
      '*_test.py',
      'conftest.py',
      '*Test.java',
      '*Tests.java',
      '*IT.java',
      '*Test.kt',
      '*_spec.rb',
      '*_test.rb',
    ],
  ],
  [
    'example',
    [
      '**/examples/**',
      '**/example/**',
      '**/samples/**',
      '**/sample/**',
      '**/demo/**',
      '**/demos/**',
      '**/playground/**',
      '**/sandbox/**',
      '*.stories.*',
      '*.example.*',
    ],
  ],
  [
    'docs',
    [
      '**/docs/**',
      '**/doc/**',
      '**/documentation/**',
      '**/website/**',
      '*.md',
      '*.mdx',
      '*.markdown',
      '*.rst',
      '*.adoc',
      '*.txt',
    ],
  ],
  [
    'tooling',
    [
      '**/scripts/**',
      '**/script/**',
      '**/tools/**',
      '**/tooling/**',
      // Benchmarks are tooling: measured, not shipped (Go's live in `_test.go`, already tests).
      '**/benchmark/**',
      '**/benchmarks/**',
      '**/benchmarking/**',
      '**/bench/**',
      '**/benches/**',
      '**/src/jmh/**',
      // Benchmark scripts by name, wherever they sit (`src/bench.py`, `src/parse.bench.ts`); not
      // Go, where a file not named `_test.go` is compiled into its package.
      `{bench,benchmark,benchmarks,run_benchmarks,run_benchmark}.${SCRIPT_EXTENSIONS}`,
      `*{_,-,.}{bench,benchmark,benchmarks}.${SCRIPT_EXTENSIONS}`,
      `{bench,benchmark}_*.${SCRIPT_EXTENSIONS}`,
      '*Benchmark.{java,kt}',
      '*Benchmarks.{java,kt}',
      // A root `build/` holds build scripts and packaging (Go's project layout, webpack-era JS
      // templates); its committed output is told apart as generated (outputDirs, content).
      'build/**',
      '**/.github/**',
      '**/.circleci/**',
      // Task runners accept either case for their file (jake's own repository has `jakefile.js`).
      '{G,g}runtfile.*',
      '{G,g}ulpfile.*',
      '{J,j}akefile.*',
      '*.config.js',
      '*.config.cjs',
      '*.config.mjs',
      '*.config.ts',
      '.eslintrc.*',
      'noxfile.py',
      'fabfile.py',
      'tasks.py',
      'Makefile',
      'Rakefile',
    ],
  ],
];

const CONVENTION_MATCHERS = CONVENTIONS.map(([role, globs]) => [role, globListMatcher(globs)] as const);

/** Attributes of `.gitattributes` that set a role, and the role they set. */
const ATTRIBUTE_ROLES: Record<string, FileRole> = {
  'linguist-generated': 'generated',
  'linguist-vendored': 'vendored',
  'linguist-documentation': 'docs',
};

export interface GitAttributeRule {
  glob: string;
  role: FileRole;
  /** false for `-linguist-generated` or `linguist-generated=false`: the pattern is not that role. */
  set: boolean;
  /**
   * `diff` for `-diff`/`binary` (set: not meant to be read as a diff, so generated) and `diff` /
   * `!diff` (unset: a later line gives the diff back). Weaker than `linguist-generated=false`.
   */
  via?: 'diff';
}

/** Converts a gitattributes pattern to our glob form (a leading `/` anchors it at the root). */
function attributeGlob(pattern: string): string {
  if (pattern.startsWith('/')) return pattern.slice(1);
  // A pattern naming a directory (`dist/`) or with a slash inside is relative to the root in git;
  // a bare name matches at any depth, as our globs already do.
  if (pattern.endsWith('/')) return `**/${pattern}**`;
  return pattern;
}

/** The attribute lines of a `.gitattributes` file: each pattern and its attributes. */
function* attributeLines(text: string): Generator<{ glob: string; attributes: string[] }> {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [pattern, ...attributes] = line.split(/\s+/);
    if (!pattern) continue;
    yield { glob: attributeGlob(pattern), attributes };
  }
}

/** The role-setting lines of a `.gitattributes` file, in file order (a later line wins). */
export function parseGitAttributes(text: string): GitAttributeRule[] {
  const rules: GitAttributeRule[] = [];
  for (const { glob, attributes } of attributeLines(text)) {
    for (const attribute of attributes) {
      // `binary` is git's macro for `-diff -merge -text`; `diff=<driver>` (a textconv) is read.
      if (attribute === '-diff' || attribute === 'binary') {
        rules.push({ glob, role: 'generated', set: true, via: 'diff' });
        continue;
      }
      if (attribute === 'diff' || attribute === '!diff') {
        rules.push({ glob, role: 'generated', set: false, via: 'diff' });
        continue;
      }
      const m = /^([-!]?)(linguist-[a-z]+)(?:=(\w+))?$/.exec(attribute);
      const role = m ? ATTRIBUTE_ROLES[m[2] as string] : undefined;
      if (!m || !role) continue;
      const set = m[1] === '' && m[3] !== 'false';
      rules.push({ glob, role, set });
    }
  }
  return rules;
}

/** A `linguist-language=<name>` line: the files it matches are of that language. */
export interface LanguageAttributeRule {
  glob: string;
  /** The language's name as written, lower-cased (`typescript`, `c++`); null: unset again. */
  language: string | null;
}

/** The `linguist-language` lines of a `.gitattributes` file, in file order (a later line wins). */
export function parseLanguageAttributes(text: string): LanguageAttributeRule[] {
  const rules: LanguageAttributeRule[] = [];
  for (const { glob, attributes } of attributeLines(text)) {
    for (const attribute of attributes) {
      const m = /^([-!]?)linguist-language(?:=(\S+))?$/.exec(attribute);
      if (!m) continue;
      rules.push({ glob, language: m[1] === '' && m[2] ? m[2].toLowerCase() : null });
    }
  }
  return rules;
}

/** The language `.gitattributes` gives `path` (`linguist-language`), lower-cased; undefined: none. */
export function declaredLanguageOf(
  path: string,
  rules: readonly LanguageAttributeRule[],
): string | undefined {
  let language: string | null = null;
  for (const rule of rules) if (matchesGlob(path, rule.glob)) language = rule.language;
  return language ?? undefined;
}

/** Marker lines of generated files (Go's convention, Meta's `@generated`, common generators). */
const GENERATED_MARKER =
  /(Code generated .* DO NOT EDIT|@generated\b|auto-?generated|do not edit(?: this file)?,? (?:it|this file) (?:is|was) generated|This file (?:is|was) (?:automatically )?generated)/i;

/**
 * A comment that opens with `Generated by <tool>` at the top of the file: `// Generated by
 * CoffeeScript 1.12.7`, `# Generated by the protocol buffer compiler`, `/* Generated by Cython`.
 * Case-sensitive and only as a comment's first words, so prose in a doc comment (node-forge's
 * ` * generated using the Fortuna algorithm`) is not one. Not Django's `# Generated by Django …`
 * (migrations are made to be edited and reviewed), nor a note that an assistant wrote the code
 * (maintained by hand from then on).
 */
const GENERATED_BY =
  /^[ \t]*(?:\/\/+|#+|\/\*+|<!--|--|;+)[ \t]*Generated by[ \t]+(?!(?:Django|ChatGPT|(?:GitHub )?Copilot|Claude|Cursor|Gemini|GPT|OpenAI|an? AI|AI|LLM)\b)/m;

/**
 * A block comment's inner line naming a tool and its version: `/*` then ` * Generated by PEG.js
 * 0.10.0.` (esquery's parser.js). The version tells a tool from prose (` * Generated by the
 * caller, these ids are unique.`).
 */
const GENERATED_BY_TOOL_VERSION = /^[ \t]*\*[ \t]+Generated by [A-Z][\w.+-]*(?: [A-Z][\w.+-]*)? v?\d+\.\d+/m;

/** Lines of a file's opening comments read for a "do not edit, generated" notice. */
const LEADING_COMMENT_LINES = 40;
/** A comment line: a line comment, a block comment's start, inner (` * `) or end line. */
const COMMENT_LINE = /^\s*(?:\/\/|#|\/\*|\*|<!--)/;

/**
 * The comments a file opens with, up to the first line of code (blank lines and a shebang
 * skipped), at most LEADING_COMMENT_LINES lines. A block comment's lines count whatever they
 * start with.
 */
function leadingComments(content: string): string {
  const lines = content.slice(0, 8000).split('\n').slice(0, LEADING_COMMENT_LINES);
  const out: string[] = [];
  let inBlock = false;
  for (const [i, line] of lines.entries()) {
    const trimmed = line.trim();
    if (!inBlock && (trimmed === '' || (i === 0 && trimmed.startsWith('#!')))) continue;
    if (!inBlock && !COMMENT_LINE.test(line)) break;
    out.push(line);
    if (inBlock) inBlock = !trimmed.includes('*/');
    else inBlock = /\/\*/.test(trimmed) && !trimmed.slice(trimmed.indexOf('/*') + 2).includes('*/');
  }
  return out.join('\n');
}

/**
 * True when the first lines of `content` say the file is generated, or its opening comments say
 * both "do not edit" and "generated": a bundle's notice often comes after a license banner
 * (marked's `lib/marked.esm.js`: its banner, then `DO NOT EDIT THIS FILE` / `The code in this file
 * is generated from files in ./src/`). Both words are asked for there, as a doc comment above
 * hand-written code may mention generated things.
 */
export function hasGeneratedMarker(content: string): boolean {
  const head = content.slice(0, 2000).split('\n').slice(0, 5).join('\n');
  if (GENERATED_MARKER.test(head) || GENERATED_BY.test(head) || GENERATED_BY_TOOL_VERSION.test(head))
    return true;
  const comments = leadingComments(content);
  return /\bdo not edit\b/i.test(comments) && /\bgenerated\b/i.test(comments);
}

/** Files a bundler, compiler or minifier writes, whose text is read for the signs of one. */
const BUILD_OUTPUT_FILE = /\.(?:[cm]?js|css)$/i;

/**
 * What bundlers and compilers write near the top of their output, at the start of a line:
 * webpack's runtime (`/******\/ (() => { // webpackBootstrap`, chunk pushes, terser's license note),
 * esbuild's helpers (`var __defProp = …`, `var __commonJS = …`), TypeScript's helpers
 * (`var __awaiter = (this && this.__awaiter) || …`) and `exports.a = void 0;`, Babel's and SWC's
 * helpers, Rollup's interop helpers and UMD wrapper (its current and earlier forms), Parcel's
 * `$parcel$` helpers.
 */
const BUNDLER_MARKER = new RegExp(
  [
    String.raw`^\/\*{6}\/`,
    String.raw`^\((?:self|window|this|globalThis)(?:\.|\[["'])webpack(?:Chunk|Jsonp)`,
    String.raw`^\/\*! For license information please see \S+\.LICENSE\.txt \*\/`,
    '^var __(?:create|defProps?|getOwnPropDescs?|getOwnPropNames|getOwnPropSymbols|getProtoOf|hasOwnProp|propIsEnum|commonJS|esm|export|toESM|toCommonJS|copyProps|reExport) = ',
    String.raw`^var __\w+ = \(this && this\.__\w+\) \|\|`,
    String.raw`^exports\.[\w$]+ = (?:exports\.[\w$]+ = )*void 0;$`,
    String.raw`^function _(?:interopRequireDefault|interopRequireWildcard|classCallCheck|createClass|asyncToGenerator|interop_require_default|interop_require_wildcard|class_call_check|create_class|async_to_generator)\(`,
    // Rollup's interop helpers; `_interopDefault (ex)` is Rollup 1's (should.js's cjs/ build).
    String.raw`^function _interop(?:Default|DefaultLegacy|DefaultCompat|NamespaceDefault(?:Only)?|Namespace) ?\(`,
    String.raw`global = typeof globalThis !== 'undefined' \? globalThis : global \|\| self`,
    // Rollup's UMD wrapper as it closes: the factory in parentheses, `'use strict';` on its
    // opening line (moment.js, its min/ and locale/ builds). Hand-written UMD (umdjs's templates)
    // passes the function bare and puts the directive on a line of its own.
    String.raw`^\}\)?\(this, \(function \([\w$, ]*\) \{ 'use strict';$`,
    String.raw`^(?:var |function )?\$parcel\$\w+|\bparcelRequire\s*=`,
  ].join('|'),
  'm',
);

/** esbuild's comment naming the source of the code that follows (`// src/index.ts`). */
const SOURCE_PATH_COMMENT = /^\/\/ [\w@.$+~-]+(?:\/[\w@.$+~-]+)+\.(?:[cm]?[jt]sx?|json|css|vue|svelte)$/gm;

/** A source map reference as the last line: only compilers and bundlers write one. */
const SOURCE_MAP_LINE = /(?:^|\n)(?:\/\/|\/\*)[#@] sourceMappingURL=\S+[ \t]*(?:\*\/)?\s*$/;

/** Lines past this many characters hold minified code when code punctuation is dense in them. */
const LONG_LINE = 1000;
/** One minified line this long is enough. */
const VERY_LONG_LINE = 5000;

/**
 * Whether `content[start, end)` is dense code: at least one `;`, `{` or `}` per 100 characters
 * (a base64 or data string has next to none).
 */
function denseCode(content: string, start: number, end: number): boolean {
  let marks = 0;
  for (let i = start; i < end; i++) {
    const c = content.charCodeAt(i);
    if (c === 59 || c === 123 || c === 125) marks++;
  }
  return marks * 100 >= end - start;
}

/**
 * Minified code: one dense line over VERY_LONG_LINE characters, dense lines over LONG_LINE
 * holding more than half the file, or an average line over 500 characters in dense code.
 */
export function looksMinified(content: string): boolean {
  const length = content.length;
  if (length < LONG_LINE) return false;
  let lines = 0;
  let onLongLines = 0;
  for (let start = 0; start < length; ) {
    let end = content.indexOf('\n', start);
    if (end < 0) end = length;
    lines++;
    if (end - start > LONG_LINE && denseCode(content, start, end)) {
      if (end - start > VERY_LONG_LINE) return true;
      onLongLines += end - start;
    }
    start = end + 1;
  }
  if (onLongLines * 2 > length) return true;
  return length / lines > 500 && denseCode(content, 0, length);
}

/**
 * True when the text of `path` says it is generated: a marker in its first lines, or, for
 * JavaScript and CSS, the runtime or helpers of a bundler or compiler in its first 16 KB, two
 * of esbuild's source-path comments, a source map reference as its last line, or minified code.
 */
export function looksGenerated(path: string, content: string): boolean {
  if (hasGeneratedMarker(content)) return true;
  if (!BUILD_OUTPUT_FILE.test(path)) return false;
  const head = content.slice(0, 16_384);
  if (BUNDLER_MARKER.test(head)) return true;
  if ((head.match(SOURCE_PATH_COMMENT)?.length ?? 0) >= 2) return true;
  if (SOURCE_MAP_LINE.test(content.slice(-512))) return true;
  return looksMinified(content);
}

/** Files a build writes into its output directory: JavaScript, declarations, source maps, CSS. */
const OUTPUT_DIR_FILE = /(?:\.[cm]?js|\.jsx|\.css|\.map|\.d\.[cm]?ts)$/i;

/** Directory names package.json entry points name when they point at a build's output. */
const OUTPUT_DIR_NAMES = new Set(['build', 'dist', 'out']);

/** A relative directory path as the globs read it (`./build/` → `build`), or null when it leaves the root. */
function relativeDir(value: string): string | null {
  const dir = value
    .trim()
    .replace(/^(?:\.\/)+/, '')
    .replace(/\/+$/, '');
  if (dir === '' || dir === '.' || dir.startsWith('/') || dir.split('/').includes('..')) return null;
  return dir;
}

/** Every string in a package.json field (a path, or an object/array of them, as `exports` and `bin` are). */
function stringsIn(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value];
  if (depth > 4 || typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap((v) => stringsIn(v, depth + 1));
}

const ENTRY_FIELDS = ['main', 'module', 'browser', 'types', 'typings', 'unpkg', 'jsdelivr', 'bin', 'exports'];

/**
 * The directories the repository builds into, as its root manifests say: a `build/`, `dist/` or
 * `out/` that package.json's entry points (`main`, `module`, `exports`, `bin`, `types`, ...) or
 * published `files` name, and tsconfig.json's `compilerOptions.outDir`. JavaScript, CSS,
 * declarations and source maps there are generated.
 */
export function outputDirsOf(texts: { packageJson?: string | null; tsconfig?: string | null }): string[] {
  const dirs = new Set<string>();
  let manifest: unknown = null;
  try {
    manifest = texts.packageJson ? JSON.parse(texts.packageJson) : null;
  } catch {
    manifest = null;
  }
  if (typeof manifest === 'object' && manifest !== null && !Array.isArray(manifest)) {
    const fields = manifest as Record<string, unknown>;
    const entries = ENTRY_FIELDS.flatMap((f) => stringsIn(fields[f]));
    for (const entry of entries) {
      const path = relativeDir(entry);
      const top = path?.split('/')[0];
      if (path?.includes('/') && top && OUTPUT_DIR_NAMES.has(top)) dirs.add(top);
    }
    const files = Array.isArray(fields.files) ? fields.files : [];
    for (const entry of files) {
      if (typeof entry !== 'string' || entry.startsWith('!')) continue;
      const top = relativeDir(entry)?.split('/')[0];
      if (top && OUTPUT_DIR_NAMES.has(top)) dirs.add(top);
    }
  }
  // JSONC: a commented-out `// "outDir": …` (as `tsc --init` writes them) is not read, nor the
  // outDir of a configuration that only type-checks (`noEmit`).
  const tsconfig = texts.tsconfig ?? '';
  const emits = !/(?:^|[{,])\s*"noEmit"\s*:\s*true/m.test(tsconfig);
  const outDir = emits ? /(?:^|[{,])\s*"outDir"\s*:\s*"([^"]+)"/m.exec(tsconfig) : null;
  const dir = outDir ? relativeDir(outDir[1] as string) : null;
  if (dir) dirs.add(dir);
  return [...dirs];
}

export interface RoleSources {
  /** Extra test globs from the repository's configuration (`paths.tests`). */
  testGlobs?: readonly string[];
  attributes?: readonly GitAttributeRule[];
  /** The file's text, to read the signs of generated code; omitted: not checked. */
  content?: string | null;
  /** Directories the repository builds into (`outputDirsOf`): their JavaScript is generated. */
  outputDirs?: readonly string[];
}

/** The role of `path` (repository-relative, `/`-separated). */
export function roleOfPath(path: string, sources: RoleSources = {}): FileRole {
  if (sources.testGlobs?.some((g) => matchesGlob(path, g))) return 'test';
  const byAttributes = new Map<FileRole, boolean>();
  let undiffable = false;
  for (const rule of sources.attributes ?? []) {
    if (!matchesGlob(path, rule.glob)) continue;
    if (rule.via === 'diff') undiffable = rule.set;
    else byAttributes.set(rule.role, rule.set);
  }
  for (const role of ['generated', 'vendored', 'docs'] as const) {
    if (byAttributes.get(role) === true) return role;
  }
  if (byAttributes.get('generated') !== false) {
    if (undiffable) return 'generated';
    if (sources.content && looksGenerated(path, sources.content)) return 'generated';
    if (sources.outputDirs?.some((d) => path.startsWith(`${d}/`)) && OUTPUT_DIR_FILE.test(path))
      return 'generated';
  }
  for (const [role, matches] of CONVENTION_MATCHERS) {
    if (byAttributes.get(role) === false) continue;
    if (matches(path)) return role;
  }
  return 'production';
}
