/**
 * Peer for JavaScript/TypeScript cases: ESLint (Node API, no config file, no network) with only
 * eslint-plugin-security's recommended rules. Scored generously: inline `eslint-disable`
 * comments are ignored, a file that does not parse as a module is parsed again as a script, and
 * TypeScript is stripped of its types with esbuild first (espree reads no types), each message
 * mapped back to its TypeScript line through esbuild's source map.
 */
import { readFile } from 'node:fs/promises';
import { createRequire, SourceMap } from 'node:module';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { addFlag, type Peer, type PeerRun } from './peer';

const require = createRequire(import.meta.url);

/** The part of ESLint's Node API used here (ESLint is loaded only when installed). */
interface ESLintModule {
  ESLint: {
    version: string;
    new (
      options: Record<string, unknown>,
    ): {
      lintText(code: string, options: { filePath: string }): Promise<Linted[]>;
    };
  };
}
type Linted = { messages: { line?: number; fatal?: boolean; message: string }[] };

/** ESLint, or null when it is not installed (the eval then says so instead of failing). */
async function loadEslint(): Promise<ESLintModule | null> {
  const name = 'eslint';
  try {
    return (await import(name)) as ESLintModule;
  } catch {
    return null;
  }
}

const TYPESCRIPT = /\.(ts|tsx|mts|cts)$/;

/** The file as espree can read it, and how to find an original line from a linted one. */
async function readable(path: string, text: string): Promise<{ code: string; line: (n: number) => number }> {
  if (!TYPESCRIPT.test(path)) return { code: text, line: (n) => n };
  const out = await transform(text, {
    loader: path.endsWith('x') ? 'tsx' : 'ts',
    sourcemap: 'external',
    sourcefile: path,
    format: undefined,
    target: 'esnext',
  });
  const map = new SourceMap(JSON.parse(out.map));
  return {
    code: out.code,
    line: (n) => {
      const entry = map.findEntry(n - 1, 0) as { originalLine?: number };
      return entry.originalLine === undefined ? n : entry.originalLine + 1;
    },
  };
}

export const eslintSecurityPeer: Peer = {
  name: 'eslint-security',
  languages: ['javascript', 'typescript'],

  async version() {
    const eslint = await loadEslint();
    if (!eslint) return null;
    const plugin = require('eslint-plugin-security/package.json') as { version: string };
    return `ESLint ${eslint.ESLint.version} + eslint-plugin-security ${plugin.version} (recommended)`;
  },

  async flag(headDir, paths) {
    const out: PeerRun = { flagged: new Map(), gaps: [] };
    const eslint = await loadEslint();
    if (!eslint) return out;
    const security = require('eslint-plugin-security') as { configs: { recommended: object } };
    const linter = (sourceType: 'module' | 'script') =>
      new eslint.ESLint({
        cwd: headDir,
        overrideConfigFile: true,
        allowInlineConfig: false,
        overrideConfig: [
          {
            files: ['**/*'],
            ...security.configs.recommended,
            languageOptions: {
              ecmaVersion: 'latest',
              sourceType,
              parserOptions: { ecmaFeatures: { jsx: true, globalReturn: sourceType === 'script' } },
            },
          },
        ],
      });
    const asModule = linter('module');
    const asScript = linter('script');
    for (const path of paths) {
      const text = await readFile(join(headDir, path), 'utf8');
      const { code, line } = await readable(path, text);
      // A virtual .js name: the config applies to it whatever the original extension.
      const filePath = join(headDir, `${path}.peer.js`);
      let [result] = await asModule.lintText(code, { filePath });
      if (result?.messages.some((m) => m.fatal)) [result] = await asScript.lintText(code, { filePath });
      for (const m of result?.messages ?? []) {
        if (m.fatal) {
          out.gaps.push(`ESLint could not parse ${path}: ${m.message}`);
          continue;
        }
        if (m.line !== undefined) addFlag(out.flagged, path, line(m.line));
      }
    }
    return out;
  },
};
