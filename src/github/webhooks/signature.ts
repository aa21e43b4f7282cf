/**
 * GitHub webhook signatures: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
 * Always computed over the bytes GitHub sent, never over re-serialized JSON, and compared in
 * constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Why a signature was refused; also the `reason` of the rejection row and metric label. */
export type SignatureProblem = 'signature_missing' | 'signature_malformed' | 'signature_mismatch';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** The header value GitHub would send for `body` signed with `secret`. */
export function signPayload(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * null when `header` is the valid signature of `body` under one of `secrets`; else what is wrong
 * with it. More than one secret is accepted while the App's secret is being rotated: deliveries
 * GitHub signed with the old one before the switch still pass.
 */
export function checkSignature(
  secrets: string | readonly string[],
  body: string | Uint8Array,
  header: string | undefined,
): SignatureProblem | null {
  if (header === undefined || header === '') return 'signature_missing';
  const match = SIGNATURE.exec(header.trim());
  if (!match) return 'signature_malformed';
  const given = Buffer.from(match[1] as string, 'hex');
  // Both are 32 bytes (the regex fixes the length), so timingSafeEqual never throws here.
  const signedWith = (secret: string) =>
    timingSafeEqual(createHmac('sha256', secret).update(body).digest(), given);
  const candidates = typeof secrets === 'string' ? [secrets] : secrets;
  return candidates.some((secret) => secret !== '' && signedWith(secret)) ? null : 'signature_mismatch';
}

export function verifySignature(
  secret: string,
  body: string | Uint8Array,
  header: string | undefined,
): boolean {
  return checkSignature(secret, body, header) === null;
}
