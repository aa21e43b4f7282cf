/**
 * Keyset pagination cursors: the last row's (created_at, id), encoded opaquely so clients do
 * not build them by hand.
 */
import { and, type Column, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import { ApiError } from '../../core/errors';

export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | null {
  if (!cursor) return null;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    if (typeof id !== 'string' || Number.isNaN(date.getTime())) throw new Error('bad cursor');
    return { createdAt: date, id };
  } catch {
    throw new ApiError(
      'validation_failed',
      'cursor is not one this service issued; pass next_cursor unchanged',
    );
  }
}

/** Given limit+1 fetched rows, the page and the cursor to the next one. */
export function page<T extends { createdAt: Date; id: string }>(rows: T[], limit: number) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return { data, nextCursor: hasMore && last ? encodeCursor(last) : null };
}

/**
 * The rows past `after` in a list ordered by (created_at, id): older ones for a newest-first
 * list, newer ones for an oldest-first list. No condition without a cursor.
 */
export function pastCursor(
  columns: { createdAt: Column; id: Column },
  after: CursorPosition | null,
  order: 'newest_first' | 'oldest_first',
): SQL | undefined {
  if (!after) return undefined;
  const beyond = order === 'newest_first' ? lt : gt;
  return or(
    beyond(columns.createdAt, after.createdAt),
    and(eq(columns.createdAt, after.createdAt), beyond(columns.id, after.id)),
  );
}
