/** Names in metric records: who owns a record, and its key. */
import { z } from 'zod';
import { SVC_OWNER } from '../../metrics/catalogue';

export const ownerName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, 'lower-case letters, digits, `_`, `.` and `-`')
  .describe(
    `Who the record belongs to: \`${SVC_OWNER}\` for svc's own figures, any other name for a caller's.`,
  );

export const metricKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/, 'letters, digits, `_`, `.`, `:`, `/` and `-`')
  .describe('The metric, e.g. `coverage/2026-11-23`: a key ending `/<YYYY-MM-DD>` is a daily value.');
