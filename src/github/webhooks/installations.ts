/**
 * `installation` and `installation_repositories` deliveries: keep the `installations` table in
 * step with the GitHub App's installations. Each handler is idempotent (a replacement run may
 * apply the same delivery twice) and ignores, with the reason, what it cannot apply.
 */
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../storage/database';
import { installations } from '../../storage/schema';
import { int, type Json, list, obj, repoFullName, str } from './payload';
import {
  ignored,
  processed,
  registerDefaultWebhookHandler,
  type WebhookContext,
  type WebhookOutcome,
} from './registry';

interface InstallationFacts {
  id: number;
  accountLogin: string;
  accountType: string | null;
  suspendedAt: Date | null;
}

function installationFacts(payload: Json): InstallationFacts | null {
  const inst = obj(payload.installation);
  const id = int(inst?.id);
  if (!inst || id === undefined) return null;
  const account = obj(inst.account);
  return {
    id,
    // Enterprise accounts have a slug and a name, no login.
    accountLogin: str(account?.login) ?? str(account?.slug) ?? str(account?.name) ?? `installation ${id}`,
    accountType: str(account?.type) ?? (account?.slug ? 'Enterprise' : null),
    suspendedAt: date(inst.suspended_at),
  };
}

function date(value: unknown): Date | null {
  const text = str(value);
  if (!text) return null;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** `owner/repo` of each repository object in a payload list (installation events send `full_name`). */
function repoNames(value: unknown): string[] {
  return [...new Set(list(value).flatMap((r) => repoFullName(r) ?? []))];
}

async function installation(ctx: WebhookContext): Promise<WebhookOutcome> {
  const { payload, action, db, delivery } = ctx;
  const facts = installationFacts(payload);
  if (!facts) return ignored(`the installation.${action ?? ''} delivery names no installation id`);
  const { id } = facts;
  const now = new Date();

  switch (action) {
    case 'created': {
      const repositories = repoNames(payload.repositories);
      await db.orm
        .insert(installations)
        .values({
          id,
          workspaceId: delivery.workspaceId,
          accountLogin: facts.accountLogin,
          accountType: facts.accountType,
          repositories,
          suspendedAt: facts.suspendedAt,
        })
        .onConflictDoUpdate({
          target: installations.id,
          set: {
            accountLogin: facts.accountLogin,
            accountType: facts.accountType,
            repositories,
            suspendedAt: facts.suspendedAt,
            deletedAt: null,
            updatedAt: sql`now()`,
          },
        });
      return processed(
        `installation ${id} (${facts.accountLogin}) created with ${repositories.length} repositories`,
      );
    }
    case 'deleted': {
      const deleted = await db.orm
        .update(installations)
        .set({ deletedAt: now, updatedAt: sql`now()` })
        .where(eq(installations.id, id))
        .returning({ id: installations.id });
      if (deleted.length === 0) return ignored(`unknown installation ${id}`);
      return processed(`installation ${id} deleted`);
    }
    case 'suspend':
    case 'unsuspend':
    case 'new_permissions_accepted': {
      // The payload carries the whole installation, so an installation whose `created` delivery
      // was missed is recorded now rather than ignored; its repository list is kept when the
      // payload has none.
      const suspendedAt =
        action === 'suspend' ? (facts.suspendedAt ?? now) : action === 'unsuspend' ? null : undefined;
      const repositories = Array.isArray(payload.repositories) ? repoNames(payload.repositories) : undefined;
      await db.orm
        .insert(installations)
        .values({
          id,
          workspaceId: delivery.workspaceId,
          accountLogin: facts.accountLogin,
          accountType: facts.accountType,
          repositories: repositories ?? [],
          suspendedAt: suspendedAt === undefined ? facts.suspendedAt : suspendedAt,
        })
        .onConflictDoUpdate({
          target: installations.id,
          set: {
            accountLogin: facts.accountLogin,
            accountType: facts.accountType,
            ...(repositories ? { repositories } : {}),
            ...(suspendedAt === undefined ? {} : { suspendedAt }),
            updatedAt: sql`now()`,
          },
        });
      return processed(
        `installation ${id} ${action === 'new_permissions_accepted' ? 'accepted new permissions' : `${action}ed`}`,
      );
    }
    default:
      return ignored(`installation action ${action ?? '(none)'} is not handled`);
  }
}

async function installationRepositories(ctx: WebhookContext): Promise<WebhookOutcome> {
  const { payload, action, db, delivery } = ctx;
  const facts = installationFacts(payload);
  if (!facts)
    return ignored(`the installation_repositories.${action ?? ''} delivery names no installation id`);
  if (action !== 'added' && action !== 'removed') {
    return ignored(`installation_repositories action ${action ?? '(none)'} is not handled`);
  }
  const added = repoNames(payload.repositories_added);
  const removed = new Set(repoNames(payload.repositories_removed).map((r) => r.toLowerCase()));
  return applyRepositoryChange(db, facts, delivery.workspaceId, added, removed);
}

async function applyRepositoryChange(
  db: Database,
  facts: InstallationFacts,
  workspaceId: string,
  added: string[],
  removed: Set<string>,
): Promise<WebhookOutcome> {
  return db.orm.transaction(async (tx) => {
    // A missed `installation.created` is recovered from the installation this payload carries.
    await tx
      .insert(installations)
      .values({
        id: facts.id,
        workspaceId,
        accountLogin: facts.accountLogin,
        accountType: facts.accountType,
        suspendedAt: facts.suspendedAt,
      })
      .onConflictDoNothing();
    const [row] = await tx.select().from(installations).where(eq(installations.id, facts.id)).for('update');
    if (!row) return ignored(`unknown installation ${facts.id}`);
    if (row.deletedAt) return ignored(`installation ${facts.id} was deleted`);
    const kept = row.repositories.filter((r) => !removed.has(r.toLowerCase()));
    const known = new Set(kept.map((r) => r.toLowerCase()));
    const next = [
      ...kept,
      ...added.filter((r) => !known.has(r.toLowerCase()) && !removed.has(r.toLowerCase())),
    ];
    await tx
      .update(installations)
      .set({ repositories: next, updatedAt: sql`now()` })
      .where(eq(installations.id, facts.id));
    return processed(
      `installation ${facts.id}: ${added.length} repositories added, ${removed.size} removed (${next.length} now)`,
    );
  });
}

/** Registers the installation handlers unless something else already handles those events. */
export function registerInstallationHandlers(): void {
  registerDefaultWebhookHandler('installation', installation, { needs: 'nothing' });
  registerDefaultWebhookHandler('installation_repositories', installationRepositories, { needs: 'nothing' });
}
