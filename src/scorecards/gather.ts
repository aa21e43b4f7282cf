/**
 * Reading a scorecard's facts: the default branch and its tree, the repository knowledge at that
 * tree's commit (the stored record, refreshed when it was read from another commit), the root
 * package.json's scripts, the status checks branch protection requires, and the findings ledger.
 * A read that fails is a named gap and its fact is missing (the checks that need it are
 * `unknown`), never an exception that loses the whole scorecard.
 */
import { and, eq, gte, isNotNull, like, ne, or, sql } from 'drizzle-orm';
import { type CodeHost, CodeHostError, type RepositoryTree } from '../codehost/types';
import type { RepoKnowledge } from '../core/repo-knowledge';
import type { Gap } from '../core/runs';
import { refreshKnowledge } from '../knowledge/refresh';
import { knowledgeOf } from '../knowledge/store';
import type { Orm } from '../storage/database';
import { findings, pullRequests, reviewResults } from '../storage/schema';
import { WINDOW_DAYS } from './evaluate';
import type { FactName, FindingRef, LedgerFacts, ScorecardFacts } from './types';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How many findings a check lists by name (the counts cover all of them). */
const LISTED = 20;

export interface ScorecardProject {
  id: string;
  workspaceId: string;
  repoFullName: string;
  installationId: number;
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Runs a read; a code-host refusal (or any failure) becomes the fact's named gap. */
async function attempt<T>(read: () => Promise<T>, onFailure: (message: string) => void): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    onFailure(error instanceof CodeHostError ? `${error.message} (${error.reason})` : reason(error));
    return null;
  }
}

/** The findings that count as a committed secret: the secrets reviewer's and hard-coded credentials. */
const isSecretFinding = or(
  eq(findings.category, 'secrets'),
  like(findings.rule, 'secrets/%'),
  like(findings.rule, '%/hard-coded-credentials'),
);

const findingRef = {
  id: findings.id,
  path: findings.path,
  line: findings.line,
  rule: findings.rule,
  status: findings.status,
  pull_request: pullRequests.number,
};

export async function ledgerFacts(orm: Orm, projectId: string, now: Date): Promise<LedgerFacts> {
  const since = new Date(now.getTime() - WINDOW_DAYS * DAY_MS);
  const [reviews] = await orm
    .select({ n: sql<number>`count(*)::int`, first: sql<string | null>`min(${reviewResults.createdAt})` })
    .from(reviewResults)
    .where(eq(reviewResults.projectId, projectId));
  const recent = and(eq(findings.projectId, projectId), gte(findings.createdAt, since));
  const byStatus = await orm
    .select({ status: findings.status, n: sql<number>`count(*)::int` })
    .from(findings)
    .where(recent)
    .groupBy(findings.status);
  const created = { total: 0, open: 0, fixed: 0, dismissed: 0 };
  for (const row of byStatus) {
    created[row.status] += Number(row.n);
    created.total += Number(row.n);
  }
  const fixed = await orm
    .select({ hours: sql<number>`extract(epoch from (${findings.fixedAt} - ${findings.createdAt})) / 3600` })
    .from(findings)
    .where(
      and(eq(findings.projectId, projectId), eq(findings.status, 'fixed'), gte(findings.fixedAt, since)),
    );
  const rules = await orm
    .select({
      rule: findings.rule,
      findings: sql<number>`count(*)::int`,
      dismissed: sql<number>`(count(*) filter (where ${findings.status} = 'dismissed'))::int`,
    })
    .from(findings)
    .where(recent)
    .groupBy(findings.rule);
  const [merged] = await orm
    .select({ n: sql<number>`count(*)::int` })
    .from(pullRequests)
    .where(and(eq(pullRequests.projectId, projectId), isNotNull(pullRequests.mergedAt)));
  const openP0Where = and(
    eq(findings.projectId, projectId),
    eq(findings.status, 'open'),
    eq(findings.severity, 'P0'),
    isNotNull(pullRequests.mergedAt),
  );
  const [openP0Count] = await orm
    .select({ n: sql<number>`count(*)::int` })
    .from(findings)
    .innerJoin(pullRequests, eq(pullRequests.id, findings.pullRequestId))
    .where(openP0Where);
  const openP0 = await orm
    .select(findingRef)
    .from(findings)
    .innerJoin(pullRequests, eq(pullRequests.id, findings.pullRequestId))
    .where(openP0Where)
    .orderBy(findings.createdAt, findings.id)
    .limit(LISTED);
  const secretWhere = and(eq(findings.projectId, projectId), isSecretFinding);
  const [secretCounts] = await orm
    .select({
      total: sql<number>`(count(*) filter (where ${findings.status} <> 'dismissed'))::int`,
      dismissed: sql<number>`(count(*) filter (where ${findings.status} = 'dismissed'))::int`,
    })
    .from(findings)
    .where(secretWhere);
  const secrets = await orm
    .select(findingRef)
    .from(findings)
    .leftJoin(pullRequests, eq(pullRequests.id, findings.pullRequestId))
    .where(and(secretWhere, ne(findings.status, 'dismissed')))
    .orderBy(findings.createdAt, findings.id)
    .limit(LISTED);
  const refs = (rows: typeof secrets): FindingRef[] =>
    rows.map((r) => ({ ...r, pull_request: r.pull_request ?? null }));
  return {
    since,
    reviews: Number(reviews?.n ?? 0),
    firstReviewAt: reviews?.first ? new Date(reviews.first) : null,
    created,
    fixHours: fixed.map((r) => Number(r.hours)).filter((h) => Number.isFinite(h) && h >= 0),
    rules: rules.map((r) => ({ rule: r.rule, findings: Number(r.findings), dismissed: Number(r.dismissed) })),
    mergedPullRequests: Number(merged?.n ?? 0),
    openP0OnMerged: refs(openP0),
    openP0Total: Number(openP0Count?.n ?? 0),
    secretFindings: refs(secrets),
    secretTotal: Number(secretCounts?.total ?? 0),
    secretDismissed: Number(secretCounts?.dismissed ?? 0),
  };
}

function scriptsOf(text: string): Record<string, string> {
  const pkg = JSON.parse(text) as { scripts?: unknown };
  const scripts = pkg && typeof pkg === 'object' ? pkg.scripts : undefined;
  if (!scripts || typeof scripts !== 'object' || Array.isArray(scripts)) return {};
  return Object.fromEntries(
    Object.entries(scripts as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );
}

export interface GatheredFacts {
  facts: ScorecardFacts;
  gaps: Gap[];
}

/** Reads every fact a scorecard needs; `host` null: the project's installation has no code host. */
export async function gatherFacts(
  orm: Orm,
  host: CodeHost | null,
  project: ScorecardProject,
  now: Date = new Date(),
): Promise<GatheredFacts> {
  const gaps: Gap[] = [];
  const missing: Partial<Record<FactName, string>> = {};
  const lose = (fact: FactName, code: string, message: string) => {
    missing[fact] ??= message;
    if (!gaps.some((g) => g.code === code)) gaps.push({ code, message });
  };
  const repo = project.repoFullName;

  let defaultBranch: string | null = null;
  let tree: RepositoryTree | null = null;
  if (!host) {
    const why = `installation ${project.installationId} has no configured code host`;
    for (const fact of ['tree', 'scripts', 'required_checks'] as const)
      lose(fact, 'code_host_unavailable', why);
  } else {
    defaultBranch = await attempt(
      () => host.defaultBranch(repo),
      (m) =>
        lose(
          'required_checks',
          'default_branch_unreadable',
          `the default branch of ${repo} could not be read: ${m}`,
        ),
    );
    tree = await attempt(
      () => host.readTree(repo),
      (m) => {
        const message = `the tree of ${repo} could not be read: ${m}`;
        lose('tree', 'repository_unreadable', message);
        lose('scripts', 'repository_unreadable', message);
      },
    );
    if (tree?.truncated)
      gaps.push({
        code: 'tree_truncated',
        message: `the code host returned part of the tree of ${repo} (${tree.files.length} files): checks that look for files saw only those`,
      });
  }

  // The knowledge must describe the commit the rest is read at, so every fact traces to one commit.
  let knowledge: ScorecardFacts['knowledge'] = null;
  const stored = await knowledgeOf(orm, project.workspaceId, project.id);
  if (host && tree && stored?.commitSha !== tree.commit) {
    const refreshed = await attempt(
      () => refreshKnowledge(orm, host, project, tree as RepositoryTree, 'scorecard'),
      (m) =>
        lose(
          'knowledge',
          'knowledge_unavailable',
          `the repository knowledge could not be refreshed at ${tree?.commit.slice(0, 12)}: ${m}`,
        ),
    );
    if (refreshed)
      knowledge = {
        id: refreshed.id,
        content: refreshed.content,
        gaps: refreshed.gaps,
        commitSha: tree.commit,
      };
  } else if (stored) {
    knowledge = {
      id: stored.id,
      content: stored.content as unknown as RepoKnowledge,
      gaps: stored.gaps,
      commitSha: stored.commitSha,
    };
  } else {
    lose(
      'knowledge',
      'knowledge_unavailable',
      `no repository knowledge is stored and the tree could not be read to derive it (${missing.tree ?? 'no tree'})`,
    );
  }

  let rootScripts: Record<string, string> | null = null;
  if (host && tree) {
    if (!tree.files.some((f) => f.path === 'package.json')) rootScripts = {};
    else {
      const commit = tree.commit;
      rootScripts = await attempt(
        async () => {
          const bytes = await host.readFile(repo, commit, 'package.json');
          return bytes ? scriptsOf(bytes.toString('utf8')) : {};
        },
        (m) => lose('scripts', 'package_scripts_unreadable', `package.json could not be read: ${m}`),
      );
    }
  }

  let requiredChecks: string[] | null = null;
  if (host && defaultBranch) {
    const branch = defaultBranch;
    requiredChecks = await attempt(
      () => host.requiredStatusChecks(repo, branch),
      (m) =>
        lose(
          'required_checks',
          'branch_protection_unreadable',
          `the code host could not read the protection of ${branch}: ${m}`,
        ),
    );
  }

  const ledger = await attempt(
    () => ledgerFacts(orm, project.id, now),
    (m) => lose('ledger', 'ledger_unreadable', `the findings ledger could not be read: ${m}`),
  );

  return {
    facts: {
      now,
      host: { kind: host?.kind ?? null, defaultBranch },
      commitSha: tree?.commit ?? knowledge?.commitSha ?? null,
      knowledge,
      paths: tree ? tree.files.map((f) => f.path) : null,
      rootScripts,
      requiredChecks,
      ledger,
      missing,
    },
    gaps,
  };
}
