/** Schemas shared by many operations: lists, acknowledgements, ids, timestamps. */
import { z } from 'zod';

export const timestamp = z.iso.datetime({ offset: true }).describe('ISO 8601 timestamp');
export const nullableTimestamp = timestamp.nullable();

/**
 * A number sent in a query string or path: decimal digits only, then checked by `inner` (its
 * range, default, optionality). `z.coerce.number()` would take `0x10`, `1e1`, ` 5`, `+5` and
 * `5.0` too, so one value would have many spellings; the contract says integer, and an integer
 * in a URL is its decimal digits. Fifteen digits at most: every such number is a safe integer.
 * The JSON Schema is `inner`'s, so the OpenAPI document still says integer.
 */
export function decimalParam<T extends z.ZodType>(inner: T) {
  return z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    if (/^\d{1,15}$/.test(value)) return Number(value);
    ctx.addIssue({
      code: 'custom',
      input: value,
      message: 'expected an integer in decimal digits (0-9) only',
    });
    return value;
  }, inner);
}

/** `limit` 1-200 (default 50) and an opaque `cursor`, on every list. */
export const listQuery = z.strictObject({
  limit: decimalParam(z.int().min(1).max(200).default(50)).describe('Page size, 1-200 (default 50).'),
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
