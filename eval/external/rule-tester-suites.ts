/**
 * Reads the labelled cases of an ESLint plugin's RuleTester test file as its authors wrote them:
 * the file is run with `require('eslint')` answered by a stub RuleTester that records every
 * `run(name, rule, { valid, invalid })` call instead of linting. Running the file (rather than
 * parsing its arrays) resolves what the authors built with variables and concatenation, e.g.
 * `const invalid = 'eval("foo." + property);'`. Nothing else of the plugin is loaded: every other
 * `require` gets an inert stand-in, so the rule implementations never run.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileFunction } from 'node:vm';

export type Verdict = 'valid' | 'invalid';

export interface LabelledSnippet {
  verdict: Verdict;
  code: string;
  /** Position in its list, to name the case (`valid[3]`). */
  index: number;
  /** The RuleTester run it came from (a file may hold several). */
  run: number;
}

type RawCase = string | { code?: unknown };

/** A stand-in module: any property is another stand-in, any call returns one. */
const inert: unknown = new Proxy(() => inert, { get: (_t, key) => (key === 'then' ? undefined : inert) });

export function loadRuleTesterFile(file: string): LabelledSnippet[] {
  const snippets: LabelledSnippet[] = [];
  let runs = 0;
  class StubRuleTester {
    run(_name: string, _rule: unknown, tests: { valid?: RawCase[]; invalid?: RawCase[] }) {
      const run = runs++;
      for (const verdict of ['valid', 'invalid'] as const) {
        (tests[verdict] ?? []).forEach((item, index) => {
          const code = typeof item === 'string' ? item : item?.code;
          if (typeof code !== 'string') throw new Error(`${file}: ${verdict}[${index}] has no code`);
          snippets.push({ verdict, code, index, run });
        });
      }
    }
  }
  const stubRequire = (id: string) => (id === 'eslint' ? { RuleTester: StubRuleTester } : inert);
  const module = { exports: {} };
  const body = compileFunction(
    readFileSync(file, 'utf8'),
    ['require', 'module', 'exports', '__filename', '__dirname'],
    {
      filename: file,
    },
  );
  body(stubRequire, module, module.exports, file, dirname(file));
  if (runs === 0) throw new Error(`${file}: no RuleTester run found`);
  return snippets;
}

/** The snippets of `relativePath` inside an installed package folder. */
export const loadSuite = (packageDir: string, relativePath: string) =>
  loadRuleTesterFile(join(packageDir, relativePath));
