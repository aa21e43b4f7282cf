/**
 * The secrets skill: secretlint's recommended preset (AWS access key ids switched on) and our
 * supplementary rules (`secret-rules.ts`) over every changed text file, run on `@secretlint/core`
 * directly. The rule list and options live in the skill folder (`secretlint.json`), so they are
 * part of the skill's hash. Known example values and scanners' test samples are dropped
 * (`secret-examples.ts`); everything else is reported.
 */
import { extname } from 'node:path';
import { lintSource } from '@secretlint/core';
// A dependency of @secretlint/core (pinned to the same 12.0.0); imported only to switch it off.
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as recommendedPreset } from '@secretlint/secretlint-rule-preset-recommend';
import type {
  SecretLintCoreConfig,
  SecretLintCoreConfigUnionRule,
  SecretLintCoreResultMessage,
  SecretLintUnionRuleCreator,
} from '@secretlint/types';
import { type FileRole, roleOfPath } from '../../core/file-roles';
import type { Severity } from '../../core/review';
import { FOUND_SECRETS, SEVERITIES } from '../../core/review';
import { maskSecrets } from '../../core/secret-mask';
import type { CatalogSkill } from '../../skills/catalog';
import { isSecretScannerTestMaterial, notACredential } from './secret-examples';
import { SUPPLEMENTARY_RULES } from './secret-rules';

export interface SecretMessage {
  /** Short rule name: `aws`, `github`, `privatekey`, `stripe`, … */
  rule: string;
  messageId: string;
  /** secretlint's message with the secret masked. */
  message: string;
  /** The credentials themselves, for the ledger to mask in the finding's anchor; never shown. */
  [FOUND_SECRETS]: string[];
  /** 1-based. */
  line: number;
  endLine: number;
}

/** Every rule or preset `secretlint.json` may name, by id. */
const KNOWN_RULES: ReadonlyMap<string, SecretLintUnionRuleCreator> = new Map<
  string,
  SecretLintUnionRuleCreator
>([[recommendedPreset.meta.id, recommendedPreset], ...SUPPLEMENTARY_RULES]);

interface ConfigEntry {
  id: string;
  options?: Record<string, unknown>;
  disabled?: boolean;
  rules?: { id: string; options?: Record<string, unknown>; disabled?: boolean }[];
}

/** secretlint.json (ids and options, as secretlint's own config file) with each id bound to its rule. */
export function coreConfig(json: string, skillId: string): SecretLintCoreConfig {
  const parsed = JSON.parse(json) as { rules?: ConfigEntry[] };
  if (!Array.isArray(parsed.rules)) throw new Error(`skill ${skillId}: secretlint.json has no rules list`);
  const rules = parsed.rules.map((entry) => {
    const rule = KNOWN_RULES.get(entry.id);
    if (!rule) throw new Error(`skill ${skillId}: secretlint.json names an unknown rule ${entry.id}`);
    return { ...entry, rule } as SecretLintCoreConfigUnionRule;
  });
  return { rules };
}

const configs = new Map<string, SecretLintCoreConfig>();

function configFor(skill: CatalogSkill): SecretLintCoreConfig {
  let config = configs.get(skill.hash);
  if (!config) {
    const json = skill.files['secretlint.json'];
    if (json === undefined) throw new Error(`skill ${skill.id}: secretlint.json is missing`);
    config = coreConfig(json, skill.id);
    configs.set(skill.hash, config);
  }
  return config;
}

/** Keys under which secretlint's rules put the found value in a message's data. */
const VALUE_KEYS = new Set(['KEY', 'TOKEN', 'ID', 'CREDENTIAL', 'URI', 'URL']);

/** The found values of a message (none for rules that report a whole file by its name). */
function foundValues(message: SecretLintCoreResultMessage): string[] {
  const data = (message.data ?? {}) as Record<string, unknown>;
  return Object.entries(data)
    .filter(([key, value]) => VALUE_KEYS.has(key) && typeof value === 'string' && value !== '')
    .map(([, value]) => value as string);
}

/** What a message found: its values, or the text its range covers when the rule names none. */
function judgedValues(message: SecretLintCoreResultMessage, content: string): string[] {
  const values = foundValues(message);
  return values.length > 0 ? values : [content.slice(message.range[0], message.range[1])];
}

/**
 * secretlint's core marks a user-timing entry around every rule on every file, and its profiler's
 * observer keeps each mark, scans the kept list on the next one and queues a measure: a list that
 * grows for the life of the process and ~1.4 s of CPU in a 2,000-file review. svc never reads the
 * profile, so marking is switched off where the core calls it (core uses only `mark`).
 */
secretLintProfiler.mark = () => {};

/**
 * The credentials in `content`. `role` is the file's role as the review classified it; without it,
 * the role its path conventionally has.
 */
export async function scanSecrets(
  skill: CatalogSkill,
  path: string,
  content: string,
  role: FileRole = roleOfPath(path),
): Promise<SecretMessage[]> {
  const config = configFor(skill);
  if (isSecretScannerTestMaterial(path)) return [];
  const { messages } = await lintSource({
    source: { filePath: path, content, ext: extname(path), contentType: 'text' },
    // Unmasked, so the found value can be judged; masked below before it leaves this module.
    options: { config, maskSecrets: false },
  });
  const kept: SecretLintCoreResultMessage[] = [];
  for (const m of messages) {
    const judged = judgedValues(m, content);
    if (judged.some((value) => notACredential(value, role) !== null)) continue;
    kept.push(m);
  }
  return oneMessagePerCredential(kept).map((m) => ({
    rule: ruleName(m.ruleId),
    messageId: m.messageId ?? 'secret',
    // Findings are posted on pull requests: never repeat the secret, nor its length.
    message: maskSecrets(m.message, foundValues(m)),
    [FOUND_SECRETS]: judgedValues(m, content),
    line: m.loc.start.line,
    endLine: Math.max(m.loc.start.line, m.loc.end.line),
  }));
}

/** `@secretlint/secretlint-rule-aws` and `svc/secretlint-rule-stripe` report as `aws` and `stripe`. */
const ruleName = (ruleId: string) => ruleId.replace(/^.*\/(?:secretlint-rule-)?/, '');

/**
 * One credential, one finding: where two messages of the same rule cover overlapping text (an
 * `.npmrc` token is both an `_authToken` line and an npm token), the narrower, more specific one.
 */
function oneMessagePerCredential(messages: SecretLintCoreResultMessage[]): SecretLintCoreResultMessage[] {
  const width = (m: SecretLintCoreResultMessage) => m.range[1] - m.range[0];
  const overlap = (a: SecretLintCoreResultMessage, b: SecretLintCoreResultMessage) =>
    a.range[0] < b.range[1] && b.range[0] < a.range[1];
  const byWidth = [...messages].sort((a, b) => width(a) - width(b));
  const kept: SecretLintCoreResultMessage[] = [];
  for (const m of byWidth) {
    if (!kept.some((k) => ruleName(k.ruleId) === ruleName(m.ruleId) && overlap(k, m))) kept.push(m);
  }
  return kept.sort((a, b) => a.range[0] - b.range[0]);
}

/** Severity of a secretlint message: front matter `severity_by_message[messageId]`, else the default. */
/**
 * How a credential is reported: its severity and title. A credential anyone can make up (a key
 * pair, a password; the skill's `throwaway_in_tests` rules) in a test, fixture or example file is
 * most often generated for the test suite, so it is reported at the policy's lower severity and
 * asks to be confirmed throwaway; a live provider's token keeps its severity wherever it is.
 */
export function secretVerdict(
  skill: CatalogSkill,
  message: SecretMessage,
  role: FileRole,
): { severity: Severity; title: string } {
  const what = message.message.replace(/^found\s+/i, '');
  const policy = skill.options.throwaway_in_tests as { rules?: unknown; severity?: unknown } | undefined;
  const throwawayRules = Array.isArray(policy?.rules) ? (policy.rules as unknown[]) : [];
  if (
    TEST_ROLES.has(role) &&
    throwawayRules.includes(message.rule) &&
    SEVERITIES.includes(policy?.severity as Severity)
  ) {
    return {
      severity: policy?.severity as Severity,
      title: `Test fixture credential committed: ${what} (confirm it is throwaway and used by nothing real)`,
    };
  }
  return { severity: secretSeverity(skill, message.messageId), title: `Credential committed: ${what}` };
}

const TEST_ROLES: ReadonlySet<FileRole> = new Set(['test', 'fixture', 'example']);

export function secretSeverity(skill: CatalogSkill, messageId: string): Severity {
  const policy = skill.options.severity_by_message;
  const named =
    typeof policy === 'object' && policy !== null
      ? (policy as Record<string, unknown>)[messageId]
      : undefined;
  return SEVERITIES.includes(named as Severity) ? (named as Severity) : skill.defaultSeverity;
}
