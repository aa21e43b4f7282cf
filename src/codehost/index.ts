/** Finds the code host behind an installation id. */
import { GitHubAppClient, type GitHubClientOptions } from './github/client';
import { type GitHubAppConfig, loadGitHubConfig } from './github/config';
import { GitHubCodeHost, type GitHubHostOptions } from './github/github-host';
import { LOCAL_INSTALLATION_ID, LocalCodeHost } from './local/local-host';
import type { CodeHost } from './types';

export interface CodeHosts {
  forInstallation(installationId: number): CodeHost | null;
  list(): { id: number; kind: CodeHost['kind']; account: string }[];
}

export interface CodeHostsOptions {
  reposDir: string;
  /**
   * The GitHub App. Omitted: read from `env` (GITHUB_APP_ID, …; see github/config.ts), and GitHub
   * is off when that sets nothing. null: GitHub is off.
   */
  github?: GitHubAppConfig | null;
  /** Where the GitHub App configuration is read from when `github` is omitted. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The default branch a local repository's project names in its settings (null: none). */
  localDefaultBranch?: (fullName: string) => Promise<string | null>;
  /** Client tuning (rate-limit waits, retries, write spacing, fetch); defaults suit production. */
  githubClient?: Partial<GitHubClientOptions> & GitHubHostOptions;
}

/**
 * Installation 1 is the local git host; with GitHub configured, every other positive id is that
 * GitHub App installation (whether the App is installed there shows on the first call).
 */
export function createCodeHosts(options: CodeHostsOptions): CodeHosts {
  const local = new LocalCodeHost(
    options.reposDir,
    options.localDefaultBranch ? { configuredDefaultBranch: options.localDefaultBranch } : {},
  );
  const github = options.github === undefined ? loadGitHubConfig(options.env ?? process.env) : options.github;
  const client = github ? new GitHubAppClient(github, options.githubClient) : null;
  const hosts = new Map<number, GitHubCodeHost>();
  return {
    forInstallation: (id) => {
      if (id === LOCAL_INSTALLATION_ID) return local;
      if (!client || !Number.isSafeInteger(id) || id < 1) return null;
      let host = hosts.get(id);
      if (!host) {
        host = new GitHubCodeHost(id, client, options.githubClient);
        hosts.set(id, host);
      }
      return host;
    },
    list: () => [{ id: LOCAL_INSTALLATION_ID, kind: 'local', account: local.reposDir }],
  };
}
