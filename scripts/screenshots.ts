/**
 * `npm run screenshots`: pictures of the web console's main pages for the README, taken in
 * Debian's Chromium (scripts/chromium.mjs installs it when missing and it can) against a real
 * `svc serve` seeded exactly as the browser tests seed it (test/e2e/helpers.ts): a repository
 * with three reviewed pull requests and their planted findings. Writes 1280×800 PNGs to
 * docs/screenshots/ (or the directory given as the first argument).
 */
import { mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, ROOT, startSeededService } from '../test/e2e/helpers';

const outDir = resolve(process.argv[2] ?? join(ROOT, 'docs', 'screenshots'));
const log = (line: string) => console.error(line);

/** Waits until the page's heading is there and nothing on it is still loading. */
async function settled(page: Page, heading: string | RegExp) {
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  await page.waitForLoadState('networkidle');
  await page
    .getByRole('status')
    .filter({ hasText: /^Loading/ })
    .first()
    .waitFor({ state: 'detached' })
    .catch(() => {});
  // Moves the focus off the heading (the console focuses it on navigation) so no focus ring shows.
  await page.evaluate('document.activeElement && document.activeElement.blur()');
}

const launched = await launchChromium(log);
if ('reason' in launched) {
  console.error(`svc: cannot take screenshots without Chromium: ${launched.reason}`);
  process.exit(1);
}
const { browser } = launched;
const svc = await startSeededService({ log });
const written: string[] = [];
try {
  mkdirSync(outDir, { recursive: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  context.setDefaultTimeout(60_000);
  const page = await context.newPage();
  const shoot = async (name: string) => {
    const file = join(outDir, `${name}.png`);
    await page.screenshot({ path: file });
    written.push(file);
    log(`svc: wrote ${relative(process.cwd(), file)}`);
  };
  const project = (...rest: string[]) => [svc.url, 'projects', svc.projectId, ...rest].join('/');
  const pr1 = svc.pullRequests.find((p) => p.number === 1);
  if (!pr1) throw new Error('pull request #1 was not seeded');

  // Signs in through the key form, as a person does; the key stays in this tab's sessionStorage.
  await page.goto(svc.url);
  await page.getByLabel('API key').fill(svc.key);
  await page.getByRole('button', { name: 'Open console' }).click();
  await settled(page, 'Projects');
  await shoot('projects');

  await page.goto(project());
  await settled(page, 'Pull requests');
  await shoot('pull-requests');

  await page.goto(project('pull-requests', pr1.id));
  await settled(page, `#1 ${pr1.title}`);
  await shoot('pull-request');

  await page.goto(project('reviews', pr1.reviewId));
  await settled(page, 'Review of pull request #1');
  // The findings beside their lines are the point of this page: start the picture at them.
  await page.getByRole('heading', { name: /^Findings/, level: 2 }).evaluate((el) => el.scrollIntoView());
  await page.evaluate('window.scrollBy(0, -24)');
  await shoot('review');

  // A person waves the eval finding away, so the ledger, the timeline and the dashboard show one.
  const p0 = pr1.findings.find((f) => f.rule === 'security/code-injection');
  if (p0) {
    const dismissed = await svc.api('POST', `/api/v1/findings/${p0.id}/events`, {
      kind: 'dismissed',
      payload: { reason: 'only admins reach this handler' },
    });
    if (dismissed.status !== 201) throw new Error(`dismissing answered ${dismissed.status}`);
  }

  await page.goto(project('findings'));
  await settled(page, 'Findings ledger');
  await shoot('findings');

  await page.goto(project('reviewers'));
  await settled(page, 'Reviewers');
  await shoot('reviewers');

  await page.goto(project('scorecard'));
  await settled(page, 'Scorecard');
  await shoot('scorecard');

  await page.goto(project('dashboards'));
  await page.getByRole('navigation', { name: 'Dashboards' }).waitFor();
  await settled(page, /.+/);
  await page
    .getByRole('img')
    .first()
    .waitFor()
    .catch(() => {});
  await shoot('dashboard');

  await page.goto(project('timeline'));
  await settled(page, /Timeline/);
  await shoot('timeline');

  await context.close();
} finally {
  await browser.close();
  await svc.stop();
}
console.log(written.map((f) => relative(ROOT, f)).join('\n'));
