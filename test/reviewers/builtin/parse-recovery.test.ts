/**
 * A file the grammar cannot read in full is read again, and what stays unread is a named gap
 * (issue 23.2): an interface whose call signatures end without semicolons and go on with a
 * generic one made tree-sitter's TypeScript grammar read the rest of the module as one ERROR, and
 * every function below it went unreviewed, in the CLI and in the service's analysis threads.
 */

import { Lang, parse } from '@ast-grep/napi';
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { FILES_NOT_ANALYZED } from '../../../src/core/runs';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import {
  errorRegions,
  linesIn,
  recoverParse,
  topLevelPieces,
} from '../../../src/reviewers/builtin/parse-recovery';
import type { ReviewFile } from '../../../src/reviewers/types';
import { catalogSkill } from '../../../src/skills/catalog';

/** A process-spawning module in execa's style: its types' overloads, then its functions. */
const MODULE = `import { spawn, exec, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { normalizeOptions, type Options } from './options';

export type Result<O extends Options = Options> = {
  stdout: string
  stderr: string
  exitCode: number
  options: O
}

export interface ExecaMethod<O extends Options = Options> {
  (file: string | URL, args?: readonly string[]): ResultPromise<O>
  <NewOptions extends Options>(file: string | URL, args: readonly string[], options: NewOptions): ResultPromise<NewOptions>
  (strings: TemplateStringsArray, ...values: readonly unknown[]): ResultPromise<O>
  <NewOptions extends Options>(options: NewOptions): ExecaMethod<NewOptions>
}

export type ResultPromise<O extends Options> = ChildProcess & Promise<Result<O>>

const DEFAULT_MAX_BUFFER = 1000 * 1000 * 100

function getEnv({ env: envOption, extendEnv, preferLocal, localDir }: Options) {
  const env = extendEnv ? { ...process.env, ...envOption } : envOption
  if (preferLocal) {
    return { ...env, PATH: \`\${localDir}:\${env?.PATH}\` }
  }
  return env
}

function handleArguments(file: string, args: readonly string[], options: Options = {}) {
  const parsed = normalizeOptions(file, args, options)
  const env = getEnv(parsed.options)
  return { file: parsed.file, args: parsed.args, options: { ...parsed.options, env, maxBuffer: DEFAULT_MAX_BUFFER } }
}

export function listDirectory(req: { query: { dir: string } }) {
  exec('ls ' + req.query.dir)
}

export const execa = createExeca(<O extends Options>(file: string, args: readonly string[], options?: O) => {
  const parsed = handleArguments(file, args, options)
  const child = spawn(parsed.file, parsed.args, parsed.options)
  return child as unknown as ResultPromise<O>
})

function createExeca(run: (file: string, args: readonly string[], options?: Options) => unknown): ExecaMethod {
  return run as unknown as ExecaMethod
}

export function toReadable(value: string): Readable {
  return Readable.from([value])
}
`;
const lines = MODULE.split('\n');
const PLANTED = lines.findIndex((l) => l.includes("exec('ls ' +")) + 1;
/** The interface the grammar cannot read, 1-based: from its first line to its closing brace. */
const INTERFACE = {
  start: lines.findIndex((l) => l.startsWith('export interface')) + 1,
  end: lines.findIndex((l, i) => i > 11 && l === '}') + 1,
};

describe('a module the TypeScript grammar derails on', () => {
  it('is parsed as one ERROR from the interface to the end, with the planted call unreadable', () => {
    // The premise: if the grammar ever reads it, this test says so instead of passing for nothing.
    const root = parse(Lang.TypeScript, MODULE);
    const errors = errorRegions(root);
    expect(linesIn(errors)).toBeGreaterThan(lines.length / 2);
    expect(root.root().findAll({ rule: { pattern: 'exec($A)' } })).toHaveLength(0);
  });

  it('is read again with the interface set aside, and only its lines stay unread', () => {
    const errors = errorRegions(parse(Lang.TypeScript, MODULE));
    const recovered = recoverParse(Lang.TypeScript, MODULE, errors);
    expect(recovered?.how).toContain('set aside');
    expect(recovered?.errors).toEqual([{ start: INTERFACE.start - 1, end: INTERFACE.end - 1 }]);
    expect(recovered?.root.root().findAll({ rule: { pattern: 'exec($A)' } })).toHaveLength(1);
  });

  for (const analysisThread of [false, true]) {
    it(`reports the planted injection and names the unread share (${analysisThread ? 'analysis thread' : 'in process'})`, async () => {
      const security = await catalogSkill('security');
      if (!security) throw new Error('no security skill');
      const file: ReviewFile = { diff: snippetDiffFile('src/index.ts', MODULE), content: MODULE };
      const result = await runBuiltinSkill(security, [file], {
        reviewerId: 'security',
        signal: new AbortController().signal,
        analysisThread,
      });
      const planted = result.findings.filter((f) => f.line === PLANTED);
      expect(planted.map((f) => f.rule)).toContain('security/command-injection');
      const gaps = result.gaps.filter((g) => g.code === FILES_NOT_ANALYZED);
      expect(gaps).toHaveLength(1);
      const unread = INTERFACE.end - INTERFACE.start + 1;
      expect(gaps[0]?.file).toEqual({
        path: 'src/index.ts',
        reason: 'not parseable as typescript',
        lines_left_out: unread,
        lines: lines.length - 1,
        share: Math.round((unread / (lines.length - 1)) * 100) / 100,
      });
      expect(gaps[0]?.message).toContain('set aside');
    });
  }
});

describe('a declaration set aside as large as the error it replaces', () => {
  // The ERROR spans as many lines as the interface, but they are not the same lines: it starts
  // inside the interface and swallows the function after it, whose call is no longer a call.
  const text = [
    "import { exec } from 'node:child_process';",
    '',
    '/** Runs a file. */',
    'export interface Execa<O extends Options = Options> {',
    '  (file: string, args?: readonly string[]): Promise<Result<O>>',
    '  <N extends Options>(file: string, args: readonly string[], options: N): Promise<Result<N>>',
    '  <N extends Options>(options: N): Execa<N>',
    '}',
    '',
    "export function run(req: { query: { x: string } }) { exec('ls ' + req.query.x) }",
    '',
  ].join('\n');

  it('wins the tie, keeping its doc comment read, so the function after it is matched', async () => {
    const first = parse(Lang.TypeScript, text);
    expect(first.root().findAll({ rule: { pattern: 'exec($A)' } })).toHaveLength(0);
    const recovered = recoverParse(Lang.TypeScript, text, errorRegions(first));
    // Lines 4-8 (1-based): the interface without its comment.
    expect(recovered?.errors).toEqual([{ start: 3, end: 7 }]);
    const security = await catalogSkill('security');
    if (!security) throw new Error('no security skill');
    const result = await runBuiltinSkill(
      security,
      [{ diff: snippetDiffFile('src/execa.ts', text), content: text }],
      { reviewerId: 'security', signal: new AbortController().signal },
    );
    expect(result.findings.map((f) => `${f.line} ${f.rule}`)).toContain('10 security/command-injection');
  });
});

describe('declarations whose type parameters close at column 0 (Prettier, no semicolons)', () => {
  // reselect's createSelectorCreator.ts and immer's types-external.ts: Prettier puts the `>` that
  // closes a long type parameter list at column 0. Cut there, the function's head failed alone,
  // was set aside, and its body after it became a new ERROR: the whole function went unread.
  const text = [
    "import { exec } from 'node:child_process';",
    '',
    'export interface Creator<',
    '  O extends Options = Options',
    '> {',
    '  (file: string, args?: readonly string[]): Creator<O>',
    '  <N extends Options>(file: string, args: readonly string[], options: N): Creator<N>',
    '  (strings: TemplateStringsArray, ...values: readonly unknown[]): Creator<O>',
    '  <N extends Options>(options: N): Creator<N>',
    '}',
    '',
    'export function createCreator<',
    '  Memoize extends Function,',
    '  Args extends Function',
    '>(options: Options<Memoize, Args>, req: { query: { dir: string } }) {',
    "  exec('ls ' + req.query.dir)",
    '  return options',
    '}',
    '',
  ].join('\n');

  it('keeps the function whole: only the interface stays unread and the call in its body is matched', () => {
    const first = parse(Lang.TypeScript, text);
    // The premise: the interface derails the grammar through the function after it.
    expect(first.root().findAll({ rule: { pattern: 'exec($A)' } })).toHaveLength(0);
    const recovered = recoverParse(Lang.TypeScript, text, errorRegions(first));
    // Lines 3-10 (1-based): the interface the grammar cannot read, its `> {` line included.
    expect(recovered?.errors).toEqual([{ start: 2, end: 9 }]);
    expect(recovered?.root.root().findAll({ rule: { pattern: 'exec($A)' } })).toHaveLength(1);
  });

  it('does not start a piece at a line that continues the one before', () => {
    const pieces = topLevelPieces([
      'type A<',
      '  T',
      '> = T',
      '  | null',
      '',
      'const b = x',
      '  ? 1',
      ': 2',
      '.valueOf()',
    ]);
    expect(pieces).toEqual([
      { start: 0, end: 4 },
      { start: 5, end: 8 },
    ]);
  });
});

describe('topLevelPieces', () => {
  it('starts a piece at each column-0 declaration, with its comments and decorators', () => {
    const text = [
      'import a from "a";',
      '',
      '/** doc */',
      '@dec()',
      'export class A {',
      '  x = 1;',
      '}',
      'f();',
    ];
    expect(topLevelPieces(text)).toEqual([
      { start: 0, end: 1 },
      { start: 2, end: 6 },
      { start: 7, end: 7 },
    ]);
  });
});
