/**
 * The model's answer contract (a zod schema the AI SDK turns into the provider's JSON-schema
 * structured output and validates the answer with) and how an answer becomes findings anchored
 * on the diff.
 *
 * The schema stays inside the strict structured-output subset providers accept: every field is
 * required (absent values are `null`), no length or range keywords; ranges are enforced here.
 */
import { jsonSchema } from 'ai';
import { z } from 'zod';
import {
  type Diff,
  type DiffFile,
  type FindingDraft,
  SEVERITIES,
  snapToChangedLine,
} from '../../core/review';
import type { Gap } from '../../core/runs';

export const llmFindingSchema = z.object({
  severity: z.enum(SEVERITIES).describe('P0 must fix, P1 should fix, P2 minor'),
  path: z.string().describe('file path exactly as in the diff'),
  line: z.number().int().describe('new-file line number of an added line'),
  end_line: z.number().int().nullable().describe('last new-file line (>= line), or null'),
  title: z.string().describe('one short sentence'),
  body: z.string().describe('markdown: why it is a defect and how to fix it'),
  category: z.string().describe('one lowercase word, e.g. security, correctness, performance'),
  suggestion: z.string().nullable().describe('replacement text for lines line..end_line, or null'),
});

export const llmAnswerSchema = z.object({ findings: z.array(llmFindingSchema) });

export type LlmFinding = z.infer<typeof llmFindingSchema>;
export type LlmAnswer = z.infer<typeof llmAnswerSchema>;

type WireSchema = Exclude<Parameters<typeof jsonSchema>[0], PromiseLike<unknown> | (() => unknown)>;

/**
 * The JSON Schema sent to the provider: zod's, every object closed (`additionalProperties: false`,
 * which strict mode requires), without `$schema` and without the safe-integer bounds zod puts on
 * every integer (range keywords are outside the older strict subsets).
 */
export function answerWireSchema(): WireSchema {
  const schema = z.toJSONSchema(llmAnswerSchema, {
    target: 'draft-7',
    io: 'input',
    override: ({ jsonSchema: node }) => {
      if (node.type === 'integer') {
        delete node.minimum;
        delete node.maximum;
      }
      // Strict structured outputs need every object closed.
      if (node.type === 'object') node.additionalProperties = false;
    },
  }) as Record<string, unknown>;
  delete schema.$schema;
  return schema as WireSchema;
}

/** The answer schema for `Output.object`: the wire schema above, validated by zod. */
export const llmAnswerOutputSchema = jsonSchema<LlmAnswer>(answerWireSchema(), {
  validate: (value) => {
    const result = llmAnswerSchema.safeParse(value);
    return result.success ? { success: true, value: result.data } : { success: false, error: result.error };
  },
});

export function normalizeCategory(category: string): string {
  const slug = category
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug || 'general';
}

function findFile(byPath: Map<string, DiffFile>, path: string): DiffFile | undefined {
  const cleaned = path.trim().replace(/^\.\//, '').replace(/^\/+/, '');
  return byPath.get(cleaned) ?? (/^[ab]\//.test(cleaned) ? byPath.get(cleaned.slice(2)) : undefined);
}

/** The last new-file line of the hunk that shows `line`, so a range never leaves its hunk. */
function hunkEnd(file: DiffFile, line: number): number {
  for (const hunk of file.hunks) {
    const end = hunk.newStart + Math.max(hunk.newLines, 1) - 1;
    if (line >= hunk.newStart && line <= end) return end;
  }
  return line;
}

export interface Anchored {
  findings: FindingDraft[];
  gaps: Gap[];
}

/**
 * Findings the diff can carry: a finding on a file outside the diff is dropped (one gap counts
 * them), one on a file without added lines is dropped too (another gap), `line` is snapped to the
 * nearest added line and `end_line` clamped into [line, end of its hunk]. A suggestion is kept
 * only when the finding did not have to move: moved, it would replace the wrong lines.
 */
export function anchorFindings(answer: LlmFinding[], diff: Diff, reviewer: string): Anchored {
  const byPath = new Map(diff.files.map((f) => [f.path, f]));
  const findings: FindingDraft[] = [];
  const outside = new Set<string>();
  let outsideCount = 0;
  let unanchored = 0;
  for (const raw of answer) {
    const file = findFile(byPath, raw.path);
    if (!file) {
      outsideCount++;
      outside.add(raw.path);
      continue;
    }
    const line = snapToChangedLine(file, raw.line);
    if (line === null) {
      unanchored++;
      continue;
    }
    const moved = line !== raw.line;
    const requestedEnd = raw.end_line ?? raw.line;
    const endLine = Math.min(Math.max(requestedEnd, line), hunkEnd(file, line));
    const category = normalizeCategory(raw.category);
    const title = raw.title.trim() || raw.body.trim().split('\n')[0]?.slice(0, 120) || `${category} issue`;
    findings.push({
      severity: raw.severity,
      path: file.path,
      line,
      endLine,
      title,
      body: raw.body.trim(),
      rule: `llm/${category}`,
      category,
      reviewer,
      suggestion: !moved && raw.suggestion !== null && endLine === requestedEnd ? raw.suggestion : undefined,
    });
  }
  const gaps: Gap[] = [];
  if (outsideCount > 0) {
    const names = [...outside].slice(0, 5).join(', ');
    gaps.push({
      code: 'llm_findings_outside_diff',
      message: `${outsideCount} finding(s) named files that are not in the diff (${names}${outside.size > 5 ? ', …' : ''}) and were dropped`,
    });
  }
  if (unanchored > 0) {
    gaps.push({
      code: 'llm_findings_unanchored',
      message: `${unanchored} finding(s) pointed at files with no added lines and were dropped`,
    });
  }
  return { findings, gaps };
}
