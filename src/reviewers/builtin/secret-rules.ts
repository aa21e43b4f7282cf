/**
 * Detectors secretlint's recommended preset gained after 12.0.0, the last release whose `engines`
 * accept Node 20 (13.x declares Node >= 22): Stripe, Cloudflare and Tailscale keys and GitHub's
 * new-format App installation tokens. Plus Google API keys, which no secretlint preset covers.
 *
 * Rule names and message ids are the ones secretlint 13 reports (`stripe`, `STRIPE_SECRET_KEY_LIVE`,
 * ...), so moving to its preset later changes neither finding fingerprints nor severity settings:
 * delete the matching rule here and in `secretlint.json`.
 */
import type { SecretLintRuleCreator } from '@secretlint/types';

interface PatternRule {
  /** The last part becomes the finding's rule: `svc/secretlint-rule-stripe` reports `secrets/stripe`. */
  id: string;
  pattern: RegExp;
  /** What was found, by message id; the message id of a match is chosen by `messageIdOf`. */
  labels: Record<string, string>;
  messageIdOf: (match: RegExpMatchArray) => string | null;
  /** Files where what the pattern finds is public by design. */
  skipsFile?: (content: string, filePath: string) => boolean;
}

function patternRule({ id, pattern, labels, messageIdOf, skipsFile }: PatternRule): SecretLintRuleCreator {
  if (!pattern.global) throw new Error(`${id}: the pattern must be global`);
  const messages = Object.fromEntries(
    Object.entries(labels).map(([messageId, label]) => [
      messageId,
      { en: (props?: { KEY?: string }) => `found ${label}: ${props?.KEY ?? ''}` },
    ]),
  );
  return {
    messages,
    meta: { id, recommended: true, type: 'scanner', supportedContentTypes: ['text'] },
    create(context) {
      const t = context.createTranslator(messages);
      return {
        file(source) {
          if (skipsFile?.(source.content, source.filePath ?? '')) return;
          for (const match of source.content.matchAll(pattern)) {
            const messageId = messageIdOf(match);
            if (!messageId) continue;
            const start = match.index ?? 0;
            context.report({
              message: t(messageId, { KEY: match[0] }),
              range: [start, start + match[0].length],
            });
          }
        },
      };
    },
  };
}

/** Maps a named group's value to a message id. */
const byGroup =
  (group: string, ids: Record<string, string>) =>
  (match: RegExpMatchArray): string | null =>
    ids[match.groups?.[group] ?? ''] ?? null;

/**
 * Stripe secret and restricted keys (`sk_`/`rk_`, live or test mode): the prefix, then at least 24
 * letters and digits (Stripe's oldest keys have 24; account-scoped ones run to ~100).
 * Publishable keys (`pk_`) are meant for browsers and are not reported.
 */
const stripe = patternRule({
  id: 'svc/secretlint-rule-stripe',
  pattern: /(?<![A-Za-z0-9_])(?<kind>[sr]k_(?:live|test))_[A-Za-z0-9]{24,99}(?![A-Za-z0-9])/g,
  labels: {
    STRIPE_SECRET_KEY_LIVE: 'Stripe live secret key',
    STRIPE_SECRET_KEY_TEST: 'Stripe test-mode secret key',
    STRIPE_RESTRICTED_KEY_LIVE: 'Stripe live restricted key',
    STRIPE_RESTRICTED_KEY_TEST: 'Stripe test-mode restricted key',
  },
  messageIdOf: byGroup('kind', {
    sk_live: 'STRIPE_SECRET_KEY_LIVE',
    sk_test: 'STRIPE_SECRET_KEY_TEST',
    rk_live: 'STRIPE_RESTRICTED_KEY_LIVE',
    rk_test: 'STRIPE_RESTRICTED_KEY_TEST',
  }),
});

/** Cloudflare's prefixed credentials: 40 letters and digits, then an 8-hex-digit checksum. */
const cloudflare = patternRule({
  id: 'svc/secretlint-rule-cloudflare',
  pattern: /(?<![A-Za-z0-9_])(?<kind>cfk|cfut|cfat)_[A-Za-z0-9]{40}[0-9a-f]{8}(?![A-Za-z0-9])/g,
  labels: {
    CLOUDFLARE_GLOBAL_API_KEY: 'Cloudflare global API key',
    CLOUDFLARE_USER_API_TOKEN: 'Cloudflare user API token',
    CLOUDFLARE_ACCOUNT_API_TOKEN: 'Cloudflare account API token',
  },
  messageIdOf: byGroup('kind', {
    cfk: 'CLOUDFLARE_GLOBAL_API_KEY',
    cfut: 'CLOUDFLARE_USER_API_TOKEN',
    cfat: 'CLOUDFLARE_ACCOUNT_API_TOKEN',
  }),
});

/** Tailscale keys: `tskey-<kind>-<key id>-<secret>`. */
const tailscale = patternRule({
  id: 'svc/secretlint-rule-tailscale',
  pattern:
    /(?<![A-Za-z0-9_])tskey-(?<kind>[a-z]{2,20})-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}(?![0-9A-Za-z_])/g,
  labels: {
    TAILSCALE_API_KEY: 'Tailscale API access token',
    TAILSCALE_AUTH_KEY: 'Tailscale pre-authentication key',
    TAILSCALE_CLIENT_KEY: 'Tailscale OAuth client secret',
    TAILSCALE_SCIM_KEY: 'Tailscale SCIM key',
    TAILSCALE_WEBHOOK_KEY: 'Tailscale webhook secret',
    TAILSCALE_KEY: 'Tailscale key',
  },
  messageIdOf: (match) =>
    ({
      api: 'TAILSCALE_API_KEY',
      auth: 'TAILSCALE_AUTH_KEY',
      client: 'TAILSCALE_CLIENT_KEY',
      scim: 'TAILSCALE_SCIM_KEY',
      webhook: 'TAILSCALE_WEBHOOK_KEY',
    })[match.groups?.kind ?? ''] ?? 'TAILSCALE_KEY',
});

/**
 * GitHub App installation tokens in the 2026 format: `ghs_<app id>_<JWT>`. The classic 40-character
 * `ghs_` form is the preset's `github` rule; this one reports under the same rule and message id.
 */
const githubAppInstallation = patternRule({
  id: 'svc/secretlint-rule-github',
  pattern:
    /(?<![A-Za-z0-9_])ghs_[0-9]{1,20}_[A-Za-z0-9_-]{8,1000}\.[A-Za-z0-9_-]{8,10000}\.[A-Za-z0-9_-]{8,1000}(?![A-Za-z0-9_-])/g,
  labels: { GITHUB_TOKEN: 'GitHub App installation token' },
  messageIdOf: () => 'GITHUB_TOKEN',
});

/**
 * Google API keys: `AIza` and 35 more characters. Many are meant to ship in clients (Firebase web
 * configuration, Maps JavaScript) and are locked to a referrer or app, so the skill rates them
 * below a secret key; a Firebase configuration file is not reported at all.
 */
const googleApiKey = patternRule({
  id: 'svc/secretlint-rule-google-api-key',
  pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
  labels: { GOOGLE_API_KEY: 'Google API key' },
  messageIdOf: () => 'GOOGLE_API_KEY',
  // Firebase's own guidance: its web and mobile configuration (`apiKey` next to `authDomain`, or
  // the platform config files) identifies the project and is not a secret.
  skipsFile: (content, filePath) =>
    /(?:^|\/)(?:google-services\.json|GoogleService-Info\.plist)$/.test(filePath) ||
    /\bauthDomain\b|\.firebaseapp\.com\b/.test(content),
});

/**
 * PEM private keys too short for the preset's check, which wants a body of 100+ characters that
 * starts `MI` (a DER length of 128+ bytes): it misses the most common small keys, SEC1 EC P-256
 * (`MHcCAQEE…`, 121 bytes) and PKCS#8 Ed25519 (`MC4CAQAw…`, 48 bytes). A DER body always starts
 * with `M` (a SEQUENCE); `...` or `<key>` placeholders are not base64 and stay quiet.
 */
const shortPrivateKey = patternRule({
  id: 'svc/secretlint-rule-privatekey',
  // Bounded and lazy: the body check is done on the match, not by backtracking.
  pattern: /-----BEGIN ((?:[A-Z]+ )?PRIVATE KEY)-----([A-Za-z0-9+/=\s\\]{40,400}?)-----END \1-----/g,
  labels: { PrivateKey: 'private key' },
  messageIdOf: (match) => {
    // Lines may be indented, or joined with `\n` escapes inside a JSON or code string.
    const body = (match[2] ?? '').replace(/\\n|\s/g, '');
    const der = /^M[A-Za-z0-9+/]{39,}=*$/.test(body);
    const presetReportsIt = body.length >= 100 && body.startsWith('MI');
    return der && !presetReportsIt ? 'PrivateKey' : null;
  },
});

/** Our rules by the id `secretlint.json` names them with. */
export const SUPPLEMENTARY_RULES: ReadonlyMap<string, SecretLintRuleCreator> = new Map(
  [stripe, cloudflare, tailscale, githubAppInstallation, googleApiKey, shortPrivateKey].map((rule) => [
    rule.meta.id,
    rule,
  ]),
);
