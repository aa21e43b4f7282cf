/** Schemas shared by many operations: lists, acknowledgements, ids, timestamps. */
import { z } from 'zod';

export const timestamp = z.iso.datetime({ offset: true }).describe('ISO 8601 timestamp');
export const nullableTimestamp = timestamp.nullable();

/** `limit` 1-200 (default 50) and an opaque `cursor`, on every list. */
export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1-200 (default 50).'),
  cursor: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('Opaque cursor from `next_cursor` of the previous page.'),
});

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    object: z.literal('list'),
    data: z.array(item),
    next_cursor: z.string().nullable(),
  });
}

/** The answer to starting work: the task to poll. */
export const taskAck = z.object({
  id: z.string().describe('Task id.'),
  run_id: z.string().describe('The run that was started.'),
  status_url: z.string().describe('Where to poll the task status.'),
});

export const idParam = (name: string, description: string) =>
  z.strictObject({ [name]: z.string().min(1).max(200).describe(description) });

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
