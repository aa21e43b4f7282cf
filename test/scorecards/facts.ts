/**
 * Scorecard facts for the pure tests: the knowledge is derived by the real derivation from file
 * texts (as setup would), the ledger is given as numbers, everything else as the host says it.
 */
import { deriveKnowledge, knowledgeFilesWanted } from '../../src/knowledge/derive';
import type { LedgerFacts, ScorecardFacts } from '../../src/scorecards/types';

export const NOW = new Date('2026-06-30T12:00:00Z');
const DAY = 86_400_000;

export function emptyLedger(over: Partial<LedgerFacts> = {}): LedgerFacts {
  return {
    since: new Date(NOW.getTime() - 30 * DAY),
    reviews: 0,
    firstReviewAt: null,
    created: { total: 0, open: 0, fixed: 0, dismissed: 0 },
    fixHours: [],
    rules: [],
    mergedPullRequests: 0,
    openP0OnMerged: [],
    openP0Total: 0,
    secretFindings: [],
    secretTotal: 0,
    secretDismissed: 0,
    ...over,
  };
}

/** Facts of a repository holding `files` on `main`, with the ledger and host given. */
export function factsFor(
  files: Record<string, string>,
  over: Partial<Omit<ScorecardFacts, 'knowledge' | 'paths'>> = {},
): ScorecardFacts {
  const paths = Object.keys(files);
  const texts = new Map(knowledgeFilesWanted(paths).map((p) => [p, files[p] ?? null]));
  const derived = deriveKnowledge({ commit: 'c0ffee', paths, texts });
  const pkg = files['package.json'];
  const scripts = pkg ? ((JSON.parse(pkg) as { scripts?: Record<string, string> }).scripts ?? {}) : {};
  return {
    now: NOW,
    host: { kind: 'local', defaultBranch: 'main' },
    commitSha: 'c0ffee',
    knowledge: { id: 'rkn_test', content: derived.content, gaps: derived.gaps, commitSha: 'c0ffee' },
    paths,
    rootScripts: scripts,
    requiredChecks: null,
    ledger: emptyLedger(),
    missing: {},
    ...over,
  };
}

export const BARE_REPO: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'shop', scripts: { test: 'vitest run' }, devDependencies: { vitest: '3.2.4' } })}\n`,
  'src/cart.js': 'export const cart = [];\n',
  'src/pay.js': 'export const pay = () => 1;\n',
};

/** A repository with everything the first three levels ask for. */
export const GUARDED_REPO: Record<string, string> = {
  'package.json': `${JSON.stringify({
    name: 'shop',
    engines: { node: '>=20' },
    scripts: { test: 'vitest run', lint: 'biome check .', typecheck: 'tsc --noEmit' },
    devDependencies: { vitest: '3.2.4', '@biomejs/biome': '2.0.0', typescript: '5.9.0' },
  })}\n`,
  'package-lock.json': '{"lockfileVersion":3}\n',
  'biome.json': '{}\n',
  'tsconfig.json': '{}\n',
  'src/cart.ts': 'export const cart = [];\n',
  'src/cart.test.ts': 'test("x", () => {});\n',
  '.github/workflows/ci.yml':
    'on: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm ci\n      - run: npm run lint\n      - run: npm run typecheck\n      - run: npm test\n',
  '.github/CODEOWNERS': '* @acme/shop\n',
};
