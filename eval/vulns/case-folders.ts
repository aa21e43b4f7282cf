/**
 * Eval part 4's material: one folder per published vulnerability under `eval/vulns/cases/<id>/`,
 * holding `case.yml` (which advisory, which class, where the vulnerable statement is), `base/`
 * (the fixed files) and `head/` (the vulnerable files). Reviewing base -> head replays the change
 * that brought the vulnerability in. This module only reads and checks the folders; reviewing
 * them is evaluate-vulns.ts's job.
 *
 * case.yml: `id` (the advisory id, also the folder name), optional `aliases`, `project`,
 * `language`, `class` (the svc rule id that should report it), `summary`, `source` (how to
 * rebuild base/ and head/), and `vulnerable`: `{ path, lines }` in the head files, each line one
 * the change adds (checkVulnCases in evaluate-vulns.ts holds every case to that). Files are
 * copied whole, never trimmed, so line numbers are the published ones.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

export const VULN_CASES_DIR = fileURLToPath(new URL('./cases/', import.meta.url));

export const VULN_LANGUAGES = ['javascript', 'typescript', 'python', 'go', 'java'] as const;
export type VulnLanguage = (typeof VULN_LANGUAGES)[number];

/**
 * The security rule ids a case's class may name: a finding of that rule (in any skill) on a
 * vulnerable line is a hit. git-argument-injection is listed before its rules exist so cases
 * of it can be measured as missed until they do.
 */
export const VULN_CLASSES = [
  'command-injection',
  'code-injection',
  'path-traversal',
  'sql-injection',
  'xss',
  'ssrf',
  'unsafe-deserialization',
  'insecure-random',
  'hard-coded-credentials',
  'weak-hash',
  'weak-cipher',
  'insecure-tls',
  'git-argument-injection',
] as const;
export type VulnClass = (typeof VULN_CLASSES)[number];

const relativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'a path inside the case folder');

const caseSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
    aliases: z.array(z.string().min(1)).optional(),
    project: z.string().min(1),
    language: z.enum(VULN_LANGUAGES),
    class: z.enum(VULN_CLASSES),
    summary: z.string().min(1),
    source: z.string().min(1),
    vulnerable: z
      .array(
        z
          .object({
            path: relativePath,
            lines: z.array(z.number().int().positive()).min(1),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();

export interface VulnCase extends z.infer<typeof caseSchema> {
  /** The case folder (absolute). */
  dir: string;
  /** `<dir>/base`, absent when every involved file exists only in the vulnerable version. */
  baseDir: string | null;
  headDir: string;
}

export interface LoadedCases {
  cases: VulnCase[];
  /** One line per malformed folder: it is left out, and the eval reports the problem. */
  errors: string[];
}

/** Reads every case folder; a folder that does not follow the format is an error, not a case. */
export async function loadVulnCases(dir: string = VULN_CASES_DIR): Promise<LoadedCases> {
  const out: LoadedCases = { cases: [], errors: [] };
  if (!existsSync(dir)) return out;
  const folders = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const folder of folders) {
    const caseDir = join(dir, folder);
    const problems = await checkFolder(caseDir, folder);
    if (typeof problems === 'string') out.errors.push(`${folder}: ${problems}`);
    else out.cases.push(problems);
  }
  return out;
}

/** The case in `caseDir`, or what is wrong with it. */
async function checkFolder(caseDir: string, folder: string): Promise<VulnCase | string> {
  const file = join(caseDir, 'case.yml');
  if (!existsSync(file)) return 'no case.yml';
  let raw: unknown;
  try {
    raw = parseYaml(await readFile(file, 'utf8'));
  } catch (error) {
    return `case.yml is not YAML: ${(error as Error).message.split('\n')[0]}`;
  }
  const parsed = caseSchema.safeParse(raw);
  if (!parsed.success)
    return parsed.error.issues.map((i) => `${i.path.join('.') || 'case.yml'}: ${i.message}`).join('; ');
  const c = parsed.data;
  if (c.id !== folder) return `id ${c.id} is not the folder name`;
  const headDir = join(caseDir, 'head');
  const baseDir = join(caseDir, 'base');
  for (const v of c.vulnerable)
    if (!existsSync(join(headDir, v.path))) return `vulnerable path ${v.path} is not under head/`;
  return { ...c, dir: caseDir, headDir, baseDir: existsSync(baseDir) ? baseDir : null };
}

/** Ids (and aliases) used by more than one case: each vulnerability is measured once. */
export function duplicateIds(cases: VulnCase[]): string[] {
  const seen = new Map<string, string>();
  const dup: string[] = [];
  for (const c of cases)
    for (const id of [c.id, ...(c.aliases ?? [])]) {
      const other = seen.get(id.toUpperCase());
      if (other && other !== c.id) dup.push(`${id} (${other} and ${c.id})`);
      else seen.set(id.toUpperCase(), c.id);
    }
  return dup;
}
