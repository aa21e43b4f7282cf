/**
 * One severity palette and one order for the whole console. The colours live once, as CSS
 * variables in styles.css (light and dark); charts, which draw on a canvas, read them from there.
 */
import type { Severity } from './api';

export const SEVERITY_RANK: Record<Severity, number> = { P0: 0, P1: 1, P2: 2 };

/** The colour of a severity as the stylesheet defines it (`--p0` …), for canvas drawing. */
export function severityColor(s: Severity, root: Element = document.documentElement): string {
  return getComputedStyle(root).getPropertyValue(`--${s.toLowerCase()}`).trim() || '#59636e';
}

/** P0 first, then by file and line: the order findings are listed in everywhere. */
export function bySeverityThenPlace(
  a: { severity: Severity; path: string; line: number },
  b: { severity: Severity; path: string; line: number },
): number {
  return (
    SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.path.localeCompare(b.path) || a.line - b.line
  );
}

export const sortedBySeverity = <T extends { severity: Severity; path: string; line: number }>(list: T[]) =>
  [...list].sort(bySeverityThenPlace);
