/**
 * `npm run eval`: the builtin reviewers measured on three kinds of material, each titled with
 * where it comes from, each held to its target; exits 1 when any part misses it.
 *   1. own cases (written here): eval/cases/*.yml; precision and recall >= 0.9 per category.
 *   2. external labelled suites (not written here): ESLint security plugins' RuleTester cases,
 *      from node_modules, mapped by eval/external/mapping.yml; >= 0.9 in total and per rule.
 *   3. real code (not written here): ranges between two published versions of real projects,
 *      findings labelled in eval/real/labels.yml; <= 1 non-actionable finding per 5,000 changed
 *      production lines, no non-actionable P0, every finding labelled.
 *   4. published vulnerabilities (not written here): each case in eval/vulns/cases/ replays the
 *      change that brought an advisory's vulnerability in; recall >= 75% overall and >= 60% per
 *      class with 3+ cases, ahead of ESLint's security plugin and bandit where they run.
 *
 * Options: `--part=1,3` runs only those parts; `--unlabelled` prints a YAML label stub for every
 * unlabelled real-code finding (append to eval/real/labels.yml and fill in); `--findings` lists
 * every real-code finding with its label; `--stale` lists labels no current finding has;
 * `--case=CVE-2021-23358,...` runs only those part 4 cases (a rule's own cases while changing it).
 */
import { type EvalReport, evaluate, failingCategories, type Score, THRESHOLD } from './evaluate';
import {
  EXTERNAL_THRESHOLD,
  type ExternalReport,
  evaluateExternal,
  externalFailures,
  type RuleScore,
} from './external/evaluate-external';
import {
  actionableShare,
  evaluateReal,
  type Figures,
  NON_ACTIONABLE_PER_5K_TARGET,
  nonActionablePer5k,
  per1k,
  type RealReport,
  realFailures,
} from './real/evaluate-real';
import { keyString, labelStub } from './real/labels';
import {
  CLASS_RECALL_TARGET,
  CLASS_TARGET_MIN_CASES,
  evaluateVulns,
  OVERALL_RECALL_TARGET,
  REVIEW_SECONDS_TARGET,
  recall,
  type Tally,
  type VulnsReport,
  vulnsFailures,
} from './vulns/evaluate-vulns';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const partsArg = args.find((a) => a.startsWith('--part='))?.slice('--part='.length);
const parts = new Set((partsArg ?? '1,2,3,4').split(',').map(Number));

const pct = (n: number) => `${(n * 100).toFixed(1)}%`.padStart(7);
const num = (n: number, width = 5) => String(n).padStart(width);
const title = (text: string) => `\n${'='.repeat(text.length)}\n${text}\n${'='.repeat(text.length)}`;
const scoreHeader = (name: string) =>
  `${name.padEnd(44)} ${'prec'.padStart(7)} ${'recall'.padStart(7)}   tp   fp   fn`;
const scoreRow = (name: string, s: Score | RuleScore) =>
  `${name.padEnd(44)} ${pct(s.precision)} ${pct(s.recall)} ${num(s.tp, 4)} ${num(s.fp, 4)} ${num(s.fn, 4)}`;

function printOwn(report: EvalReport): string[] {
  const lines = [
    title('Part 1 - own cases (written here): eval/cases/*.yml'),
    `${report.cases} cases; target: precision and recall >= ${THRESHOLD} per category`,
    '',
    scoreHeader('category'),
  ];
  for (const [name, s] of Object.entries(report.byCategory).sort()) lines.push(scoreRow(name, s));
  lines.push('', scoreHeader('rule'));
  for (const [name, s] of Object.entries(report.byRule).sort()) lines.push(scoreRow(name, s));
  if (report.misses.length > 0) lines.push('', ...report.misses);
  if (report.gaps.length > 0) lines.push('', 'gaps:', ...report.gaps);
  return lines;
}

function printExternal(report: ExternalReport): string[] {
  const lines = [
    title('Part 2 - external labelled suites (not written here): RuleTester cases of npm packages'),
    `packages: ${report.packages.map((p) => `${p.name}@${p.version}`).join(', ')} (read from node_modules)`,
    `${report.cases} cases, ${report.scored} scored, ${report.cases - report.scored} excluded by eval/external/mapping.yml`,
    `target: precision and recall >= ${EXTERNAL_THRESHOLD} in total and per rule`,
    '',
    `${scoreHeader('suite (package/file) -> our rule')}  excluded (flagged anyway)`,
  ];
  for (const [suite, s] of Object.entries(report.bySuite)) {
    lines.push(suite);
    lines.push(`${scoreRow(`  -> ${s.rule}`, s)}  ${num(s.excluded, 4)} (${s.excludedFlagged})`);
  }
  lines.push('', `${scoreHeader('our rule')}  excluded (flagged anyway)`);
  for (const [rule, s] of Object.entries(report.byRule).sort())
    lines.push(`${scoreRow(rule, s)}  ${num(s.excluded, 4)} (${s.excludedFlagged})`);
  lines.push(
    `${scoreRow('total', report.total)}  ${num(report.total.excluded, 4)} (${report.total.excludedFlagged})`,
  );
  if (report.misses.length > 0) lines.push('', ...report.misses);
  lines.push('', 'excluded (labels our rules do not share):');
  for (const e of report.exclusions)
    lines.push(`  ${num(e.count, 3)} ${e.verdict.padEnd(7)} ${e.suite}: ${e.why}`);
  lines.push('not mapped:');
  for (const u of report.unmapped) lines.push(`  ${u.package} (${u.files.length} suite(s)): ${u.why}`);
  if (report.mappingErrors.length > 0) lines.push('', 'mapping errors:', ...report.mappingErrors);
  if (report.gaps.length > 0) lines.push('', 'gaps:', ...report.gaps);
  return lines;
}

const figureHeader = `${'repository (base -> head)'.padEnd(58)} ${'changed'.padStart(7)} ${'prod'.padStart(6)} ${'finds'.padStart(5)} ${'/1k'.padStart(6)} ${'act%'.padStart(6)} ${'non-act'.padStart(7)} ${'/5k prod'.padStart(8)} ${'P0 na'.padStart(5)} ${'unlab'.padStart(5)}`;
function figureRow(name: string, f: Figures): string {
  const share = actionableShare(f);
  return `${name.padEnd(58)} ${num(f.changedLines, 7)} ${num(f.productionLines, 6)} ${num(f.findings)} ${per1k(f).toFixed(2).padStart(6)} ${(share === null ? '-' : `${(share * 100).toFixed(0)}%`).padStart(6)} ${num(f.nonActionable, 7)} ${nonActionablePer5k(f).toFixed(2).padStart(8)} ${num(f.nonActionableP0)} ${num(f.unlabelled)}`;
}

function printReal(report: RealReport): string[] {
  const lines = [
    title(
      'Part 3 - real code (not written here): published sources of open-source projects, two versions each',
    ),
    'each range reviewed like svc: a temporary git repository, base = version A, head = version B',
    `target: <= ${NON_ACTIONABLE_PER_5K_TARGET} non-actionable finding per 5,000 changed production lines, no non-actionable P0, every finding labelled`,
    'changed = lines added at head; prod = those in production code (role production, a language the rules read, not .d.ts)',
    '',
    figureHeader,
  ];
  for (const r of report.repositories)
    lines.push(figureRow(`${r.name} (${r.base} -> ${r.head.split('@').pop()})`, r));
  lines.push(figureRow('total', report.total));
  const dismissed = report.total.dismissed;
  if (dismissed > 0) lines.push(`(${dismissed} finding(s) dismissed inline by svc-ignore, not counted)`);
  lines.push('', `${'rule'.padEnd(40)} finds  act  non-act  unlab`);
  for (const [rule, r] of Object.entries(report.byRule).sort((a, b) => b[1].findings - a[1].findings))
    lines.push(
      `${rule.padEnd(40)} ${num(r.findings)} ${num(r.actionable, 4)} ${num(r.nonActionable, 8)} ${num(r.unlabelled, 6)}`,
    );
  const noisy = report.findings.filter((f) => f.label && !f.label.actionable);
  if (noisy.length > 0) {
    lines.push('', 'non-actionable findings:');
    for (const f of noisy)
      lines.push(`  ${f.severity} ${f.key.rule} ${f.repository}/${f.key.path}:${f.line} - ${f.label?.why}`);
  }
  if (flag('findings')) {
    lines.push('', 'all findings:');
    for (const f of report.findings)
      lines.push(
        `  ${f.severity} ${f.key.rule} ${f.repository}/${f.key.path}:${f.line} [${f.role}] ${f.label ? (f.label.actionable ? 'actionable' : 'not actionable') : 'UNLABELLED'}${f.label ? ` - ${f.label.why}` : ''}`,
      );
  }
  const unlabelled = report.findings.filter((f) => !f.label);
  if (unlabelled.length > 0) {
    lines.push(
      '',
      `unlabelled (${unlabelled.length}; \`npm run eval -- --part=3 --unlabelled\` prints stubs):`,
    );
    for (const f of unlabelled)
      lines.push(
        `  ${f.severity} ${f.key.rule} ${f.repository}/${f.key.path}:${f.line}  ${f.key.line.trim().slice(0, 90)}`,
      );
  }
  if (report.staleLabels.length > 0)
    lines.push(
      '',
      `${report.staleLabels.length} label(s) match no current finding (kept for when a rule flags the line again; \`--stale\` lists them)`,
    );
  if (flag('stale'))
    for (const l of report.staleLabels)
      lines.push(`  ${l.package}/${l.path} ${l.rule}: ${l.line.slice(0, 90)}`);
  if (report.gaps.length > 0) lines.push('', 'gaps:', ...report.gaps);
  return lines;
}

const tallyCell = (t: Tally | undefined) =>
  (t ? `${t.caught}/${t.cases} ${pct(recall(t))}` : '-').padStart(14);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function printVulns(report: VulnsReport): string[] {
  const peers = report.peers;
  const lines = [
    title('Part 4 - published vulnerabilities at the commit that introduced them (not written here)'),
    'each case (eval/vulns/cases/<id>/) reviewed like svc: a temporary git repository, base = the fixed files, head = the vulnerable files (the fix reversed)',
    "caught: a finding of the case's class on one of its vulnerable lines",
    'peers on the same vulnerable files, scored generously (any message on a vulnerable line catches the case):',
    ...peers.map(
      (p) => `  ${p.name} on ${p.languages.join('/')}: ${p.version ?? `${p.name}: not installed (not run)`}`,
    ),
    '  go, java: no peer here',
    `target: recall >= ${pct(OVERALL_RECALL_TARGET).trim()} overall and >= ${pct(CLASS_RECALL_TARGET).trim()} in every class with ${CLASS_TARGET_MIN_CASES}+ cases; ahead of each peer in every language where it runs; review < ${REVIEW_SECONDS_TARGET} s per case (reported, not enforced)`,
    '',
  ];
  const header = (name: string) =>
    `${name.padEnd(26)} ${'svc'.padStart(14)}${peers.map((p) => p.name.slice(0, 14).padStart(16)).join('')}`;
  const row = (name: string, pick: (t: VulnsReport['svc']) => Tally | undefined) =>
    `${name.padEnd(26)} ${tallyCell(pick(report.svc))}${peers.map((p) => `  ${tallyCell(pick(p.tallies))}`).join('')}`;
  lines.push(header('class'));
  for (const name of Object.keys(report.svc.byClass).sort()) lines.push(row(name, (t) => t.byClass[name]));
  lines.push('', header('language'));
  for (const name of Object.keys(report.svc.byLanguage).sort())
    lines.push(row(name, (t) => t.byLanguage[name]));
  lines.push(row('total', (t) => t.total));
  lines.push(
    '',
    `${'case'.padEnd(30)} ${'language'.padEnd(11)} ${'class'.padEnd(24)} svc     ${peers.map((p) => p.name.slice(0, 10).padEnd(11)).join('')}review`,
  );
  for (const r of report.results)
    lines.push(
      `${r.case.id.padEnd(30)} ${r.case.language.padEnd(11)} ${r.case.class.padEnd(24)} ${(r.caught ? 'caught' : 'MISSED').padEnd(8)}${peers.map((p) => (p.name in r.peers ? (r.peers[p.name] ? 'caught' : 'missed') : '-').padEnd(11)).join('')}${seconds(r.reviewMs)} (cpu ${seconds(r.reviewCpuMs)})`,
    );
  const misses = report.results.filter((r) => !r.caught);
  if (misses.length > 0) {
    lines.push('', `missed (${misses.length}):`);
    for (const r of misses) {
      const where = r.case.vulnerable.map((v) => `${v.path}:${v.lines.join(',')}`).join(' ');
      lines.push(`  ${r.case.id} (${r.case.project}, ${r.case.language}, ${r.case.class}) at ${where}`);
      lines.push(`    ${r.case.summary}`);
      for (const f of r.foundInstead) lines.push(`    found instead: ${f}`);
    }
  }
  const t = report.timing;
  const slow = report.results.filter((r) => r.reviewMs > REVIEW_SECONDS_TARGET * 1000);
  lines.push(
    '',
    `review time per case (wall): median ${seconds(t.medianMs)}, max ${seconds(t.maxMs)}${t.slowest ? ` (${t.slowest})` : ''}; ${slow.length} case(s) over ${REVIEW_SECONDS_TARGET} s${slow.length > 0 ? `: ${slow.map((r) => r.case.id).join(', ')}` : ''}`,
    `review CPU time per case (every thread of the process; waiting for a core not counted): median ${seconds(t.medianCpuMs)}, max ${seconds(t.maxCpuMs)}`,
  );
  const problems = report.results.flatMap((r) => r.problems.map((p) => `  ${r.case.id}: ${p}`));
  if (report.errors.length > 0 || problems.length > 0)
    lines.push('', 'malformed cases:', ...report.errors.map((e) => `  ${e}`), ...problems);
  const gaps = report.results.flatMap((r) => r.gaps.map((g) => `  ${r.case.id}: ${g}`));
  if (gaps.length > 0) lines.push('', 'gaps:', ...gaps);
  return lines;
}

const started = performance.now();
const failures: string[] = [];
if (parts.has(1)) {
  const report = await evaluate();
  console.log(printOwn(report).join('\n'));
  for (const c of failingCategories(report)) failures.push(`part 1 (own cases): ${c} below ${THRESHOLD}`);
}
if (parts.has(2)) {
  const report = await evaluateExternal();
  console.log(printExternal(report).join('\n'));
  for (const f of externalFailures(report)) failures.push(`part 2 (external suites): ${f}`);
}
if (parts.has(3)) {
  const report = await evaluateReal();
  if (flag('unlabelled')) {
    // One stub per key: identical flagged lines in one file share a label.
    const stubs = new Map<string, string>();
    for (const f of report.findings.filter((x) => !x.label)) {
      const key = keyString(f.key);
      if (!stubs.has(key))
        stubs.set(key, labelStub(f.key, `${f.severity} ${f.title} [${f.role}]`, f.context));
    }
    console.log(stubs.size > 0 ? [...stubs.values()].join('\n') : '# every real-code finding has a label');
    process.exit(0);
  }
  console.log(printReal(report).join('\n'));
  for (const f of realFailures(report)) failures.push(`part 3 (real code): ${f}`);
}
if (parts.has(4)) {
  const only = args.find((a) => a.startsWith('--case='))?.slice('--case='.length);
  const report = await evaluateVulns(only ? { only: only.split(',') } : {});
  console.log(printVulns(report).join('\n'));
  for (const f of vulnsFailures(report)) failures.push(`part 4 (published vulnerabilities): ${f}`);
}
console.log(`\n${(performance.now() - started).toFixed(0)} ms`);
if (failures.length > 0) {
  console.log(`\ntargets missed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}
console.log('\nall targets met');
