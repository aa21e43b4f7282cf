/**
 * Speed of the builtin lineup on a generated change: 2,000 files, 100,000 changed lines
 * (TypeScript, JavaScript, TSX and Python, 50 lines each, every line added), all three catalog
 * skills. Run: `node bin/run-ts.mjs eval/bench.ts [files]`.
 */
import { runBuiltinSkill } from '../src/reviewers/builtin/engine';
import type { ReviewFile } from '../src/reviewers/types';
import { loadCatalog } from '../src/skills/catalog';
import { snippetDiffFile } from './evaluate';

const TS_BLOCK = [
  'export async function handler{N}(req: Request, db: Db) {',
  '  const id = String(req.query.id ?? "");',
  '  const rows = await db.query("SELECT * FROM t WHERE id = $1", [id]);',
  '  if (rows.length === 0) {',
  '    throw new Error("not found: " + id);',
  '  }',
  '  try {',
  '    await audit(id);',
  '  } catch (e) {',
  '    log.warn(e);',
  '  }',
  '  const total = rows.reduce((a: number, r: Row) => a + r.amount, 0);',
  '  return { id, total, items: rows.map((r: Row) => ({ ...r, seen: true })) };',
  '}',
  '',
];
const PY_BLOCK = [
  'def handler_{N}(request, cursor):',
  '    uid = request.args.get("id", "")',
  '    cursor.execute("SELECT * FROM t WHERE id = %s", (uid,))',
  '    rows = cursor.fetchall()',
  '    if not rows:',
  '        raise LookupError(uid)',
  '    try:',
  '        audit(uid)',
  '    except ValueError:',
  '        logger.warning("audit failed")',
  '    total = sum(r["amount"] for r in rows)',
  '    return {"id": uid, "total": total}',
  '',
];

function generate(count: number, linesPerFile = 50): ReviewFile[] {
  const exts = ['ts', 'js', 'tsx', 'py'];
  return Array.from({ length: count }, (_, i) => {
    const ext = exts[i % exts.length] as string;
    // Plain JavaScript gets the TypeScript block without its type annotations.
    const block =
      ext === 'py'
        ? PY_BLOCK
        : ext === 'js'
          ? TS_BLOCK.map((l) => l.replace(/: (Request|Db|number|Row)/g, ''))
          : TS_BLOCK;
    const lines: string[] = [];
    for (let n = 0; lines.length < linesPerFile; n++)
      lines.push(...block.map((l) => l.replace('{N}', String(n))));
    const code = `${lines.slice(0, linesPerFile).join('\n')}\n`;
    return { diff: snippetDiffFile(`src/mod${i}/file${i}.${ext}`, code), content: code };
  });
}

const processStart = performance.now();
process.on('exit', () => console.log(`exit at ${performance.now().toFixed(0)} ms`));
const count = Number(process.argv[2] ?? 2000);
const files = generate(count);
const changed = files.reduce((n, f) => n + f.diff.additions, 0);
const only = process.env.BENCH_SKILLS?.split(',');
const skills = (await loadCatalog()).filter((s) => s.engine !== 'llm' && (!only || only.includes(s.id)));
const signal = new AbortController().signal;
const started = performance.now();
let findings = 0;
for (const skill of skills) {
  const t = performance.now();
  const result = await runBuiltinSkill(skill, files, { reviewerId: skill.id, signal });
  findings += result.findings.length;
  console.log(
    `${skill.id.padEnd(12)} ${(performance.now() - t).toFixed(0).padStart(6)} ms  ${result.findings.length} findings, ${result.gaps.length} gaps`,
  );
}
console.log(`process up to here: ${(performance.now() - processStart).toFixed(0)} ms`);
console.log(
  `${files.length} files, ${changed} changed lines, ${skills.length} skills: ${(performance.now() - started).toFixed(0)} ms, ${findings} findings`,
);
