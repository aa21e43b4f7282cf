/**
 * A pull request event as the automation receives it (src/automation/triggers.ts), for the
 * flow tests' one pull request: #1 of acme/api, `feature` onto `main`. Each test gives the head
 * it is at and whatever else differs.
 */
import type { PullRequestEvent } from '../../src/automation/triggers';

export function pullRequestEvent(
  over: Partial<PullRequestEvent> & Pick<PullRequestEvent, 'headSha'>,
): PullRequestEvent {
  return {
    action: 'opened',
    installationId: 1,
    repo: 'acme/api',
    number: 1,
    title: 'Add the runner',
    draft: false,
    merged: false,
    headRef: 'feature',
    baseRef: 'main',
    author: 'octocat',
    ...over,
  };
}
