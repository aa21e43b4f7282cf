/**
 * `npm run screenshots`: pictures of the web console's pages for the README, taken in Debian's
 * Chromium (scripts/chromium.mjs installs it when missing and it can) against a real `svc serve`
 * seeded exactly as the browser tests seed it (test/e2e/helpers.ts): a repository with three
 * reviewed pull requests, their planted findings and two plans awaiting approval. Writes 1280×800
 * PNGs (`NAME.png`) and 390×844 phone PNGs (`NAME-phone.png`) to docs/screenshots/ (or the
 * directory given as the first argument).
 */
import { mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, ROOT, startSeededService } from '../test/e2e/helpers';
import { DESKTOP, PHONE, settled } from '../test/e2e/page-checks';

const outDir = resolve(process.argv[2] ?? join(ROOT, 'docs', 'screenshots'));
const log = (line: string) => console.error(line);

/** One picture: where, the page's heading, what to do before it is taken, and at which widths. */
interface Shot {
  name: string;
  path: string[];
  heading: string | RegExp;
  phone: boolean;
  before?: (page: Page) => Promise<void>;
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
  const pr1 = svc.pullRequests.find((p) => p.number === 1);
  if (!pr1) throw new Error('pull request #1 was not seeded');
  const shots: Shot[] = [
    { name: 'projects', path: [], heading: 'Projects', phone: true },
    { name: 'pull-requests', path: ['projects', svc.projectId], heading: 'Pull requests', phone: false },
    {
      name: 'pull-request',
      path: ['projects', svc.projectId, 'pull-requests', pr1.id],
      heading: `#1 ${pr1.title}`,
      phone: true,
    },
    {
      name: 'review',
      path: ['projects', svc.projectId, 'reviews', pr1.reviewId],
      heading: 'Review of pull request #1',
      phone: true,
      // The findings beside their lines are the point of this page: start the picture at them.
      before: async (page) => {
        await page
          .getByRole('heading', { name: /^Findings/, level: 2 })
          .evaluate((el) => el.scrollIntoView());
        await page.evaluate('window.scrollBy(0, -24)');
      },
    },
    {
      name: 'findings',
      path: ['projects', svc.projectId, 'findings'],
      heading: 'Findings ledger',
      phone: true,
    },
    { name: 'reviewers', path: ['projects', svc.projectId, 'reviewers'], heading: 'Reviewers', phone: false },
    { name: 'scorecard', path: ['projects', svc.projectId, 'scorecard'], heading: 'Scorecard', phone: false },
    {
      name: 'dashboard',
      path: ['projects', svc.projectId, 'dashboards'],
      heading: /.+/,
      phone: true,
      before: async (page) => {
        await page
          .getByRole('img')
          .first()
          .waitFor()
          .catch(() => {});
      },
    },
    { name: 'plans', path: ['projects', svc.projectId, 'plans'], heading: 'Plans', phone: true },
    {
      name: 'notifications',
      path: ['projects', svc.projectId, 'notifications'],
      heading: 'Notifications',
      phone: true,
    },
    { name: 'timeline', path: ['projects', svc.projectId, 'timeline'], heading: /Timeline/, phone: false },
    { name: 'settings', path: ['projects', svc.projectId, 'settings'], heading: /settings$/, phone: false },
  ];

  // A person waves the eval finding away, so the ledger, the timeline and the dashboard show one.
  const p0 = pr1.findings.find((f) => f.rule === 'security/code-injection');
  if (p0) {
    const dismissed = await svc.api('POST', `/api/v1/findings/${p0.id}/events`, {
      kind: 'dismissed',
      payload: { reason: 'only admins reach this handler' },
    });
    if (dismissed.status !== 201) throw new Error(`dismissing answered ${dismissed.status}`);
  }

  for (const [viewport, suffix] of [
    [DESKTOP, ''],
    [PHONE, '-phone'],
  ] as const) {
    const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
    context.setDefaultTimeout(60_000);
    const page = await context.newPage();
    // Signs in through the key form, as a person does; the key stays in this tab's sessionStorage.
    await page.goto(svc.url);
    await page.getByLabel('API key').fill(svc.key);
    await page.getByRole('button', { name: 'Open console' }).click();
    await settled(page, 'Projects');
    for (const shot of shots) {
      if (suffix && !shot.phone) continue;
      await page.goto([svc.url, ...shot.path].join('/'));
      await settled(page, shot.heading);
      await shot.before?.(page);
      // Moves the focus off the heading (the console focuses it on navigation) so no focus ring shows.
      await page.evaluate('document.activeElement && document.activeElement.blur()');
      const file = join(outDir, `${shot.name}${suffix}.png`);
      await page.screenshot({ path: file });
      written.push(file);
      log(`svc: wrote ${relative(process.cwd(), file)}`);
    }
    await context.close();
  }
} finally {
  await browser.close();
  await svc.stop();
}
console.log(written.map((f) => relative(ROOT, f)).join('\n'));
