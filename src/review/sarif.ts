/** Findings as SARIF 2.1.0, for code-scanning uploads and editors. */
import type { findingRecord } from './service';

type Finding = ReturnType<typeof findingRecord>;

const LEVEL = { P0: 'error', P1: 'warning', P2: 'note' } as const;

export function toSarif(
  findings: Finding[],
  options: { toolVersion: string; baseSha: string; headSha: string },
) {
  const rules = [...new Map(findings.map((f) => [f.rule, f])).values()].map((f) => ({
    id: f.rule,
    name: f.rule.replace(/[^A-Za-z0-9]+/g, '_'),
    shortDescription: { text: f.title },
    properties: { category: f.category },
  }));
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0' as const,
    runs: [
      {
        tool: { driver: { name: 'svc', version: options.toolVersion, rules } },
        versionControlProvenance: [{ repositoryUri: 'file:.', revisionId: options.headSha }],
        properties: { base: options.baseSha, head: options.headSha },
        results: findings.map((f) => ({
          ruleId: f.rule,
          ruleIndex: rules.findIndex((r) => r.id === f.rule),
          level: LEVEL[f.severity],
          message: { text: `${f.title}\n\n${f.body}` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: f.path },
                region: { startLine: f.line, endLine: f.end_line },
              },
            },
          ],
          partialFingerprints: { 'svc/v1': f.fingerprint },
          properties: { severity: f.severity, status: f.status, reviewers: f.reviewers },
        })),
      },
    ],
  };
}
