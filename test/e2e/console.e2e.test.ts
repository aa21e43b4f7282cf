/**
 * The web console in a real browser: Debian's Chromium driven by playwright-core against a real
 * `svc serve` process (test/e2e/helpers.ts seeds it: a local repository whose pull requests the
 * rule reviewers flag, reviewed through the API with delivery to the code host). A person enters
 * the key, opens the project and its reviewed pull request, sees the planted findings beside their
 * lines, dismisses the P0 with a reason and sees the check recompute, and opens the dashboard to
 * find a chart of the numbers the API reports. The key stays in sessionStorage, never in a URL.
 *
 * Chromium is installed by scripts/chromium.mjs when it is missing and this process may install
 * it (root with apt-get); otherwise these tests are skipped, and the reason is printed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../scripts/chromium.mjs';
import {
  launchChromium,
  PLAN_DOCUMENTS,
  PULL_REQUESTS,
  type SeededService,
  startSeededService,
} from './helpers';
import { DESKTOP, overflow, PHONE, seriousViolations, settled } from './page-checks';

/** The planted line of each finding, as the repository holds it. */
const PLANTED_CODE: Record<string, string> = {
  'security/code-injection': '  return eval(req.query.code);',
  'correctness/debug-statement': '  debugger;',
};

const found = await findChromium({ log: (line) => console.log(line) });
const skipReason = 'reason' in found ? found.reason : null;
if (skipReason) console.warn(`svc e2e: skipping the browser tests: ${skipReason}`);

/** A number as the console prints it (`12`, `40.0%`, `850 ms`, `1.2 s`, `3.5 min`, `$0.12`), in the API's unit. */
function shownValue(text: string, unit: string): number {
  const n = Number.parseFloat(text.replace(/[^0-9.-]/g, ''));
  if (unit === 'ratio') return n / 100;
  if (unit === 'ms') return text.endsWith(' min') ? n * 60_000 : text.endsWith(' s') ? n * 1000 : n;
  return n;
}

/** How far the printed number may be from the API's, given the digits the console prints. */
function tolerance(value: number, unit: string): number {
  if (unit === 'ratio') return 0.0005;
  if (unit === 'ms') return value < 1000 ? 0.5 : value < 120_000 ? 50 : 3000;
  return 0.005;
}

/** Generous: two shared cores, other test files running, a first PGlite start and a browser. */
const E2E_TIMEOUT_MS = 240_000;
const UI_TIMEOUT_MS = 60_000;

describe.skipIf(skipReason !== null)('the web console in Chromium', { timeout: E2E_TIMEOUT_MS }, () => {
  let svc: SeededService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every URL the page requested or navigated to. */
  const urls: string[] = [];

  const pr1 = () => {
    const pr = svc.pullRequests.find((p) => p.number === 1);
    if (!pr) throw new Error('pull request #1 was not seeded');
    return pr;
  };
  const planted = (rule: string) => {
    const f = pr1().findings.find((x) => x.rule === rule);
    if (!f) throw new Error(`no ${rule} finding on #1`);
    return f;
  };
  /** Waits for the page to catch up (the default of one second is too short on a loaded machine). */
  const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: UI_TIMEOUT_MS, interval: 200 });
  /** The value beside a term of the page's facts list (`<dt>` → `<dd>`). */
  const fact = (term: string) =>
    page.locator('dl.facts dt', { hasText: term }).locator('xpath=following-sibling::dd[1]');

  beforeAll(async () => {
    svc = await startSeededService({ log: (line) => console.log(line) });
    const launched = await launchChromium((line) => console.log(line));
    if ('reason' in launched) throw new Error(`Chromium was found but cannot launch: ${launched.reason}`);
    browser = launched.browser;
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(UI_TIMEOUT_MS);
    page = await context.newPage();
    page.on('request', (request) => urls.push(request.url()));
    page.on('framenavigated', (frame) => urls.push(frame.url()));
  }, 600_000);

  afterAll(async () => {
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await svc?.stop();
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'fail' || !page) return;
    const file = join(mkdtempSync(join(tmpdir(), 'svc-e2e-failure-')), 'page.png');
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    console.log(`svc e2e: the page when "${ctx.task.name}" failed: ${file} (${page.url()})`);
  });

  it('asks for a key, keeps it in sessionStorage and never puts it in a URL', async () => {
    await page.goto(svc.url);
    await poll(() => page.getByRole('heading', { name: 'svc console' }).isVisible()).toBe(true);
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.getByLabel('API key').fill(svc.key);
    await form.getByRole('button', { name: 'Open console' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

    const stored = await page.evaluate('sessionStorage.getItem("svc.console.key")');
    expect(stored).toBe(svc.key);
    const persisted = await page.evaluate('Object.values({ ...localStorage }).join("\\n")');
    expect(persisted).not.toContain(svc.key);
    expect(page.url()).not.toContain(svc.key);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((u) => u.includes(svc.key))).toEqual([]);
  });

  it('opens the project and its reviewed pull request: the check asks for action, the planted findings are listed', async () => {
    await page.getByRole('link', { name: 'shop', exact: true }).click();
    await page.getByRole('heading', { name: 'Pull requests', level: 1 }).waitFor();
    const blocked = page.getByRole('table', { name: /Blocked pull requests/ });
    await poll(() => blocked.getByRole('link', { name: '#1 Add the report runner' }).count()).toBe(1);
    await poll(() => blocked.getByRole('link', { name: '#2 Look users up by name' }).count()).toBe(1);

    await blocked.getByRole('link', { name: '#1 Add the report runner' }).click();
    await page.getByRole('heading', { name: '#1 Add the report runner', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/projects/${svc.projectId}/pull-requests/${pr1().id}`);
    expect(await fact('Review status').textContent()).toBe('reviewed');
    await poll(() => fact('Check (Service / Review)').textContent()).toContain('action_required');

    const open = page.getByRole('table', { name: 'Open findings on this pull request' });
    for (const f of [planted('security/code-injection'), planted('correctness/debug-statement')]) {
      const row = open.getByRole('row').filter({ has: page.getByRole('link', { name: f.title }) });
      await poll(() => row.count()).toBe(1);
      expect(await row.textContent()).toContain(`${f.path}:${f.line}`);
      expect(await row.textContent()).toContain(f.severity);
    }
  });

  it('shows the review with each planted finding beside its line, file by file', async () => {
    await page.getByRole('link', { name: `Review ${pr1().reviewId}` }).click();
    await page.getByRole('heading', { name: 'Review of pull request #1', level: 1 }).waitFor();
    for (const f of [planted('security/code-injection'), planted('correctness/debug-statement')]) {
      const file = page.getByRole('region', { name: `File ${f.path}` });
      await file.waitFor();
      // The diff the review read, around the finding: its line, added, then the finding's card.
      const diff = file.getByRole('table', { name: `Changes to ${f.path} around its findings` });
      await diff.waitFor();
      const rows = await diff.locator('tbody > tr').allTextContents();
      const at = rows.findIndex((row) => row.includes(PLANTED_CODE[f.rule] as string));
      expect(at, rows.join('\n')).toBeGreaterThan(-1);
      expect(rows[at]).toMatch(new RegExp(`^${f.line}\\+added: `));
      expect(rows[at + 1]).toContain(f.title);
      expect(rows[at + 1]).toContain(f.severity);
      expect(rows[at + 1]).toContain(f.rule);
    }
  });

  it('dismissing the P0 with a reason recomputes the check: the UI, the API and the code host agree', async () => {
    const p0 = planted('security/code-injection');
    const reason = 'only admins reach this handler';
    const file = page.getByRole('region', { name: `File ${p0.path}` });
    await file.getByRole('button', { name: 'Dismiss', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Dismiss finding' });
    await dialog.waitFor();
    await dialog.getByLabel('Reason').fill(reason);
    const answered = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith(`/api/v1/findings/${p0.id}/events`),
    );
    await dialog.getByRole('button', { name: 'Dismiss finding' }).click();
    const response = await answered;
    expect(response.status()).toBe(201);
    // The API's own answer: the check recomputed from the ledger, without a new run.
    expect((await response.json()).check).toMatchObject({ recomputed: true, conclusion: 'success' });

    // The review page now shows it dismissed, with the reason.
    const card = file.getByRole('row').filter({ has: page.getByRole('link', { name: p0.title }) });
    await poll(() => card.textContent()).toContain(`dismissed: “${reason}”`);

    // Back on the pull request, the check has recomputed and only the P2 is open.
    await page.getByRole('link', { name: '#1', exact: true }).click();
    await page.getByRole('heading', { name: '#1 Add the report runner', level: 1 }).waitFor();
    await poll(() => fact('Check (Service / Review)').textContent()).toBe('success');
    const open = page.getByRole('table', { name: 'Open findings on this pull request' });
    await poll(() => open.getByRole('link', { name: p0.title }).count()).toBe(0);
    await poll(() =>
      open.getByRole('link', { name: planted('correctness/debug-statement').title }).count(),
    ).toBe(1);

    // Cross-checks: the ledger through the API, and the check the code host holds.
    const finding = await svc.api('GET', `/api/v1/findings/${p0.id}`);
    expect(finding.body).toMatchObject({ status: 'dismissed', dismissed_reason: reason });
    const pr = await svc.api('GET', `/api/v1/pull-requests/${pr1().id}`);
    const check = (await svc.checks()).find((c) => c.head_sha === pr.body.head_sha);
    expect(check).toMatchObject({ status: 'completed', conclusion: 'success', title: 'Reviewed: 1 P2 open' });
    expect(urls.filter((u) => u.includes(svc.key))).toEqual([]);
  });

  it('the dashboard charts the numbers the API reports', async (ctx) => {
    const listed = await svc.api('GET', '/api/v1/dashboards');
    await page
      .getByRole('navigation', { name: 'Project sections' })
      .getByRole('link', { name: 'Dashboards' })
      .click();
    if (listed.status === 501) {
      // Dashboards are not built yet: the console says so instead of failing.
      await page.getByRole('status').filter({ hasText: 'Dashboards is not available yet' }).waitFor();
      console.warn('svc e2e: GET /api/v1/dashboards answers 501; the dashboard chart is not checked yet');
      ctx.skip();
      return;
    }
    expect(listed.status).toBe(200);
    const chosen = listed.body.data.find((d: { is_default: boolean }) => d.is_default) ?? listed.body.data[0];
    expect(chosen).toBeDefined();
    const board = await svc.api('GET', `/api/v1/dashboards/${chosen.id}`);
    expect(board.status).toBe(200);
    await page.getByRole('heading', { name: board.body.name, level: 1 }).waitFor();

    type Panel = {
      title: string;
      metric: string;
      group_by: string | null;
      chart: string;
      unit: string;
      summary: number | null;
      series: { name: string; points: { day: string; value: number | null }[] }[];
    };
    const panels = board.body.panels as Panel[];
    // The API's series are the seeded history: three reviews, and the five planted findings by severity.
    const total = (panel: Panel | undefined, series?: string) =>
      (panel?.series ?? [])
        .filter((s) => series === undefined || s.name === series)
        .flatMap((s) => s.points)
        .reduce((n, x) => n + (x.value ?? 0), 0);
    const reviews = panels.find((p) => p.metric === 'reviews');
    expect(total(reviews)).toBe(PULL_REQUESTS.length);
    const bySeverity = panels.find((p) => p.metric === 'findings' && p.group_by === 'severity');
    const plantedAll = PULL_REQUESTS.flatMap((p) => p.planted);
    for (const severity of ['P0', 'P1', 'P2'])
      expect(total(bySeverity, severity), severity).toBe(
        plantedAll.filter((f) => f.severity === severity).length,
      );

    const charted = panels.filter(
      (p) => (p.chart === 'line' || p.chart === 'bar') && p.series.some((s) => s.points.some((x) => x.value)),
    );
    // The seeded reviews are real numbers: at least one panel charts something that is not zero.
    expect(charted.length).toBeGreaterThan(0);
    for (const panel of charted) {
      const region = page.getByRole('region', { name: panel.title });
      const chart = region.getByRole('img', { name: panel.title });
      await chart.waitFor();
      // uPlot drew it: a canvas of real size inside the chart.
      const box = await chart.locator('canvas').first().boundingBox();
      expect(box?.width ?? 0).toBeGreaterThan(100);
      expect(box?.height ?? 0).toBeGreaterThan(50);
      // Its numbers, as the chart's table shows them, are the API's series.
      await region.getByText(`${panel.title}: the numbers`).click();
      const table = region.getByRole('table', { name: `${panel.title}, by day` });
      await table.waitFor();
      const headers = await table.getByRole('columnheader').allInnerTexts();
      expect(headers.slice(1)).toEqual(panel.series.map((s) => s.name));
      for (const series of panel.series) {
        const column = headers.indexOf(series.name);
        for (const point of series.points) {
          if (point.value === null) continue;
          const row = table
            .getByRole('row')
            .filter({ has: page.getByRole('rowheader', { name: point.day }) });
          const cells = await row.getByRole('cell').allInnerTexts();
          const shown = cells[column - 1] ?? '';
          const value = shownValue(shown, panel.unit);
          expect(
            Math.abs(value - point.value),
            `${panel.title}, ${series.name} on ${point.day}: shown ${shown}, API ${point.value}`,
          ).toBeLessThanOrEqual(tolerance(point.value, panel.unit));
        }
      }
    }
  });

  it('lists the ledger P0 first, then by file and line, and shows finding text as Markdown', async () => {
    await page
      .getByRole('navigation', { name: 'Project sections' })
      .getByRole('link', { name: 'Findings' })
      .click();
    await settled(page, 'Findings ledger');
    const table = page.getByRole('table', { name: /^Findings: \d+, P0 first, then file and line$/ });
    await table.waitFor();
    const rows = await table.locator('tbody > tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        severity: tr.querySelector('.sev')?.textContent?.replace(/[^P0-9]/g, '') ?? '',
        where: tr.querySelector('td:nth-child(3) code')?.textContent ?? '',
      })),
    );
    const planted = PULL_REQUESTS.flatMap((p) => p.planted);
    expect(rows.length).toBeGreaterThanOrEqual(planted.length);
    const order = rows.map((r) => {
      const [path = '', line = '0'] = r.where.split(':');
      return { severity: r.severity, path, line: Number.parseInt(line, 10) };
    });
    const sorted = [...order].sort(
      (a, b) => a.severity.localeCompare(b.severity) || a.path.localeCompare(b.path) || a.line - b.line,
    );
    expect(order).toEqual(sorted);
    expect(order[0]?.severity).toBe('P0');

    // A secret's finding explains the fix in Markdown: bold, not asterisks.
    const secret = svc.pullRequests
      .find((p) => p.number === 2)
      ?.findings.find((f) => f.rule === 'secrets/aws');
    if (!secret) throw new Error('no secrets/aws finding on #2');
    await table.getByRole('link', { name: secret.title }).first().click();
    await settled(page, secret.title);
    const said = page.getByRole('region', { name: 'What it says' });
    await said.locator('strong', { hasText: 'Fix:' }).waitFor();
    expect(await said.textContent()).not.toContain('**');
  });

  it('the Plans page rejects a plan with a reason and approves another', async () => {
    const plans = (await svc.api('GET', '/api/v1/plans')).body.data as {
      id: string;
      repo_artifact_path: string;
    }[];
    const byPath = (path: string) => {
      const plan = plans.find((p) => p.repo_artifact_path === path);
      if (!plan) throw new Error(`no plan for ${path}`);
      return plan;
    };
    expect(plans.map((p) => p.repo_artifact_path).sort()).toEqual(Object.keys(PLAN_DOCUMENTS).sort());
    await page
      .getByRole('navigation', { name: 'Project sections' })
      .getByRole('link', { name: 'Plans' })
      .click();
    await settled(page, 'Plans');
    await page.getByRole('heading', { name: 'Awaiting your decision (2)', level: 2 }).waitFor();

    const rejected = byPath('docs/plans/export.md');
    await page.getByRole('button', { name: 'Reject docs/plans/export.md' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reject plan' });
    await dialog.getByRole('button', { name: 'Reject plan' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'A rejection needs a reason' }).waitFor();
    const reason = 'export belongs in the accounting service';
    await dialog.getByLabel('Reason').fill(reason);
    const answered = page.waitForResponse((r) => r.url().endsWith(`/api/v1/plans/${rejected.id}/reject`));
    await dialog.getByRole('button', { name: 'Reject plan' }).click();
    expect((await answered).status()).toBe(200);
    await page.getByRole('heading', { name: 'Awaiting your decision (1)', level: 2 }).waitFor();
    expect((await svc.api('GET', `/api/v1/plans/${rejected.id}`)).body).toMatchObject({
      status: 'reviewed',
      approval_status: 'rejected',
    });
    const events = (await svc.api('GET', `/api/v1/plans/${rejected.id}/events`)).body.data as {
      kind: string;
      payload: { reason?: string };
    }[];
    expect(events.find((e) => e.kind === 'rejected')?.payload.reason).toBe(reason);

    const approved = byPath('docs/plans/search.md');
    await page.getByRole('button', { name: 'Approve docs/plans/search.md' }).click();
    const approve = page.getByRole('dialog', { name: 'Approve plan' });
    const approvedAnswer = page.waitForResponse((r) =>
      r.url().endsWith(`/api/v1/plans/${approved.id}/approve`),
    );
    await approve.getByRole('button', { name: 'Approve plan' }).click();
    expect((await approvedAnswer).status()).toBe(200);
    await page.getByRole('heading', { name: 'Awaiting your decision (0)', level: 2 }).waitFor();
    expect((await svc.api('GET', `/api/v1/plans/${approved.id}`)).body.approval_status).toBe('approved');
  });

  it('notifies only of what a person acts on, and names the key that acted', async () => {
    await page.getByRole('link', { name: /^Notifications/ }).click();
    await settled(page, 'Notifications');
    const cards = page.locator('ul.notifications > li');
    await poll(() => cards.count()).toBeGreaterThan(0);
    const texts = await cards.locator('strong').allTextContents();
    // #1 and #2 each opened P0s; the two plans were reviewed and awaited approval.
    expect(texts.filter((t) => /new P0 findings? on a pull request/.test(t)).length).toBe(2);
    expect(texts.filter((t) => t.startsWith('A plan was reviewed')).length).toBe(2);
    for (const text of texts)
      expect(text).toMatch(
        /^(\d+ new P0 findings? on a pull request|A plan was reviewed|A .* run failed|A quick action)/,
      );
    const mine = await svc.api('GET', '/api/v1/preferences/me');
    expect(mine.body.unread_notifications).toBe(texts.length);
    await poll(() => page.getByRole('link', { name: `Notifications ${texts.length} unread` }).count()).toBe(
      1,
    );

    // The P0 dismissed earlier: its timeline says which key did it, by name.
    const keys = (await svc.api('GET', '/api/v1/keys', undefined, { project: false })).body.data as {
      id: string;
      name: string;
    }[];
    const p0 = planted('security/code-injection');
    await page.goto(`${svc.url}/projects/${svc.projectId}/findings/${p0.id}`);
    await settled(page, p0.title);
    const dismissed = page
      .getByRole('table', { name: 'What happened, newest first' })
      .getByRole('row', { name: /dismissed/ });
    const by = dismissed.locator('td').nth(2);
    const names = keys.map((k) => k.name);
    await poll(async () => names.includes((await by.textContent()) ?? '')).toBe(true);
    expect(keys.map((k) => k.id)).not.toContain(await by.textContent());
  });

  it('says what a setting expects instead of a parser message', async () => {
    await page.goto(`${svc.url}/projects/${svc.projectId}/settings`);
    await settled(page, /settings$/);
    const form = page.getByRole('form', { name: 'Project settings' });
    await form.getByLabel('svc.brakes.spend_cap_usd').fill('12x');
    await form
      .getByRole('group', { name: 'svc.brakes.approval_window' })
      .getByLabel('Runs may start from')
      .fill('09:00');
    await form.getByRole('button', { name: 'Save project settings' }).click();
    const errors = await form.locator('.field-error').allTextContents();
    expect(errors.join('\n')).toContain('“12x” is not a number');
    expect(errors.join('\n')).toContain('Give both the start and the end');
    expect(errors.join('\n')).not.toMatch(/Unexpected|JSON at position/);
    expect(await form.getByLabel('svc.brakes.spend_cap_usd').getAttribute('aria-invalid')).toBe('true');
    const stored = await svc.api('GET', `/api/v1/projects/${svc.projectId}/settings`);
    expect(stored.body.values['svc.brakes.spend_cap_usd']).toBeNull();
  });

  it('the register form keeps its installation after the service refuses a repository', async () => {
    await page.goto(svc.url);
    await settled(page, 'Projects');
    await page.getByText('Register a repository as a project').click();
    const form = page.getByRole('form', { name: 'Register a repository' });
    const installation = form.getByLabel('Installation');
    await poll(() => installation.inputValue()).not.toBe('');
    const chosen = await installation.inputValue();
    await form.getByLabel('Project name').fill('ghost');
    await form.getByLabel('Repository (owner/repo)').fill('acme/ghost');
    await form.getByRole('button', { name: 'Register project' }).click();
    await form.getByRole('alert').waitFor();
    expect(await installation.inputValue()).toBe(chosen);
    expect(await installation.evaluate((el: HTMLSelectElement) => el.selectedIndex)).toBeGreaterThanOrEqual(
      0,
    );
  });

  it('every page fits a 390 px phone and a desktop, with no serious or critical accessibility violation', async () => {
    const at = (...rest: string[]) => [svc.url, 'projects', svc.projectId, ...rest].join('/');
    const p0 = planted('security/code-injection');
    const pages: [string, string | RegExp][] = [
      [svc.url, 'Projects'],
      [at(), 'Pull requests'],
      [at('pull-requests', pr1().id), '#1 Add the report runner'],
      [at('reviews', pr1().reviewId), 'Review of pull request #1'],
      [at('tasks', pr1().reviewId), /.+/],
      [at('findings'), 'Findings ledger'],
      [at('findings', p0.id), p0.title],
      [at('reviewers'), 'Reviewers'],
      [at('scorecard'), 'Scorecard'],
      [at('dashboards'), /.+/],
      [at('plans'), 'Plans'],
      [at('timeline'), 'Timeline'],
      [at('notifications'), 'Notifications'],
      [at('settings'), /settings$/],
    ];
    const problems: string[] = [];
    for (const viewport of [PHONE, DESKTOP]) {
      await page.setViewportSize(viewport);
      for (const [url, heading] of pages) {
        await page.goto(url);
        await settled(page, heading);
        // Charts draw after their data: wait for them so their width counts.
        if (url.endsWith('/dashboards'))
          await page
            .getByRole('img')
            .first()
            .waitFor()
            .catch(() => {});
        const wide = await overflow(page);
        if (wide.by > 0)
          problems.push(
            `${url} at ${viewport.width} px overflows by ${wide.by} px: ${wide.culprits.join(', ')}`,
          );
        for (const v of await seriousViolations(page))
          problems.push(
            `${url} at ${viewport.width} px: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(' | ')}`,
          );
      }
    }
    await page.setViewportSize(DESKTOP);
    expect(problems).toEqual([]);
  });
});
