/**
 * Findings for people, on a terminal or in a CI log, and as JSON records. Text groups the open
 * findings by file, most severe first, and shows at most `limit` of them: the rest are counted,
 * with how to see them; it never drops one silently. JSON and SARIF always carry every finding.
 */
import { type FileRole, roleOfPath } from '../core/file-roles';
import { FILES_NOT_ANALYZED, type Gap } from '../core/runs';
import { coverageText, type ReviewCoverage } from '../review/coverage';
import type { FileLedgerFinding } from '../review/file-ledger';

/** The JSON shape of a finding (the API's field names, for the CLI's ledger). */
export function findingOutput(f: FileLedgerFinding) {
  return {
    object: 'finding' as const,
    id: f.id,
    status: f.status,
    severity: f.severity,
    path: f.path,
    line: f.line,
    end_line: f.endLine,
    title: f.title,
    body: f.body,
    rule: f.rule,
    category: f.category,
    reviewers: f.reviewers,
    suggestion: f.suggestion,
    fingerprint: f.fingerprint,
    commit_sha: f.commitSha,
    dismissed_reason: f.dismissedReason,
    dismissed_at: f.dismissedAt,
    dismissed_by: f.dismissedBy,
    fixed_at: f.fixedAt,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
  };
}

/**
 * A finding as `svc review --format json` gives it: with its file's role in this review (by path
 * for a file of the ledger the review did not change), so a consumer can tell test code's from
 * production code's findings.
 */
export function reviewFindingOutput(f: FileLedgerFinding, roles: ReadonlyMap<string, FileRole>) {
  const { object, id, status, severity, path, ...rest } = findingOutput(f);
  return { object, id, status, severity, path, role: roles.get(path) ?? roleOfPath(path), ...rest };
}

const SEVERITY_ORDER = { P0: 0, P1: 1, P2: 2 } as const;

/** Most severe first, then by place. */
export const bySeverity = (a: FileLedgerFinding, b: FileLedgerFinding) =>
  SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.path.localeCompare(b.path) || a.line - b.line;

export interface TextOptions {
  color: boolean;
  /** The most open findings shown; the others are counted. Infinity: all. */
  limit: number;
  /** What the review covered, said after the findings; omitted: not said. */
  coverage?: ReviewCoverage | null | undefined;
  /** The review's gaps: files not analyzed are listed with the coverage. */
  gaps?: readonly Gap[] | undefined;
}

/** The coverage lines, then each file not analyzed with why. */
function coverageLines(options: TextOptions): string[] {
  if (!options.coverage) return [];
  const notAnalyzed = (options.gaps ?? []).filter((g) => g.code === FILES_NOT_ANALYZED);
  return ['', ...coverageText(options.coverage), ...notAnalyzed.map((g) => `Not analyzed: ${g.message}`)];
}

function painter(color: boolean) {
  const paint = (code: string, s: string) => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
  return { paint, badge: { P0: paint('1;31', 'P0'), P1: paint('33', 'P1'), P2: paint('36', 'P2') } as const };
}

const countBy = (findings: FileLedgerFinding[]) =>
  (['P0', 'P1', 'P2'] as const)
    .map((s) => `${findings.filter((f) => f.severity === s).length} ${s}`)
    .join(', ');

/** What one review reported. */
export function formatReviewText(reported: FileLedgerFinding[], options: TextOptions): string {
  const { paint, badge } = painter(options.color);
  const open = reported.filter((f) => f.status === 'open').sort(bySeverity);
  const dismissed = reported.filter((f) => f.status === 'dismissed');
  if (reported.length === 0) return `${['No findings.', ...coverageLines(options)].join('\n')}\n`;
  const shown = open.slice(0, options.limit);
  const hidden = open.slice(shown.length);
  const byFile = new Map<string, FileLedgerFinding[]>();
  for (const f of shown) byFile.set(f.path, [...(byFile.get(f.path) ?? []), f]);
  const lines: string[] = [];
  for (const [path, list] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(paint('1', path));
    for (const f of list.sort(bySeverity)) {
      const where = f.endLine > f.line ? `${f.line}-${f.endLine}` : `${f.line}`;
      lines.push(
        `  ${badge[f.severity]} ${where}: ${f.title}  [${f.rule}; ${f.reviewers.join(', ')}] ${paint('2', f.id)}`,
      );
      for (const bodyLine of f.body.split('\n')) lines.push(`       ${bodyLine}`);
    }
    lines.push('');
  }
  lines.push(
    `${reported.length} finding(s): ${countBy(open)} open${dismissed.length > 0 ? `, ${dismissed.length} dismissed` : ''}`,
  );
  if (hidden.length > 0)
    lines.push(
      `${hidden.length} more open finding(s) not shown (${countBy(hidden)}): \`svc review --all\` shows every one; ` +
        '--format json or sarif writes every finding',
    );
  if (dismissed.length > 0) lines.push('Dismissed findings: `svc findings list --status dismissed`.');
  if (open.length > 0) lines.push('To dismiss one: `svc findings dismiss <id> --reason "..."`.');
  lines.push(...coverageLines(options));
  return `${lines.join('\n')}\n`;
}

/** A ledger's findings, one line each. */
export function formatLedgerText(findings: FileLedgerFinding[], options: { color: boolean }): string {
  const { paint, badge } = painter(options.color);
  if (findings.length === 0) return 'No findings in this ledger.\n';
  const lines = [...findings].sort(bySeverity).map((f) => {
    const status = f.status === 'dismissed' ? `dismissed: ${f.dismissedReason ?? ''}` : f.status;
    return `${paint('2', f.id)}  ${badge[f.severity]}  ${f.path}:${f.line}  ${f.title}  [${f.rule}] (${status})`;
  });
  return `${lines.join('\n')}\n`;
}
