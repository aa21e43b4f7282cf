/** Dependencies point inward: each layer imports only the layers inside it. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The top-level folder (or file) of src/ an import lands in, or the package it names. */
function importsOf(file: string): { layer: string | null; spec: string }[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map(
    (m) => m[1] as string,
  );
  return specs.map((spec) => {
    if (!spec.startsWith('.')) return { layer: null, spec };
    const target = relative(SRC, resolve(dirname(file), spec));
    return { layer: target.split('/')[0] ?? target, spec };
  });
}

/** Which src/ layers each layer may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  storage: ['core'],
  codehost: ['core'],
  skills: ['core'],
  reviewers: ['core', 'skills'],
  'skills-store': ['core', 'storage', 'skills'],
  knowledge: ['core', 'storage', 'codehost'],
  scorecards: ['core', 'storage', 'codehost', 'knowledge'],
  metrics: ['core', 'storage'],
  engine: ['core', 'storage', 'codehost', 'config', 'knowledge', 'scorecards'],
  review: [
    'core',
    'storage',
    'codehost',
    'engine',
    'reviewers',
    'skills',
    'skills-store',
    'config',
    'knowledge',
  ],
  plans: ['core', 'storage', 'engine', 'codehost'],
  automation: ['core', 'storage', 'engine', 'codehost', 'review', 'config', 'plans', 'knowledge'],
  github: ['core', 'storage', 'engine', 'codehost', 'review', 'reviewers', 'skills', 'automation', 'config'],
  operations: [
    'core',
    'storage',
    'engine',
    'codehost',
    'review',
    'reviewers',
    'skills',
    'skills-store',
    'config',
    'knowledge',
    'plans',
    'scorecards',
    'metrics',
  ],
  http: ['core', 'storage', 'engine', 'operations', 'codehost', 'mcp', 'github'],
  mcp: ['core', 'operations', 'http'],
};

describe('dependency direction', () => {
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`${layer}/ imports only ${allowed.join(', ') || 'itself'}`, () => {
      const offending = filesUnder(join(SRC, layer)).flatMap((file) =>
        importsOf(file)
          .filter((i) => i.layer !== null && i.layer !== layer && !allowed.includes(i.layer))
          .map((i) => `${relative(SRC, file)} imports ${i.spec}`),
      );
      expect(offending).toEqual([]);
    });
  }

  it('core/ uses no package but zod and node built-ins', () => {
    const packages = filesUnder(join(SRC, 'core')).flatMap((file) =>
      importsOf(file)
        .filter((i) => i.layer === null && i.spec !== 'zod' && !i.spec.startsWith('node:'))
        .map((i) => `${relative(SRC, file)} imports ${i.spec}`),
    );
    expect(packages).toEqual([]);
  });
});
