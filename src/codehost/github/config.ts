/**
 * The GitHub App svc runs as, read from the environment:
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `GITHUB_APP_ID` | the App's numeric id (its settings page, "App ID") | none: GitHub is off |
 * | `GITHUB_PRIVATE_KEY` | the App's private key, PEM text; `\n` escapes are read as line breaks | |
 * | `GITHUB_PRIVATE_KEY_PATH` | or a file holding that PEM (one of the two, not both) | |
 * | `GITHUB_WEBHOOK_SECRET` | the App's webhook secret (X-Hub-Signature-256) | |
 * | `GITHUB_WEBHOOK_SECRET_PREVIOUS` | while rotating: the secret being replaced, still accepted | |
 * | `GITHUB_API_URL` | REST API root; GitHub Enterprise Server is `https://HOST/api/v3` | `https://api.github.com` |
 *
 * With none of the first four set, GitHub is not configured and only the local host serves. With
 * some set, every missing or malformed one is named in one error, so a half-configured App never
 * starts quietly without GitHub.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface GitHubAppConfig {
  appId: number;
  /** PKCS#1 or PKCS#8 PEM. */
  privateKey: string;
  webhookSecret: string;
  /** Without a trailing slash. */
  apiUrl: string;
}

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';

/** GitHub configuration that cannot work; the message lists every variable to fix. */
export class GitHubConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`GitHub App configuration is incomplete or invalid: ${problems.join('; ')}`);
    this.name = 'GitHubConfigError';
  }
}

/**
 * The GitHub App configuration in `env`; null when no App credentials are set. A webhook secret
 * alone does not turn GitHub on: deliveries are then received and recorded, and ignored with the
 * reason that no code host serves their installation.
 */
export function loadGitHubConfig(env: NodeJS.ProcessEnv): GitHubAppConfig | null {
  const value = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v;
  };
  const names = ['GITHUB_APP_ID', 'GITHUB_PRIVATE_KEY', 'GITHUB_PRIVATE_KEY_PATH'];
  if (names.every((name) => value(name) === undefined)) return null;

  const problems: string[] = [];
  const rawId = value('GITHUB_APP_ID');
  const appId = Number(rawId);
  if (rawId === undefined) problems.push('GITHUB_APP_ID is not set (the App ID from the App settings page)');
  else if (!/^\d+$/.test(rawId.trim()) || !Number.isSafeInteger(appId) || appId < 1)
    problems.push(`GITHUB_APP_ID must be a positive integer, got ${JSON.stringify(rawId)}`);

  let privateKey: string | undefined;
  const inline = value('GITHUB_PRIVATE_KEY');
  const path = value('GITHUB_PRIVATE_KEY_PATH');
  if (inline !== undefined && path !== undefined) {
    problems.push('set GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH, not both');
  } else if (inline !== undefined) {
    privateKey = inline.replace(/\\n/g, '\n').trim();
  } else if (path !== undefined) {
    try {
      privateKey = readFileSync(path, 'utf8').trim();
    } catch (error) {
      problems.push(`GITHUB_PRIVATE_KEY_PATH ${path} cannot be read: ${(error as Error).message}`);
    }
  } else {
    problems.push('GITHUB_PRIVATE_KEY (PEM text) or GITHUB_PRIVATE_KEY_PATH (a PEM file) is not set');
  }
  if (privateKey !== undefined) {
    const source = inline !== undefined ? 'GITHUB_PRIVATE_KEY' : `GITHUB_PRIVATE_KEY_PATH (${path})`;
    if (!/^-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----$/.test(privateKey)) {
      problems.push(
        `${source} is not a PEM private key (expected -----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY-----)`,
      );
    } else {
      try {
        const key = createPrivateKey(privateKey);
        if (key.asymmetricKeyType !== 'rsa')
          problems.push(`${source} is a ${key.asymmetricKeyType} key; GitHub Apps sign with RSA`);
      } catch (error) {
        problems.push(`${source} does not parse as a private key: ${(error as Error).message}`);
      }
    }
  }

  const webhookSecret = value('GITHUB_WEBHOOK_SECRET');
  if (webhookSecret === undefined)
    problems.push('GITHUB_WEBHOOK_SECRET is not set (the webhook secret from the App settings page)');

  const rawUrl = value('GITHUB_API_URL') ?? DEFAULT_GITHUB_API_URL;
  let apiUrl = rawUrl.trim().replace(/\/+$/, '');
  try {
    const url = new URL(apiUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
    apiUrl = url.toString().replace(/\/+$/, '');
  } catch {
    problems.push(`GITHUB_API_URL must be an http(s) URL, got ${JSON.stringify(rawUrl)}`);
  }

  if (problems.length > 0) throw new GitHubConfigError(problems);
  return { appId, privateKey: privateKey as string, webhookSecret: webhookSecret as string, apiUrl };
}
