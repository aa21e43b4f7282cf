import type { CodeHosts } from '../../codehost';
import { CodeHostError, type RepositoryTree } from '../../codehost/types';
import { RunFailure } from '../../core/failures';
import { LANGUAGE_BY_EXTENSION } from '../../core/languages';
import { PLAN_DOCUMENT_PATH } from '../../core/plans';
import type { Gap } from '../../core/runs';
import { refreshKnowledge } from '../../knowledge/refresh';
import { projectAndHost } from '../project-host';
import type { TaskHandler } from '../types';

const MANIFESTS = new Set([
  'package.json',
  'pyproject.toml',
  'requirements.txt',
  'setup.py',
  'go.mod',
  'Cargo.toml',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'Gemfile',
  'composer.json',
]);

export interface SetupEvidence {
  repository: string;
  commit: string;
  files: number;
  languages: Record<string, number>;
  manifests: string[];
  ci: string[];
  test_paths: number;
  plan_documents: string[];
  repo_knowledge_file: boolean;
}

export function inspectTree(repository: string, tree: RepositoryTree): SetupEvidence {
  const languages: Record<string, number> = {};
  const manifests: string[] = [];
  const ci: string[] = [];
  const plans: string[] = [];
  let tests = 0;
  for (const { path } of tree.files) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
    const language = LANGUAGE_BY_EXTENSION[ext];
    if (language) languages[language] = (languages[language] ?? 0) + 1;
    if (MANIFESTS.has(name)) manifests.push(path);
    if (path.startsWith('.github/workflows/') || path === '.gitlab-ci.yml' || path.startsWith('.ci/'))
      ci.push(path);
    if (
      /(^|\/)(tests?|__tests__|spec)\//.test(path) ||
      /\.(test|spec)\.\w+$/.test(name) ||
      /^test_.*\.py$/.test(name)
    ) {
      tests++;
    }
    if (PLAN_DOCUMENT_PATH.test(path)) plans.push(path);
  }
  return {
    repository,
    commit: tree.commit,
    files: tree.files.length,
    languages,
    manifests: manifests.sort(),
    ci: ci.sort(),
    test_paths: tests,
    plan_documents: plans.sort(),
    repo_knowledge_file: tree.files.some((f) => f.path === 'svc.json'),
  };
}

/** A plan discovered from a document setup found on the default branch. */
export interface DiscoveredPlan {
  plan_id: string;
  path: string;
  task_id: string;
}

export interface SetupOptions {
  /**
   * Makes plans of the plan documents already on the default branch (each once: a document that
   * already is a plan gives nothing), as a push adding them would. The composition root supplies
   * it, so the run engine does not reach into the plan lifecycle.
   */
  discoverPlans?: (
    project: { id: string; workspaceId: string },
    documents: string[],
    commit: string,
  ) => Promise<DiscoveredPlan[]>;
}

export function setupHandler(codeHosts: CodeHosts, options: SetupOptions = {}): TaskHandler {
  return async (ctx) => {
    if (!ctx.task.projectId)
      throw new RunFailure('project_run_mode_unreadable', 'a setup task must belong to a project');
    const { project, host } = await projectAndHost(ctx, codeHosts);
    ctx.setBackend({ harness: 'static-inspection', provider: null, model: null, preset: 'setup' });
    await ctx.progress({
      phase: 'reading',
      statusText: `reading ${project.repoFullName}`,
      currentStep: 'read_tree',
      pct: 10,
    });
    let tree: RepositoryTree;
    try {
      tree = await host.readTree(project.repoFullName);
    } catch (error) {
      if (error instanceof CodeHostError)
        throw new RunFailure('tool_failed', `setup could not read the repository: ${error.message}`);
      throw error;
    }
    await ctx.progress({
      phase: 'inspecting',
      statusText: `inspecting ${tree.files.length} files`,
      currentStep: 'inspect',
      pct: 60,
    });
    const evidence = inspectTree(project.repoFullName, tree);
    const knowledge = await refreshKnowledge(ctx.db.orm, host, project, tree, 'setup');
    const plans =
      options.discoverPlans && evidence.plan_documents.length > 0
        ? await options.discoverPlans(project, evidence.plan_documents, tree.commit)
        : [];
    const gaps: Gap[] = [...knowledge.gaps];
    for (const gap of gaps) ctx.gap(gap);
    ctx.setSeedGraph({
      counts: {
        files: evidence.files,
        languages: Object.keys(evidence.languages).length,
        manifests: evidence.manifests.length,
        ci_files: evidence.ci.length,
        plan_documents: evidence.plan_documents.length,
        runtimes: knowledge.runtimes,
      },
      gaps,
    });
    await ctx.message(
      'assistant',
      `Read ${evidence.files} files of ${evidence.repository} at ${evidence.commit.slice(0, 12)}: ` +
        `${
          Object.entries(evidence.languages)
            .map(([l, n]) => `${l} ${n}`)
            .join(', ') || 'no source files recognised'
        }.`,
    );
    await ctx.progress({
      phase: 'done',
      statusText: 'setup evidence recorded',
      currentStep: 'record',
      pct: 100,
    });
    return {
      evidence: evidence as unknown as Record<string, unknown>,
      repo_knowledge: { id: knowledge.id, commit_sha: tree.commit },
      // The plans this setup made of documents already there; empty when each already was one.
      plans,
    };
  };
}
