/**
 * The secrets skill: secretlint with the recommended preset (AWS access key ids switched on)
 * over every changed text file. The preset's configuration lives in the skill folder
 * (`secretlint.json`), so it is part of the skill's hash.
 */
import { createEngine } from '@secretlint/node';
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
    const config = skill.files.find((f) => f.path === 'secretlint.json');
    if (!config) throw new Error(`skill ${skill.id}: secretlint.json is missing`);
    engine = createEngine({
      formatter: 'json',
      color: false,
      // Findings are posted on pull requests: never repeat the secret itself.
      maskSecrets: true,
      configFileJSON: JSON.parse(config.bytes.toString('utf8')),
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

export async function scanSecrets(
  skill: CatalogSkill,
  path: string,
  content: string,
): Promise<SecretMessage[]> {
  const engine = await engineFor(skill);
  const { output } = await engine.executeOnContent({ content, filePath: path });
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

/** Severity of a secretlint message: front matter `severity.by_message[messageId]`, else the default. */
export function secretSeverity(skill: CatalogSkill, messageId: string): Severity {
  const policy = skill.options.severity_by_message;
  const named =
    typeof policy === 'object' && policy !== null
      ? (policy as Record<string, unknown>)[messageId]
      : undefined;
  return SEVERITIES.includes(named as Severity) ? (named as Severity) : skill.defaultSeverity;
}
