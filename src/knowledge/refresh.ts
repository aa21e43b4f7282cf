/**
 * One refresh of a project's repository knowledge: read the configuration files the derivation
 * asks for at the tree's commit, derive the record, store it. A file the code host cannot read
 * is a named gap in the record, never a guess.
 */
import { type CodeHost, CodeHostError, type RepositoryTree } from '../codehost/types';
import { decodeText } from '../core/decode-text';
import type { RepoKnowledge } from '../core/repo-knowledge';
import type { Orm } from '../storage/database';
import { deriveKnowledge, knowledgeFilesWanted } from './derive';
import { saveKnowledge } from './store';

export interface RefreshedKnowledge {
  id: string;
  content: RepoKnowledge;
  gaps: { code: string; message: string }[];
  /** How many runtimes it names (for the setup's counts). */
  runtimes: number;
}

export async function refreshKnowledge(
  orm: Orm,
  host: CodeHost,
  project: { id: string; workspaceId: string; repoFullName: string },
  tree: RepositoryTree,
  refreshedBy: string,
): Promise<RefreshedKnowledge> {
  const paths = tree.files.map((f) => f.path);
  const wanted = knowledgeFilesWanted(paths);
  let readFailure: string | null = null;
  const blobs = await host.readFiles(project.repoFullName, tree.commit, wanted).catch((error: unknown) => {
    if (!(error instanceof CodeHostError)) throw error;
    readFailure = error.message;
    return new Map<string, Buffer | null>();
  });
  const texts = new Map(wanted.map((path) => [path, decodeText(blobs.get(path))]));
  const derived = deriveKnowledge({ commit: tree.commit, paths, texts });
  const { content } = derived;
  // When the host could read none of them, one gap says so instead of one per file.
  const gaps =
    readFailure === null
      ? derived.gaps
      : [
          ...derived.gaps.filter((g) => g.code !== 'knowledge_file_unreadable'),
          {
            code: 'knowledge_files_unreadable',
            message: `the code host could not read the ${wanted.length} configuration file(s) the knowledge is derived from (${readFailure}); only what the file list tells is recorded`,
          },
        ];
  const row = await saveKnowledge(orm, {
    workspaceId: project.workspaceId,
    projectId: project.id,
    commitSha: tree.commit,
    content: content as unknown as Record<string, unknown>,
    gaps,
    refreshedBy,
  });
  return { id: row.id, content, gaps, runtimes: content.runtimes.length };
}
