/**
 * The secrets skill: secretlint with the recommended preset (AWS access key ids switched on)
 * over every changed text file. The preset's configuration lives in the skill folder
 * (`secretlint.json`), so it is part of the skill's hash.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createEngine } from '@secretlint/node';
// A dependency of @secretlint/node (pinned to the same 12.0.0); imported only to reset it.
import { secretLintProfiler } from '@secretlint/profiler';
import type { Severity } from '../../core/review';
import { SEVERITIES } from '../../core/review';
import type { CatalogSkill } from '../../skills/catalog';

export interface SecretMessage {
  /** Short rule name: `aws`, `github`, `privatekey`, … */
  rule: string;
  messageId: string;
  /** secretlint's message with the secret masked. */
  message: string;
  /** 1-based. */
  line: number;
  endLine: number;
}

type Engine = Awaited<ReturnType<typeof createEngine>>;
const engines = new Map<string, Promise<Engine>>();

function engineFor(skill: CatalogSkill): Promise<Engine> {
  let engine = engines.get(skill.hash);
  if (!engine) {
    const config = skill.files['secretlint.json'];
    if (config === undefined) throw new Error(`skill ${skill.id}: secretlint.json is missing`);
    engine = createEngine({
      formatter: 'json',
      color: false,
      // Findings are posted on pull requests: never repeat the secret itself.
      maskSecrets: true,
      configFileJSON: JSON.parse(config),
    });
    engines.set(skill.hash, engine);
    engine.catch(() => engines.delete(skill.hash));
  }
  return engine;
}

interface JsonResult {
  messages: {
    ruleId: string;
    messageId?: string;
    message: string;
    loc: { start: { line: number }; end: { line: number } };
  }[];
}

/**
 * secretlint profiles every call into a process-wide list it never empties, and scans that list
 * on each new mark: quadratic in the files scanned over the process's life (2,000 files left
 * ~50 s of CPU behind). Empty it, and the user-timing marks it made, after letting the
 * observer's queued callbacks run.
 */
async function resetSecretlintProfiler() {
  await nextTurn();
  await secretLintProfiler.getMeasures();
  const profiler = secretLintProfiler as unknown as { entries?: unknown[]; measures?: unknown[] };
  if (Array.isArray(profiler.entries)) profiler.entries.length = 0;
  if (Array.isArray(profiler.measures)) profiler.measures.length = 0;
  for (const name of new Set(performance.getEntriesByType('mark').map((e) => e.name))) {
    if (name.startsWith('@')) performance.clearMarks(name);
  }
  for (const name of new Set(performance.getEntriesByType('measure').map((e) => e.name))) {
    if (name.startsWith('@')) performance.clearMeasures(name);
  }
}

/** Scans between profiler resets: small enough that the list stays short. */
const RESET_EVERY = 25;
let scansSinceReset = 0;
let inFlight = 0;
/** While set, no scan starts: the last scan in flight resets the profiler, then opens it. */
let gate: { promise: Promise<void>; open: () => void } | null = null;

async function afterScan() {
  scansSinceReset++;
  if (scansSinceReset >= RESET_EVERY && !gate) {
    let open = () => {};
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    gate = { promise, open };
  }
  if (!gate || inFlight > 0) return;
  const current = gate;
  try {
    // A mark whose partner is still to come must stay, so this runs only with no scan in flight.
    await resetSecretlintProfiler();
  } catch {
    // Best effort: a profiler that cannot be reset costs time, not correctness.
  } finally {
    scansSinceReset = 0;
    gate = null;
    current.open();
  }
}

export async function scanSecrets(
  skill: CatalogSkill,
  path: string,
  content: string,
): Promise<SecretMessage[]> {
  const engine = await engineFor(skill);
  while (gate) await gate.promise;
  inFlight++;
  let output: string;
  try {
    ({ output } = await engine.executeOnContent({ content, filePath: path }));
  } finally {
    inFlight--;
    await afterScan();
  }
  const results = JSON.parse(output) as JsonResult[];
  return results.flatMap((r) =>
    r.messages.map((m) => ({
      rule: m.ruleId.replace(/^@secretlint\/secretlint-rule-/, ''),
      messageId: m.messageId ?? 'secret',
      message: m.message,
      line: m.loc.start.line,
      endLine: Math.max(m.loc.start.line, m.loc.end.line),
    })),
  );
}

/** Severity of a secretlint message: front matter `severity_by_message[messageId]`, else the default. */
export function secretSeverity(skill: CatalogSkill, messageId: string): Severity {
  const policy = skill.options.severity_by_message;
  const named =
    typeof policy === 'object' && policy !== null
      ? (policy as Record<string, unknown>)[messageId]
      : undefined;
  return SEVERITIES.includes(named as Severity) ? (named as Severity) : skill.defaultSeverity;
}
