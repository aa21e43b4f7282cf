/**
 * A test app whose GitHub App talks to the GitHub double (./github-double.ts): the variables an
 * operator sets for a GitHub App, pointed at the double, and a client that does not space its
 * writes, so the flows run at test speed. The automation, check and scorecard tests share it.
 */
import type { CodeHostsOptions } from '../../src/codehost';
import { createTestApp, type TestApp } from './app';
import type { GitHubDouble } from './github-double';

export interface DoubleApp {
  appId: number;
  privateKey: string;
  webhookSecret: string;
}

export function createGitHubTestApp(
  double: GitHubDouble,
  app: DoubleApp,
  client: CodeHostsOptions['githubClient'] = {},
): Promise<TestApp> {
  return createTestApp({
    env: {
      SVC_POLL_MS: '50',
      GITHUB_APP_ID: String(app.appId),
      GITHUB_PRIVATE_KEY: app.privateKey,
      GITHUB_WEBHOOK_SECRET: app.webhookSecret,
      GITHUB_API_URL: double.url,
    },
    codeHosts: {
      githubClient: { writeSpacingMs: 0, notificationSpacingMs: 0, serverErrorBackoffMs: 20, ...client },
    },
  });
}
