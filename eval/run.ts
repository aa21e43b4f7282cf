/**
 * `npm run eval`: precision and recall of the builtin reviewers on the labelled cases, per
 * category and per rule. Exits 1 when any category is below 0.9 in either.
 */
import { type EvalReport, evaluate, failingCategories, type Score, THRESHOLD } from './evaluate';

const pct = (n: number) => `${(n * 100).toFixed(1)}%`.padStart(7);
const row = (name: string, s: Score) =>
  `${name.padEnd(40)} ${pct(s.precision)} ${pct(s.recall)} ${String(s.tp).padStart(4)} ${String(s.fp).padStart(4)} ${String(s.fn).padStart(4)}`;
const header = (title: string) =>
  `${title.padEnd(40)} ${'prec'.padStart(7)} ${'recall'.padStart(7)}   tp   fp   fn`;

function print(report: EvalReport) {
  const lines = [`${report.cases} cases`, '', header('category')];
  for (const [name, s] of Object.entries(report.byCategory).sort()) lines.push(row(name, s));
  lines.push('', header('rule'));
  for (const [name, s] of Object.entries(report.byRule).sort()) lines.push(row(name, s));
  if (report.misses.length > 0) lines.push('', ...report.misses);
  if (report.gaps.length > 0) lines.push('', 'gaps:', ...report.gaps);
  console.log(lines.join('\n'));
}

const started = performance.now();
const report = await evaluate();
print(report);
const failing = failingCategories(report);
console.log(`\n${(performance.now() - started).toFixed(0)} ms`);
if (failing.length > 0) {
  console.error(`below ${THRESHOLD} in precision or recall: ${failing.join(', ')}`);
  process.exit(1);
}
