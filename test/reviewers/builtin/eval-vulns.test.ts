/**
 * Eval part 4 (eval/vulns): the case folders are what they claim to be, and the evaluator scores
 * a replayed vulnerability the way `npm run eval -- --part=4` does. The recall target itself is
 * not asserted here: the rules are still being raised towards it; `npm run eval` reports it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duplicateIds, loadVulnCases, VULN_CLASSES, type VulnCase } from '../../../eval/vulns/case-folders';
import { checkVulnCases, evaluateVulns, recall, vulnsFailures } from '../../../eval/vulns/evaluate-vulns';
import { eslintSecurityPeer } from '../../../eval/vulns/peers/eslint-security';

/** Cases whose outcome the builtin rules decide today (update when a rule starts or stops catching one). */
const CAUGHT_TODAY = 'CVE-2021-23358'; // underscore: new Function(settings.variable || 'obj', ...)
const MISSED_TODAY = 'CVE-2013-4660'; // js-yaml: new Function is reported as code injection, the advisory says deserialization
const GROWL = 'CVE-2017-16042'; // growl: exec(args.join(' '), fn)

describe('eval part 4: the case folders', () => {
  it('are well-formed: unique ids, known classes, vulnerable lines that the change adds to the head files', async () => {
    const { cases, errors } = await loadVulnCases();
    expect(errors).toEqual([]);
    expect(duplicateIds(cases)).toEqual([]);
    for (const c of cases) expect(VULN_CLASSES).toContain(c.class);
    const scripts = cases.filter((c) => c.language === 'javascript' || c.language === 'typescript');
    expect(scripts.length).toBeGreaterThanOrEqual(22);
    expect(await checkVulnCases(cases)).toEqual({});
  }, 120_000);

  it('a vulnerable line the change does not add, or past the end of the file, is a problem', async () => {
    const growl = (await loadVulnCases()).cases.find((c) => c.id === 'CVE-2017-16042') as VulnCase;
    const wrong = { ...growl, vulnerable: [{ path: 'lib/growl.js', lines: [1, 289, 5000] }] };
    expect(await checkVulnCases([wrong])).toEqual({
      'CVE-2017-16042': [
        'lib/growl.js:1 is not a line the change adds',
        'lib/growl.js:5000 is past the end of the head file (290 lines)',
      ],
    });
  });

  describe('a malformed folder', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'svc-vuln-cases-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('is reported, not loaded', async () => {
      const write = async (folder: string, yaml: string, head: Record<string, string>) => {
        await mkdir(join(dir, folder, 'head'), { recursive: true });
        await writeFile(join(dir, folder, 'case.yml'), yaml);
        for (const [path, text] of Object.entries(head))
          await writeFile(join(dir, folder, 'head', path), text);
      };
      const yaml = (id: string, cls: string, path: string) =>
        [
          `id: ${id}`,
          'project: demo',
          'language: javascript',
          `class: ${cls}`,
          'summary: s',
          'source: written here',
          'vulnerable:',
          `  - path: ${path}`,
          '    lines: [1]',
        ].join('\n');
      await write('CVE-0000-0001', yaml('CVE-0000-0001', 'command-injection', 'a.js'), { 'a.js': 'x\n' });
      await write('CVE-0000-0002', yaml('CVE-0000-0009', 'command-injection', 'a.js'), { 'a.js': 'x\n' });
      await write('CVE-0000-0003', yaml('CVE-0000-0003', 'open-redirect', 'a.js'), { 'a.js': 'x\n' });
      await write('CVE-0000-0004', yaml('CVE-0000-0004', 'xss', 'missing.js'), { 'a.js': 'x\n' });
      const { cases, errors } = await loadVulnCases(dir);
      expect(cases.map((c) => c.id)).toEqual(['CVE-0000-0001']);
      expect(cases[0]?.baseDir).toBeNull();
      expect(errors).toHaveLength(3);
      expect(errors[0]).toMatch(/^CVE-0000-0002: id CVE-0000-0009 is not the folder name/);
      expect(errors[1]).toMatch(/^CVE-0000-0003: class:/);
      expect(errors[2]).toMatch(/^CVE-0000-0004: vulnerable path missing.js is not under head\//);
    });
  });
});

describe('eval part 4: the evaluator', () => {
  let cases: VulnCase[];
  beforeAll(async () => {
    const all = (await loadVulnCases()).cases;
    cases = [CAUGHT_TODAY, MISSED_TODAY, GROWL].map((id) => {
      const c = all.find((x) => x.id === id);
      if (!c) throw new Error(`case ${id} is missing`);
      return c;
    });
  });

  it('reports a case the rules catch as caught and one they miss as missed, with what was found instead', async () => {
    const report = await evaluateVulns({ cases: cases.slice(0, 2), peers: false });
    const byId = new Map(report.results.map((r) => [r.case.id, r]));
    expect(byId.get(CAUGHT_TODAY)).toMatchObject({ caught: true, foundInstead: [], problems: [] });
    const missed = byId.get(MISSED_TODAY);
    expect(missed).toMatchObject({ caught: false, problems: [] });
    expect(missed?.foundInstead.length).toBeGreaterThan(0);
    expect(report.svc.total).toEqual({ cases: 2, caught: 1 });
    expect(recall(report.svc.total)).toBe(0.5);
    expect(report.svc.byLanguage.javascript).toEqual({ cases: 2, caught: 1 });
    for (const r of report.results) expect(r.reviewMs).toBeGreaterThan(0);
    // Peers off: no peer ran, so none is reported or compared.
    expect(report.peers.every((p) => p.version === null && p.tallies.total.cases === 0)).toBe(true);
    expect(vulnsFailures(report)).toEqual([
      expect.stringMatching(/^recall 50% overall \(1\/2; target >= 75%\)$/),
    ]);
  }, 60_000);

  it('scores a peer by any message on a vulnerable line', async () => {
    const growl = cases[2] as VulnCase;
    const run = await eslintSecurityPeer.flag(growl.headDir, ['lib/growl.js']);
    expect(run.gaps).toEqual([]);
    // detect-child-process reports the exec call the advisory is about.
    expect(run.flagged.get('lib/growl.js')?.has(289)).toBe(true);
  }, 60_000);

  it('lets the ESLint peer read TypeScript, reporting at the TypeScript line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-vuln-peer-'));
    try {
      const ts = [
        'interface Options {',
        '  code: string;',
        '}',
        '',
        'export function run(options: Options): unknown {',
        '  const text: string = options.code as string;',
        '  return eval(text);',
        '}',
        '',
      ].join('\n');
      await writeFile(join(dir, 'run.ts'), ts);
      const run = await eslintSecurityPeer.flag(dir, ['run.ts']);
      expect(run.gaps).toEqual([]);
      expect([...(run.flagged.get('run.ts') ?? [])]).toEqual([7]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
