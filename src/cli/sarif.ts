/**
 * Findings as SARIF 2.1.0, for code-scanning uploads and editors. Every reported finding is a
 * result (a dismissed one carries a suppression, so code scanning shows it as dismissed); every
 * rule is described by its own catalog definition: its message as the short description, its note
 * as the help. Rules outside the rule catalog (secretlint's, model reviewers') are described by
 * their skill.
 */

import { FILES_NOT_ANALYZED, type Gap } from '../core/runs';
import type { ReviewCoverage } from '../review/coverage';
import type { FileLedgerFinding } from '../review/file-ledger';
import type { CatalogSkill, SkillRule } from '../skills/catalog';

const LEVEL = { P0: 'error', P1: 'warning', P2: 'note' } as const;

interface RuleDescription {
  short: string;
  full: string;
  help: string;
  level: (typeof LEVEL)[keyof typeof LEVEL];
  category: string;
}

/** `$FN` reads as `fn`: a rule's text describes every match, not one. */
const general = (text: string) =>
  text.replace(/\$([A-Z_][A-Z0-9_]*)/g, (_, name: string) => name.toLowerCase());
const firstParagraph = (text: string) =>
  text
    .split(/\n\s*\n/)[0]
    ?.replace(/\s*\n\s*/g, ' ')
    .trim() ?? '';

function describeCatalogRule(rule: SkillRule): RuleDescription {
  const note = general(rule.note);
  return {
    short: general(rule.message),
    full: firstParagraph(note),
    help: note,
    level: LEVEL[rule.severity],
    category: rule.category,
  };
}

/** How each rule of these findings is described, from the skills they came from. */
export function describeRules(
  findings: FileLedgerFinding[],
  skills: CatalogSkill[],
): Map<string, RuleDescription> {
  const bySkill = new Map(skills.map((s) => [s.id, s]));
  const out = new Map<string, RuleDescription>();
  for (const f of findings) {
    if (out.has(f.rule)) continue;
    const slash = f.rule.indexOf('/');
    const skillId = f.rule.slice(0, slash);
    const ruleId = f.rule.slice(slash + 1);
    const skill = bySkill.get(skillId);
    const rule = skill?.rules.find((r) => r.id === ruleId);
    if (rule) {
      out.set(f.rule, describeCatalogRule(rule));
      continue;
    }
    if (skillId === 'llm') {
      const reviewer = bySkill.get('general');
      out.set(f.rule, {
        short: `Model review: ${ruleId} problem`,
        full: reviewer?.description ?? 'A model reviewer read the change.',
        help: reviewer?.severityPolicy ?? '',
        level: 'warning',
        category: f.category,
      });
      continue;
    }
    // A rule of an engine with its own rule set (secretlint): the skill says what it looks for;
    // the finding's body (the same for every finding of the rule) says how to fix it.
    out.set(f.rule, {
      short: skill ? `${skill.title}: ${ruleId}` : f.rule,
      full: skill?.description ?? f.title,
      help: f.body,
      level: LEVEL[f.severity],
      category: f.category,
    });
  }
  return out;
}

/**
 * The review's gaps as SARIF tool execution notifications: a file not analyzed is a warning at
 * that file (with the share left out), every other gap a note. Code scanning shows them with the
 * run, so an upload with no results still says what was not read.
 */
export function gapNotifications(gaps: readonly Gap[]) {
  return gaps.map((gap) => ({
    level: gap.code === FILES_NOT_ANALYZED ? ('warning' as const) : ('note' as const),
    message: { text: gap.message },
    descriptor: { id: gap.code },
    ...(gap.file
      ? {
          locations: [{ physicalLocation: { artifactLocation: { uri: gap.file.path } } }],
          properties: {
            reason: gap.file.reason,
            lines_left_out: gap.file.lines_left_out,
            lines: gap.file.lines,
            share: gap.file.share,
          },
        }
      : {}),
  }));
}

export function toSarif(
  findings: FileLedgerFinding[],
  options: {
    toolVersion: string;
    baseSha: string;
    headSha: string;
    skills: CatalogSkill[];
    /** The review's gaps, as the invocation's notifications. */
    gaps?: readonly Gap[];
    coverage?: ReviewCoverage | null;
  },
) {
  const described = describeRules(findings, options.skills);
  const ids = [...described.keys()].sort();
  const rules = ids.map((id) => {
    const d = described.get(id) as RuleDescription;
    return {
      id,
      name: id.replace(/[^A-Za-z0-9]+/g, '_'),
      shortDescription: { text: d.short },
      fullDescription: { text: d.full },
      help: { text: d.help, markdown: d.help },
      defaultConfiguration: { level: d.level },
      properties: { category: d.category, tags: [d.category] },
    };
  });
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0' as const,
    runs: [
      {
        tool: {
          driver: { name: 'svc', version: options.toolVersion, rules },
        },
        versionControlProvenance: [{ repositoryUri: 'file:.', revisionId: options.headSha }],
        invocations: [
          { executionSuccessful: true, toolExecutionNotifications: gapNotifications(options.gaps ?? []) },
        ],
        properties: {
          base: options.baseSha,
          head: options.headSha,
          ...(options.coverage ? { coverage: options.coverage } : {}),
        },
        results: findings.map((f) => ({
          ruleId: f.rule,
          ruleIndex: ids.indexOf(f.rule),
          level: LEVEL[f.severity],
          message: { text: `${f.title}\n\n${f.body}` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: f.path },
                region: { startLine: f.line, endLine: f.endLine },
              },
            },
          ],
          partialFingerprints: { 'svc/v1': f.fingerprint },
          ...(f.status === 'dismissed'
            ? {
                suppressions: [
                  {
                    kind: f.dismissedBy === 'inline' ? ('inSource' as const) : ('external' as const),
                    justification: f.dismissedReason ?? '',
                  },
                ],
              }
            : {}),
          properties: { id: f.id, severity: f.severity, status: f.status, reviewers: f.reviewers },
        })),
      },
    ],
  };
}
