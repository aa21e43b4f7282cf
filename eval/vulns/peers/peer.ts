/**
 * What eval part 4 asks of a peer tool (ESLint's security plugin, bandit): the lines it reports
 * anything on in a case's vulnerable files. Peers are scored generously: any message on a
 * vulnerable line counts as catching the case, whatever the message says.
 */
import type { VulnLanguage } from '../case-folders';

export interface PeerRun {
  /** Relative path -> lines the tool reported something on. */
  flagged: Map<string, Set<number>>;
  /** Files the tool could not read (a parse error), one line each. */
  gaps: string[];
}

export interface Peer {
  name: string;
  /** The case languages it runs on. */
  languages: readonly VulnLanguage[];
  /** `name version`, or null when the tool is not installed here. */
  version(): Promise<string | null>;
  /** Runs the tool on `paths` (relative to `headDir`), the vulnerable version of a case's files. */
  flag(headDir: string, paths: string[]): Promise<PeerRun>;
}

export function addFlag(flagged: Map<string, Set<number>>, path: string, line: number): void {
  const lines = flagged.get(path) ?? new Set<number>();
  lines.add(line);
  flagged.set(path, lines);
}
