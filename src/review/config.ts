/** A review's saved configuration: what each of its runs executes (frozen into the run). */
import { z } from 'zod';

export const lineupEntrySchema = z.object({
  key: z.string(),
  reviewerId: z.string(),
  model: z.string().nullable(),
  skillRevisionId: z.string().nullable(),
});

export const reviewConfigSchema = z.object({
  pr: z.number().int().nullable(),
  base: z.string().nullable(),
  head: z.string().nullable(),
  /** null: the planner chooses the lineup at run time. */
  reviewers: z.array(lineupEntrySchema).nullable(),
  delivery: z.enum(['none', 'codehost']),
});

export type ReviewConfig = z.infer<typeof reviewConfigSchema>;
