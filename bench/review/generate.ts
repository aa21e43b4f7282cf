/**
 * A seeded, deterministic repository change for `npm run bench:review`: a base commit, then a head
 * commit that changes `files` files with `lines` added or changed lines in all (per git's own
 * numstat). The code is JavaScript, TypeScript and Python made of ordinary pieces (functions,
 * classes, async code, config tables), mostly clean; a few percent of the pieces carry what the
 * builtin rules flag (eval, exec with input, empty catch, debugger, console.log, md5, pickle.loads,
 * an AWS key id). A few Markdown and JSON files change too.
 *
 * Same seed, same options: same files, same commits, same SHAs (fixed author and dates).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface GenerateOptions {
  /** Files the head commit changes (added or modified). */
  files: number;
  /** Added or changed lines across those files. */
  lines: number;
  seed: number;
  /**
   * Pack the objects after committing (default), as in a clone or a fetched mirror; unpacked,
   * git reads 4,000+ loose objects and the diff and file reads take about three times as long.
   */
  pack?: boolean;
  /**
   * The share of new pieces that carry something a rule flags (default 0.025, a few percent);
   * 1 makes every new piece a finding, for a review with tens of thousands of them.
   */
  flagRate?: number;
}

export interface GeneratedChange {
  dir: string;
  base: string;
  head: string;
  /** From `git diff --numstat base head`. */
  filesChanged: number;
  added: number;
  removed: number;
  /** Head-side files by kind. */
  byKind: Record<Kind, number>;
  /** Lines of head-side changed files by kind (whole files, not just the change). */
  linesByKind: Record<Kind, number>;
  /** Pieces planted that a builtin rule is meant to flag, by what they are. */
  planted: Record<string, number>;
  newFiles: number;
  modifiedFiles: number;
  packed: boolean;
  generateMs: number;
  commitMs: number;
}

type Kind = 'ts' | 'js' | 'py' | 'md' | 'json';

// ---- seeded randomness -----------------------------------------------------------------------

class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0 || 1;
  }
  /** mulberry32: [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const NOUNS = [
  'order',
  'invoice',
  'customer',
  'account',
  'session',
  'payment',
  'cart',
  'product',
  'shipment',
  'report',
  'ticket',
  'user',
  'team',
  'project',
  'task',
  'event',
  'message',
  'channel',
  'document',
  'asset',
  'price',
  'discount',
  'review',
  'comment',
  'upload',
  'job',
  'queue',
  'metric',
  'alert',
  'rule',
] as const;
const VERBS = [
  'load',
  'save',
  'build',
  'parse',
  'format',
  'validate',
  'compute',
  'merge',
  'sync',
  'fetch',
  'resolve',
  'render',
  'apply',
  'collect',
  'normalize',
  'filter',
  'group',
  'score',
  'schedule',
  'archive',
] as const;
const FIELDS = [
  'id',
  'name',
  'status',
  'total',
  'createdAt',
  'updatedAt',
  'ownerId',
  'amount',
  'currency',
  'tags',
  'count',
  'limit',
  'offset',
  'region',
  'priority',
] as const;
const PKGS = [
  'billing',
  'catalog',
  'accounts',
  'search',
  'notifications',
  'reports',
  'inventory',
  'shipping',
  'auth',
  'analytics',
  'admin',
  'checkout',
] as const;

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Unique-ish identifiers: a counter keeps names (and so changed lines) distinct across the repo. */
class Names {
  private n = 0;
  constructor(private readonly rng: Rng) {}
  id(): number {
    return ++this.n;
  }
  fn(): string {
    return `${this.rng.pick(VERBS)}${cap(this.rng.pick(NOUNS))}${this.id()}`;
  }
  type(): string {
    return `${cap(this.rng.pick(NOUNS))}${cap(this.rng.pick(['record', 'view', 'input', 'state', 'options']))}${this.id()}`;
  }
  field(): string {
    return this.rng.pick(FIELDS);
  }
  noun(): string {
    return this.rng.pick(NOUNS);
  }
}

// ---- pieces of code --------------------------------------------------------------------------

/** What a flagged piece is, for the `planted` counts. */
type Flag =
  | 'eval'
  | 'exec-with-input'
  | 'empty-catch'
  | 'debugger'
  | 'console.log'
  | 'md5'
  | 'pickle.loads'
  | 'aws-key-id';

interface Piece {
  lines: string[];
  flag?: Flag;
  /** Imports the piece needs at the top of its file. */
  imports?: string[];
}

const DEFAULT_FLAG_RATE = 0.025;

function awsKeyId(rng: Rng): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let s = 'AKIA';
  for (let i = 0; i < 16; i++) s += alphabet[rng.int(0, alphabet.length - 1)];
  return s;
}

function statementsJs(rng: Rng, names: Names, count: number, indent: string, ts: boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const v = `${names.noun()}${names.id()}`;
    const f = names.field();
    switch (rng.int(0, 5)) {
      case 0:
        out.push(`${indent}const ${v} = input.${f} ?? ${rng.int(0, 100)};`);
        break;
      case 1:
        out.push(`${indent}if (${v}Count > ${rng.int(1, 50)}) {`);
        out.push(`${indent}  result.push({ key: '${v}', value: ${v}Count * ${rng.int(2, 9)} });`);
        out.push(`${indent}}`);
        out.unshift(`${indent}let ${v}Count = ${rng.int(0, 10)};`);
        break;
      case 2:
        out.push(`${indent}for (const item of items) {`);
        out.push(`${indent}  if (!item.${f}) continue;`);
        out.push(`${indent}  totals.set(item.${f}, (totals.get(item.${f}) ?? 0) + ${rng.int(1, 5)});`);
        out.push(`${indent}}`);
        break;
      case 3:
        out.push(
          `${indent}const ${v} = items.filter((x${ts ? ': Item' : ''}) => x.${f} !== undefined).map((x) => x.${f});`,
        );
        break;
      case 4:
        out.push(`${indent}const ${v} = \`${names.noun()}:\${input.${f}}:${rng.int(0, 999)}\`;`);
        break;
      default:
        out.push(
          `${indent}// ${cap(names.noun())} ${rng.pick(VERBS)}s before ${names.noun()} ${names.id()}.`,
        );
    }
  }
  return out;
}

function tsPiece(rng: Rng, names: Names, ts: boolean, flagged: boolean): Piece {
  const t = (s: string) => (ts ? s : '');
  const fn = names.fn();
  const type = names.type();
  if (flagged) {
    const flag = rng.pick<Flag>(['eval', 'exec-with-input', 'empty-catch', 'debugger', 'console.log', 'md5']);
    switch (flag) {
      case 'eval':
        return {
          flag,
          lines: [
            `export function ${fn}(expression${t(': string')}, scope${t(': Record<string, number>')}) {`,
            `  const names = Object.keys(scope).join(', ');`,
            `  return eval(\`(function (\${names}) { return \${expression}; })\`)(...Object.values(scope));`,
            '}',
          ],
        };
      case 'exec-with-input':
        return {
          flag,
          imports: ["import { exec } from 'node:child_process';"],
          lines: [
            `export function ${fn}(branch${t(': string')})${t(': Promise<string>')} {`,
            '  return new Promise((resolve, reject) => {',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of generated code
            '    exec(`git log --oneline ${branch}`, (error, stdout) => (error ? reject(error) : resolve(stdout)));',
            '  });',
            '}',
          ],
        };
      case 'empty-catch':
        return {
          flag,
          lines: [
            `export async function ${fn}(path${t(': string')}) {`,
            '  let raw = null;',
            '  try {',
            '    raw = await readConfig(path);',
            '  } catch (error) {}',
            '  return raw ?? {};',
            '}',
          ],
        };
      case 'debugger':
        return {
          flag,
          lines: [
            `export function ${fn}(items${t(': Item[]')}) {`,
            '  const sorted = [...items].sort((a, b) => a.priority - b.priority);',
            '  debugger;',
            '  return sorted.slice(0, 10);',
            '}',
          ],
        };
      case 'console.log':
        return {
          flag,
          lines: [
            `export function ${fn}(input${t(': Input')}) {`,
            `  console.log('${fn}', input.id);`,
            '  return { ...input, seen: true };',
            '}',
          ],
        };
      default:
        return {
          flag: 'md5',
          imports: ["import { createHash } from 'node:crypto';"],
          lines: [
            `export function ${fn}(password${t(': string')}, salt${t(': string')}) {`,
            "  return createHash('md5').update(salt + password).digest('hex');",
            '}',
          ],
        };
    }
  }
  switch (rng.int(0, 5)) {
    case 0: {
      const fields = Array.from({ length: rng.int(3, 8) }, () => names.field());
      const lines = ts
        ? [
            `export interface ${type} {`,
            ...[...new Set(fields)].map(
              (f) =>
                `  ${f}${rng.chance(0.3) ? '?' : ''}: ${rng.pick(['string', 'number', 'boolean', 'string[]', 'Date'])};`,
            ),
            '}',
            '',
          ]
        : [`/** @typedef {object} ${type} */`, ''];
      lines.push(
        `export function ${fn}(input${t(`: Partial<${type}>`)}, items${t(': Item[]')})${t(': Entry[]')} {`,
        `  const result${t(': Entry[]')} = [];`,
        `  const totals = new Map${t('<string, number>')}();`,
        ...statementsJs(rng, names, rng.int(2, 6), '  ', ts),
        '  return result;',
        '}',
      );
      return { lines };
    }
    case 1: {
      const methods = rng.int(2, 4);
      const lines = [
        `export class ${type}Service {`,
        `  ${t('private readonly ')}cache = new Map${t('<string, Item>')}();`,
        '',
        ts
          ? '  constructor(private readonly store: Store, private readonly logger: Logger) {}'
          : '  constructor(store, logger) {',
        ...(ts ? [] : ['    this.store = store;', '    this.logger = logger;', '  }']),
      ];
      for (let m = 0; m < methods; m++) {
        const name = names.fn();
        if (rng.chance(0.5)) {
          lines.push(
            '',
            `  async ${name}(id${t(': string')})${t(': Promise<Item | null>')} {`,
            '    const hit = this.cache.get(id);',
            '    if (hit) return hit;',
            `    const row = await this.store.get('${names.noun()}', id);`,
            '    if (!row) return null;',
            '    this.cache.set(id, row);',
            `    this.logger.debug({ id }, '${name} loaded');`,
            '    return row;',
            '  }',
          );
        } else {
          lines.push(
            '',
            `  ${name}(items${t(': Item[]')}, input${t(': Input')})${t(': Entry[]')} {`,
            `    const result${t(': Entry[]')} = [];`,
            `    const totals = new Map${t('<string, number>')}();`,
            ...statementsJs(rng, names, rng.int(1, 4), '    ', ts),
            '    return result;',
            '  }',
          );
        }
      }
      lines.push('}');
      return { lines };
    }
    case 2:
      return {
        lines: [
          `export async function ${fn}(client${t(': HttpClient')}, ids${t(': string[]')}, options = { retries: ${rng.int(1, 5)} }) {`,
          `  const out${t(': Item[]')} = [];`,
          '  for (const id of ids) {',
          '    let attempt = 0;',
          '    for (;;) {',
          '      try {',
          `        const res = await client.get(\`/api/${names.noun()}s/\${encodeURIComponent(id)}\`);`,
          '        out.push(res.body);',
          '        break;',
          '      } catch (error) {',
          '        if (++attempt > options.retries) throw error;',
          `        await new Promise((r) => setTimeout(r, ${rng.int(10, 500)} * attempt));`,
          '      }',
          '    }',
          '  }',
          '  return out;',
          '}',
        ],
      };
    case 3: {
      const keys = rng.int(3, 9);
      return {
        lines: [
          `export const ${snake(fn).toUpperCase()}_DEFAULTS = {`,
          ...Array.from(
            { length: keys },
            () =>
              `  ${names.field()}${names.id()}: ${rng.chance(0.5) ? rng.int(0, 1000) : `'${names.noun()}'`},`,
          ),
          `}${t(' as const')};`,
        ],
      };
    }
    case 4:
      return {
        lines: [
          `export const ${fn} = async (items${t(': Item[]')}, limit = ${rng.int(2, 16)}) => {`,
          `  const results${t(': unknown[]')} = [];`,
          '  let next = 0;',
          '  const worker = async () => {',
          '    while (next < items.length) {',
          '      const item = items[next++];',
          `      results.push(await ${names.fn()}(item));`,
          '    }',
          '  };',
          '  await Promise.all(Array.from({ length: limit }, worker));',
          '  return results;',
          '};',
        ],
      };
    default:
      return {
        lines: [
          `export function ${fn}(value${t(': unknown')})${t(`: value is ${type}`)} {`,
          "  if (typeof value !== 'object' || value === null) return false;",
          `  const v = value${t(' as Record<string, unknown>')};`,
          `  return typeof v.${names.field()} === 'string' && typeof v.${names.field()} === 'number';`,
          '}',
        ],
      };
  }
}

function statementsPy(rng: Rng, names: Names, count: number, indent: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const v = `${names.noun()}_${names.id()}`;
    const f = snake(names.field());
    switch (rng.int(0, 4)) {
      case 0:
        out.push(`${indent}${v} = payload.get("${f}", ${rng.int(0, 100)})`);
        break;
      case 1:
        out.push(`${indent}if len(items) > ${rng.int(1, 50)}:`);
        out.push(`${indent}    result.append({"key": "${v}", "value": len(items) * ${rng.int(2, 9)}})`);
        break;
      case 2:
        out.push(`${indent}for item in items:`);
        out.push(`${indent}    if not item.get("${f}"):`);
        out.push(`${indent}        continue`);
        out.push(`${indent}    totals[item["${f}"]] = totals.get(item["${f}"], 0) + ${rng.int(1, 5)}`);
        break;
      case 3:
        out.push(`${indent}${v} = [x["${f}"] for x in items if "${f}" in x]`);
        break;
      default:
        out.push(
          `${indent}# ${cap(names.noun())} is ${rng.pick(VERBS)}d before ${names.noun()} ${names.id()}.`,
        );
    }
  }
  return out;
}

function pyPiece(rng: Rng, names: Names, flagged: boolean): Piece {
  const fn = snake(names.fn());
  const type = names.type();
  if (flagged) {
    const flag = rng.pick<Flag>(['eval', 'exec-with-input', 'empty-catch', 'md5', 'pickle.loads']);
    switch (flag) {
      case 'eval':
        return {
          flag,
          lines: [
            `def ${fn}(expression, scope):`,
            '    """Evaluates a formula from the request."""',
            '    return eval(expression, {}, scope)',
            '',
          ],
        };
      case 'exec-with-input':
        return {
          flag,
          imports: ['import os'],
          lines: [
            `def ${fn}(branch):`,
            '    os.system(f"git log --oneline {branch} > /tmp/log.txt")',
            '    with open("/tmp/log.txt") as fh:',
            '        return fh.read()',
            '',
          ],
        };
      case 'empty-catch':
        return {
          flag,
          lines: [
            `def ${fn}(path):`,
            '    data = {}',
            '    try:',
            '        data = load_config(path)',
            '    except Exception:',
            '        pass',
            '    return data',
            '',
          ],
        };
      case 'md5':
        return {
          flag,
          imports: ['import hashlib'],
          lines: [
            `def ${fn}(password, salt):`,
            '    return hashlib.md5((salt + password).encode()).hexdigest()',
            '',
          ],
        };
      default:
        return {
          flag: 'pickle.loads',
          imports: ['import pickle'],
          lines: [
            `def ${fn}(blob):`,
            '    session = pickle.loads(blob)',
            '    return session.get("user")',
            '',
          ],
        };
    }
  }
  switch (rng.int(0, 4)) {
    case 0:
      return {
        lines: [
          `def ${fn}(payload, items):`,
          `    """${cap(rng.pick(VERBS))}s the ${names.noun()} entries of a payload."""`,
          '    result = []',
          '    totals = {}',
          ...statementsPy(rng, names, rng.int(2, 6), '    '),
          '    return result',
          '',
        ],
      };
    case 1: {
      const lines = [
        '@dataclass',
        `class ${type}:`,
        ...Array.from(
          new Set(Array.from({ length: rng.int(2, 6) }, () => snake(names.field()))),
          (f) =>
            `    ${f}: ${rng.pick(['str', 'int', 'float', 'bool', 'list[str]', 'Optional[str] = None'])}`,
        ),
        '',
      ];
      // Dataclass fields with defaults must come last.
      const fields = lines.slice(2, -1).sort((a, b) => Number(a.includes('=')) - Number(b.includes('=')));
      return {
        lines: [...lines.slice(0, 2), ...fields, ''],
        imports: ['from dataclasses import dataclass', 'from typing import Optional'],
      };
    }
    case 2: {
      const lines = [
        `class ${type}Repository:`,
        '    def __init__(self, db, logger):',
        '        self.db = db',
        '        self.logger = logger',
        '        self._cache = {}',
        '',
      ];
      for (let m = 0; m < rng.int(1, 3); m++) {
        const name = snake(names.fn());
        if (rng.chance(0.5)) {
          lines.push(
            `    async def ${name}(self, key):`,
            '        if key in self._cache:',
            '            return self._cache[key]',
            `        row = await self.db.fetch_one("${names.noun()}s", key)`,
            '        if row is None:',
            '            return None',
            '        self._cache[key] = row',
            `        self.logger.debug("${name} %s", key)`,
            '        return row',
            '',
          );
        } else {
          lines.push(
            `    def ${name}(self, payload, items):`,
            '        result = []',
            '        totals = {}',
            ...statementsPy(rng, names, rng.int(1, 4), '        '),
            '        return result',
            '',
          );
        }
      }
      return { lines };
    }
    case 3:
      return {
        imports: ['import asyncio'],
        lines: [
          `async def ${fn}(client, ids, retries=${rng.int(1, 5)}):`,
          '    out = []',
          '    for key in ids:',
          '        for attempt in range(retries + 1):',
          '            try:',
          `                out.append(await client.get(f"/api/${names.noun()}s/{key}"))`,
          '                break',
          '            except TimeoutError:',
          '                if attempt == retries:',
          '                    raise',
          `                await asyncio.sleep(${rng.int(1, 9) / 10} * (attempt + 1))`,
          '    return out',
          '',
        ],
      };
    default: {
      const keys = rng.int(3, 9);
      return {
        lines: [
          `${fn.toUpperCase()}_DEFAULTS = {`,
          ...Array.from(
            { length: keys },
            () =>
              `    "${snake(names.field())}_${names.id()}": ${rng.chance(0.5) ? rng.int(0, 1000) : `"${names.noun()}"`},`,
          ),
          '}',
          '',
        ],
      };
    }
  }
}

/** Exactly `n` lines (n ≥ 1) of plain declarations, to land a file on its line budget. */
function filler(kind: Kind, names: Names, rng: Rng, n: number): string[] {
  const one = () => {
    const name = `${names.noun()}_${names.field()}_${names.id()}`;
    return kind === 'py'
      ? `${name.toUpperCase()} = ${rng.int(0, 9999)}`
      : `export const ${name.toUpperCase()} = ${rng.int(0, 9999)};`;
  };
  if (n < 3) return Array.from({ length: n }, one);
  const table = `${names.noun()}_limits_${names.id()}`.toUpperCase();
  const entries = Array.from({ length: n - 2 }, () => {
    const key = `${snake(names.field())}_${names.id()}`;
    return kind === 'py' ? `    "${key}": ${rng.int(0, 9999)},` : `  ${key}: ${rng.int(0, 9999)},`;
  });
  return kind === 'py' ? [`${table} = {`, ...entries, '}'] : [`export const ${table} = {`, ...entries, '};'];
}

// ---- files -----------------------------------------------------------------------------------

interface Line {
  text: string;
  /** Added or changed by the head commit. */
  fresh: boolean;
}

interface FileSpec {
  path: string;
  kind: Kind;
  isNew: boolean;
  /** Added/changed lines this file is to get. */
  budget: number;
}

function header(kind: Kind, rng: Rng, pkg: string): string[] {
  if (kind === 'py') {
    return [
      `"""${cap(pkg)}: ${rng.pick(VERBS)} and ${rng.pick(VERBS)} ${rng.pick(NOUNS)}s."""`,
      'from __future__ import annotations',
      '',
      'import logging',
      '',
      'log = logging.getLogger(__name__)',
      '',
    ];
  }
  const lines = [`// ${cap(pkg)}: ${rng.pick(VERBS)} and ${rng.pick(VERBS)} ${rng.pick(NOUNS)}s.`];
  if (kind === 'ts')
    lines.push(`import type { Entry, HttpClient, Input, Item, Logger, Store } from '../types';`);
  lines.push(`import { readConfig } from '../config${kind === 'ts' ? '' : '.js'}';`, '');
  return lines;
}

function piece(kind: Kind, rng: Rng, names: Names, flagged: boolean): Piece {
  return kind === 'py' ? pyPiece(rng, names, flagged) : tsPiece(rng, names, kind === 'ts', flagged);
}

function withImports(lines: Line[], imports: Set<string>, existing: Set<string>): Line[] {
  const missing = [...imports].filter((i) => !existing.has(i));
  if (missing.length === 0) return lines;
  // After the header's last import (Python's `from __future__` must stay first).
  let at = 1;
  lines.forEach((l, i) => {
    if (/^(import|from) /.test(l.text)) at = i + 1;
  });
  return [...lines.slice(0, at), ...missing.map((text) => ({ text, fresh: true })), ...lines.slice(at)];
}

function codeFile(spec: FileSpec, rng: Rng, names: Names, planted: Record<string, number>, flagRate: number) {
  const pkg = spec.path.split('/')[1] ?? 'app';
  const baseLines: string[] = [];
  const baseImports = new Set<string>();
  // The base version: a header and a few clean pieces (none for a new file).
  const blocks: Line[][] = [];
  if (!spec.isNew) {
    baseLines.push(...header(spec.kind, rng, pkg));
    for (let i = rng.int(2, 6); i > 0; i--) {
      const p = piece(spec.kind, rng, names, false);
      for (const imp of p.imports ?? []) baseImports.add(imp);
      blocks.push([...p.lines, ''].map((text) => ({ text, fresh: false })));
    }
  }
  // The head version: base pieces, some lines edited, new pieces inserted until the budget is met.
  let budget = spec.budget;
  const headImports = new Set<string>();
  const head: Line[][] = blocks.map((b) => b.slice());
  const basePrefix = withImports(
    baseLines.map((text) => ({ text, fresh: false })),
    baseImports,
    new Set(),
  );
  let prefix: Line[] = spec.isNew
    ? header(spec.kind, rng, pkg).map((text) => ({ text, fresh: true }))
    : basePrefix.map((l) => ({ text: l.text, fresh: false }));
  if (spec.isNew) budget -= prefix.length;
  // Change one line in about half the existing pieces (one line added, one removed).
  for (const block of head) {
    if (budget <= 4 || !rng.chance(0.5)) continue;
    const candidates = block.map((l, i) => (l.text.trim() === '' ? -1 : i)).filter((i) => i >= 0);
    const i = rng.pick(candidates);
    const line = block[i];
    if (!line) continue;
    const changed = /\b\d+\b/.test(line.text)
      ? line.text.replace(/\b\d+\b/, (d) => String(Number(d) + rng.int(1, 97)))
      : `${line.text} ${spec.kind === 'py' ? '#' : '//'} reviewed ${names.id()}`;
    block[i] = { text: changed, fresh: true };
    budget -= 1;
  }
  if (spec.kind !== 'py' && budget > 4 && rng.chance(0.004)) {
    planted['aws-key-id'] = (planted['aws-key-id'] ?? 0) + 1;
    head.push(
      [`export const S3_UPLOAD_KEY_ID = '${awsKeyId(rng)}';`, ''].map((text) => ({ text, fresh: true })),
    );
    budget -= 2;
  }
  while (budget > 0) {
    const p = piece(spec.kind, rng, names, rng.chance(flagRate));
    const importsNeeded = (p.imports ?? []).filter((x) => !baseImports.has(x) && !headImports.has(x));
    const cost = p.lines.length + 1 + importsNeeded.length;
    let block: Line[];
    if (cost > budget) {
      block = [...filler(spec.kind, names, rng, Math.max(1, budget - 1)), ''].map((text) => ({
        text,
        fresh: true,
      }));
      if (budget === 1) block = block.slice(0, 1);
    } else {
      for (const imp of importsNeeded) headImports.add(imp);
      if (p.flag) planted[p.flag] = (planted[p.flag] ?? 0) + 1;
      block = [...p.lines, ''].map((text) => ({ text, fresh: true }));
    }
    budget -= block.length + (cost > budget ? 0 : importsNeeded.length);
    head.splice(rng.int(0, head.length), 0, block);
  }
  prefix = withImports(prefix, headImports, baseImports);
  const baseText = spec.isNew ? null : `${[...basePrefix, ...blocks.flat()].map((l) => l.text).join('\n')}\n`;
  const headText = `${[...prefix, ...head.flat()].map((l) => l.text).join('\n')}\n`;
  return { baseText, headText };
}

function markdownFile(spec: FileSpec, rng: Rng, names: Names) {
  const para = () =>
    `The ${names.noun()} service ${rng.pick(VERBS)}s each ${names.noun()} before it ${rng.pick(VERBS)}s the ${names.noun()} (${names.id()}).`;
  const base = spec.isNew ? null : `# ${cap(names.noun())} guide\n\n${para()}\n\n## Usage\n\n${para()}\n`;
  const added: string[] = [];
  while (added.length < spec.budget) {
    if (rng.chance(0.2)) added.push(`## ${cap(names.noun())} ${names.id()}`);
    else if (rng.chance(0.3)) added.push(`- \`${names.fn()}\`: ${para()}`);
    else added.push(para());
  }
  const head = `${base ?? ''}${added.slice(0, spec.budget).join('\n')}\n`;
  return { baseText: base, headText: head };
}

function jsonFile(spec: FileSpec, rng: Rng, names: Names) {
  const entry = () =>
    `  "${names.noun()}_${names.id()}": ${rng.chance(0.5) ? rng.int(0, 1000) : `"${names.noun()}"`},`;
  const baseEntries = spec.isNew ? [] : Array.from({ length: rng.int(3, 8) }, entry);
  // The head adds entries; the last base line (no comma change needed: "version" stays last).
  const added = Array.from({ length: Math.max(0, spec.budget) }, entry);
  const render = (entries: string[]) => `{\n${entries.join('\n')}\n  "version": 1\n}\n`;
  return { baseText: spec.isNew ? null : render(baseEntries), headText: render([...baseEntries, ...added]) };
}

// ---- the repository --------------------------------------------------------------------------

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'svc bench',
  GIT_AUTHOR_EMAIL: 'bench@svc.invalid',
  GIT_COMMITTER_NAME: 'svc bench',
  GIT_COMMITTER_EMAIL: 'bench@svc.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function git(cwd: string, args: string[], date?: string): string {
  return execFileSync('git', args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, ...GIT_ENV, ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}) },
  }).toString();
}

/** Spreads `total` over `n` weights, each at least `min`, summing exactly to `total`. */
function spread(total: number, weights: number[], min: number): number[] {
  const n = weights.length;
  const rest = Math.max(0, total - min * n);
  const sum = weights.reduce((a, b) => a + b, 0) || 1;
  const out = weights.map((w) => min + Math.floor((w / sum) * rest));
  let left = total - out.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % n, left--) out[i] = (out[i] as number) + 1;
  return out;
}

export function generateChange(dir: string, options: GenerateOptions): GeneratedChange {
  const t0 = performance.now();
  const rng = new Rng(options.seed);
  const names = new Names(rng);
  const planted: Record<string, number> = {};

  // Which files: mostly code, a few docs and configs.
  const specs: FileSpec[] = [];
  const docs = Math.max(1, Math.round(options.files * 0.025));
  const configs = Math.max(1, Math.round(options.files * 0.025));
  const code = Math.max(0, options.files - docs - configs);
  const kinds: Kind[] = [];
  for (let i = 0; i < code; i++) {
    const r = rng.next();
    kinds.push(r < 0.4 ? 'ts' : r < 0.7 ? 'js' : 'py');
  }
  for (let i = 0; i < docs; i++) kinds.push('md');
  for (let i = 0; i < configs; i++) kinds.push('json');
  // Lines per file: skewed (a few large changes, many small), docs and configs light.
  const weights = kinds.map((k) => (k === 'md' || k === 'json' ? 0.3 : 0.2 + rng.next() ** 3 * 4));
  const budgets = spread(options.lines, weights, 1);
  kinds.forEach((kind, i) => {
    const pkg = rng.pick(PKGS);
    const stem = `${names.noun()}_${rng.pick(VERBS)}_${i}`;
    const path =
      kind === 'py'
        ? rng.chance(0.15)
          ? `tests/${pkg}/test_${stem}.py`
          : `app/${pkg}/${stem}.py`
        : kind === 'md'
          ? `docs/${pkg}/${stem}.md`
          : kind === 'json'
            ? `config/${pkg}/${stem}.json`
            : `${rng.chance(0.8) ? 'src' : 'lib'}/${pkg}/${stem.replace(/_/g, '-')}${rng.chance(0.1) ? '.test' : ''}.${kind}`;
    specs.push({ path, kind, isNew: rng.chance(0.2), budget: budgets[i] as number });
  });

  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  const byKind: Record<Kind, number> = { ts: 0, js: 0, py: 0, md: 0, json: 0 };
  const linesByKind: Record<Kind, number> = { ts: 0, js: 0, py: 0, md: 0, json: 0 };
  const heads: { path: string; text: string }[] = [];
  // Files the change does not touch, so the base is a repository rather than only the change.
  const untouched = Math.round(options.files / 4);
  for (let i = 0; i < untouched; i++) {
    const kind = rng.pick<Kind>(['ts', 'js', 'py']);
    const lines = header(kind, rng, 'common');
    for (let j = rng.int(2, 5); j > 0; j--) lines.push(...piece(kind, rng, names, false).lines, '');
    const path = `${kind === 'py' ? 'app' : 'src'}/common/${names.noun()}_${i}.${kind}`;
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `${lines.join('\n')}\n`);
  }
  writeFileSync(
    join(dir, 'README.md'),
    '# bench shop\n\nA generated repository for `npm run bench:review`.\n',
  );
  for (const spec of specs) {
    const made =
      spec.kind === 'md'
        ? markdownFile(spec, rng, names)
        : spec.kind === 'json'
          ? jsonFile(spec, rng, names)
          : codeFile(spec, rng, names, planted, options.flagRate ?? DEFAULT_FLAG_RATE);
    if (made.baseText !== null) {
      mkdirSync(dirname(join(dir, spec.path)), { recursive: true });
      writeFileSync(join(dir, spec.path), made.baseText);
    }
    heads.push({ path: spec.path, text: made.headText });
    byKind[spec.kind]++;
    linesByKind[spec.kind] += made.headText.split('\n').length - 1;
  }
  const generated = performance.now();
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'base'], '2026-01-01T00:00:00Z');
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  git(dir, ['checkout', '-q', '-b', 'feature']);
  for (const h of heads) {
    mkdirSync(dirname(join(dir, h.path)), { recursive: true });
    writeFileSync(join(dir, h.path), h.text);
  }
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'the change under review'], '2026-01-02T00:00:00Z');
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  git(dir, ['checkout', '-q', 'main']);
  if (options.pack !== false) git(dir, ['gc', '-q', '--prune=now']);
  let added = 0;
  let removed = 0;
  let filesChanged = 0;
  for (const row of git(dir, ['diff', '--numstat', '--no-renames', base, head]).split('\n')) {
    const [a, r] = row.split('\t');
    if (!row) continue;
    filesChanged++;
    added += Number(a) || 0;
    removed += Number(r) || 0;
  }
  return {
    dir,
    base,
    head,
    filesChanged,
    added,
    removed,
    byKind,
    linesByKind,
    planted,
    newFiles: specs.filter((s) => s.isNew).length,
    packed: options.pack !== false,
    modifiedFiles: specs.filter((s) => !s.isNew).length,
    generateMs: generated - t0,
    commitMs: performance.now() - generated,
  };
}
