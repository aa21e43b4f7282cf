/**
 * Checks the browser tests run on every console page: nothing wider than the viewport (a phone's
 * 390 px included), and no serious or critical accessibility violation as axe-core finds them.
 * axe's source is evaluated through the DevTools protocol, so the console's CSP stays as it is.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

/** How far the document is wider than the viewport, and the widest elements past its edge. */
export async function overflow(page: Page): Promise<{ by: number; culprits: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const by = document.documentElement.scrollWidth - width;
    const culprits: string[] = [];
    if (by > 0)
      for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        if (r.right > width + 1 && culprits.length < 5)
          culprits.push(
            `${el.tagName.toLowerCase()}.${(el as HTMLElement).className} (${Math.round(r.right)} px)`,
          );
      }
    return { by, culprits };
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const found = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`,
  )) as AxeViolation[];
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Waits until the page's h1 is there and nothing on it says it is still loading. */
export async function settled(page: Page, heading: string | RegExp, timeout = 60_000): Promise<void> {
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor({ timeout });
  await page.waitForLoadState('networkidle', { timeout });
  await page
    .getByRole('status')
    .filter({ hasText: /^Loading/ })
    .first()
    .waitFor({ state: 'detached', timeout })
    .catch(() => {});
}
