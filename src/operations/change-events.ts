/**
 * The timeline event of a change made through the API, appended in the change's transaction:
 * what kind of object, which one, what happened, who did it (the key), and the before and after
 * of what changed. Secrets never go in: a key's event names its kind, name and hint, not its digest.
 */
import { appendObjectEvent, type Tx } from '../storage/object-events';
import type { OperationContext } from './registry';

export function recordChange(
  tx: Tx,
  ctx: OperationContext,
  change: {
    objectType: string;
    objectId: string;
    /** The project the object belongs to; null for a workspace-wide object. */
    projectId: string | null;
    kind: string;
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
  },
) {
  return appendObjectEvent(tx, {
    workspaceId: ctx.workspaceId,
    projectId: change.projectId,
    objectType: change.objectType,
    objectId: change.objectId,
    kind: change.kind,
    payload: { before: change.before, after: change.after },
    actor: ctx.principal.keyId,
  });
}
