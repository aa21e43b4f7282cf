import { createHash, randomBytes } from 'node:crypto';

/**
 * Bearer keys. The secret is shown once at creation; only its SHA-256 digest is stored, so a
 * leaked database does not leak usable keys.
 */
export const KEY_KINDS = {
  workspace: 'svc_ws_',
  project: 'svc_prj_',
  personal: 'svc_pat_',
} as const;

export type KeyKind = keyof typeof KEY_KINDS;

export function mintKeySecret(kind: KeyKind): string {
  return KEY_KINDS[kind] + randomBytes(24).toString('base64url');
}

export function keyDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function keyKindOf(secret: string): KeyKind | null {
  for (const [kind, prefix] of Object.entries(KEY_KINDS)) {
    if (secret.startsWith(prefix) && secret.length > prefix.length) return kind as KeyKind;
  }
  return null;
}

/** What a request is allowed to act as, once its key is verified. */
export interface Principal {
  keyId: string;
  kind: KeyKind;
  workspaceId: string;
  /** Set for project-pinned keys: the only project this key can see. */
  pinnedProjectId: string | null;
}
