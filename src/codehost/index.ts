/** Finds the code host behind an installation id. */
import { LOCAL_INSTALLATION_ID, LocalCodeHost } from './local/local-host';
import type { CodeHost } from './types';

export interface CodeHosts {
  forInstallation(installationId: number): CodeHost | null;
  list(): { id: number; kind: CodeHost['kind']; account: string }[];
}

export function createCodeHosts(options: { reposDir: string }): CodeHosts {
  const local = new LocalCodeHost(options.reposDir);
  return {
    forInstallation: (id) => (id === LOCAL_INSTALLATION_ID ? local : null),
    list: () => [{ id: LOCAL_INSTALLATION_ID, kind: 'local', account: local.reposDir }],
  };
}
