/**
 * Labels for the findings the rules report on real code (`labels.yml`): whether a careful reader
 * of the code would act on each one. A label is keyed by what survives a rerun and small rule
 * changes: the package, the file, the rule and the flagged line's text (whitespace collapsed),
 * never a line number or a finding id.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify } from 'yaml';
import { z } from 'zod';

export const LABELS_PATH = fileURLToPath(new URL('./labels.yml', import.meta.url));

/** Flagged lines longer than this (minified code) are keyed by their start. */
const MAX_KEY_LINE = 160;

const labelSchema = z
  .object({
    package: z.string().min(1),
    path: z.string().min(1),
    rule: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/),
    line: z.string(),
    actionable: z.boolean({ message: 'actionable must be true or false' }),
    why: z.string().min(1),
  })
  .strict();

export type Label = z.infer<typeof labelSchema>;
export type LabelKey = Pick<Label, 'package' | 'path' | 'rule' | 'line'>;

export const normalizeLine = (line: string) => line.replace(/\s+/g, ' ').trim().slice(0, MAX_KEY_LINE);

export const keyString = (k: LabelKey) => [k.package, k.path, k.rule, normalizeLine(k.line)].join('\u0000');

export interface LabelSet {
  labels: Label[];
  byKey: Map<string, Label>;
}

/** Reads the labels; a malformed entry or a key labelled twice is an error naming the entry. */
export async function loadLabels(path = LABELS_PATH): Promise<LabelSet> {
  const raw: unknown = parseYaml(await readFile(path, 'utf8')) ?? [];
  if (!Array.isArray(raw)) throw new Error(`${path}: expected a list of labels`);
  const labels: Label[] = [];
  const byKey = new Map<string, Label>();
  raw.forEach((item, i) => {
    const parsed = labelSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `${path}: label ${i + 1} (${JSON.stringify(item)}): ${issue?.path.join('.')}: ${issue?.message}`,
      );
    }
    const key = keyString(parsed.data);
    if (byKey.has(key)) throw new Error(`${path}: label ${i + 1} repeats the key of an earlier label`);
    byKey.set(key, parsed.data);
    labels.push(parsed.data);
  });
  return { labels, byKey };
}

/** A YAML label to fill in, with the flagged code above it as comments. */
export function labelStub(key: LabelKey, heading: string, context: string[]): string {
  const entry = stringify([{ ...key, line: normalizeLine(key.line), actionable: null, why: '' }], {
    lineWidth: 0,
  });
  const comments = [heading, ...context].map((l) => `# ${l}`.trimEnd());
  return `${comments.join('\n')}\n${entry.replace('actionable: null', 'actionable: # true or false')}`;
}
