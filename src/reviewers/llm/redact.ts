/**
 * Secrets out of transcript text. A model reviewer's transcript holds the prompt it sent (the diff,
 * which may carry a committed key) and the model's answer (which may quote it); the transcript is
 * read through the API, so both are redacted before they are written:
 * - every value of a credential-like variable in svc's environment (a name with KEY, TOKEN,
 *   SECRET, PASSWORD or CREDENTIAL in it), so svc's own provider keys can never leak;
 * - everything the secrets skill's detectors (secretlint's recommended preset and svc's
 *   supplementary rules, `src/skills/secrets/secretlint.json`) match, without the skill's
 *   "known example value" exemptions: a transcript errs towards hiding.
 */
import { lintSource } from '@secretlint/core';
import type { SecretLintCoreConfig } from '@secretlint/types';
import { catalogSkill } from '../../skills/catalog';
import { coreConfig } from '../builtin/secrets';
import type { Env } from './providers';

export const REDACTED = '[REDACTED]';

const CREDENTIAL_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;
/** Shorter values are too likely to occur by chance ("1", "true") to be replaced everywhere. */
const MIN_SECRET_LENGTH = 8;

/** The values of credential-like variables in `env`, longest first (so no value is cut by another). */
export function environmentSecrets(env: Env): string[] {
  const values = Object.entries(env)
    .filter(([name, value]) => CREDENTIAL_NAME.test(name) && (value?.trim().length ?? 0) >= MIN_SECRET_LENGTH)
    .map(([, value]) => (value ?? '').trim());
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

let config: Promise<SecretLintCoreConfig> | null = null;

function detectors(): Promise<SecretLintCoreConfig> {
  config ??= catalogSkill('secrets').then((skill) => {
    const json = skill?.files['secretlint.json'];
    if (json === undefined)
      throw new Error('the secrets skill (secretlint.json) is missing from the catalog');
    return coreConfig(json, 'secrets');
  });
  config.catch(() => {
    config = null;
  });
  return config;
}

/** `text` with every secret replaced by [REDACTED]. */
export async function redactSecrets(text: string, known: readonly string[]): Promise<string> {
  let out = text;
  for (const value of known) out = out.replaceAll(value, REDACTED);
  const { messages } = await lintSource({
    source: { filePath: 'transcript.txt', content: out, ext: '.txt', contentType: 'text' },
    options: { config: await detectors(), maskSecrets: false },
  });
  // Replace matched ranges from the end, merging overlaps, so earlier offsets stay valid.
  const ranges = messages
    .map((m) => [m.range[0], m.range[1]] as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of ranges) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  for (const [start, end] of merged.reverse()) out = `${out.slice(0, start)}${REDACTED}${out.slice(end)}`;
  return out;
}
