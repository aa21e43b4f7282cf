/**
 * The material repository knowledge is derived from: the tree's paths, which of them are the
 * repository's own (not vendored, generated, a fixture, an example, docs or tests), and the parsed
 * texts of the few configuration files read, each parse failure reported once as a gap.
 */
import { parse as parseToml } from 'smol-toml';
import { parseDocument } from 'yaml';
import { type FileRole, type GitAttributeRule, parseGitAttributes, roleOfPath } from '../core/file-roles';
import { REPO_KNOWLEDGE_FILE } from '../core/repo-knowledge';

export interface KnowledgeGap {
  code: string;
  message: string;
}

export type Json = Record<string, unknown>;

export const GIT_ATTRIBUTES = '.gitattributes';

export const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);
export const dirname = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
/** `dir` joined with `name`; the root is ''. */
export const joinPath = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);
export const depth = (path: string) => path.split('/').length - 1;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A nested field (`a.b.c`) of a parsed document, or undefined. */
export function field(doc: unknown, ...keys: string[]): unknown {
  let at: unknown = doc;
  for (const key of keys) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return at;
}

export function stringField(doc: unknown, ...keys: string[]): string | null {
  const value = field(doc, ...keys);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** The role a directory gives every file in it, whatever the file's name (the root: production). */
export function directoryRole(
  dir: string,
  attributes: readonly GitAttributeRule[] = [],
  cache?: Map<string, FileRole>,
): FileRole {
  const known = cache?.get(dir);
  if (known) return known;
  // A probe name no naming convention matches: only the directory decides.
  const role = roleOfPath(joinPath(dir, '__svc_probe__'), { attributes });
  cache?.set(dir, role);
  return role;
}

/**
 * Whether a configuration file at `path` describes the repository itself: it sits in a directory
 * of production code or tooling (so not under node_modules/, vendor/, fixtures/, examples/, docs/,
 * test/, dist/, ...). A package.json under test/fixtures/ describes a fixture, not the repository.
 */
export function isOwnConfig(path: string, attributes: readonly GitAttributeRule[] = []): boolean {
  const role = directoryRole(dirname(path), attributes);
  return role === 'production' || role === 'tooling';
}

/** Sources shared by the derivation's parts. */
export class Sources {
  readonly pathSet: ReadonlySet<string>;
  readonly attributes: GitAttributeRule[];
  /** The wanted files this derivation may read (own configuration files only). */
  readonly files: readonly string[];
  private readonly parsed = new Map<string, unknown>();
  private readonly dirRoles = new Map<string, FileRole>();
  private byName: Map<string, string[]> | null = null;

  constructor(
    readonly paths: readonly string[],
    private readonly texts: ReadonlyMap<string, string | null>,
    wanted: readonly string[],
    readonly gaps: KnowledgeGap[],
  ) {
    this.pathSet = new Set(paths);
    this.attributes = parseGitAttributes(this.text(GIT_ATTRIBUTES) ?? '');
    // .gitattributes may mark more directories vendored or generated than the conventions do.
    this.files = wanted
      .filter((p) => p === REPO_KNOWLEDGE_FILE || p === GIT_ATTRIBUTES || this.isOwn(p))
      .sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  }

  has(path: string): boolean {
    return this.pathSet.has(path);
  }

  isOwn(path: string): boolean {
    const role = directoryRole(dirname(path), this.attributes, this.dirRoles);
    return role === 'production' || role === 'tooling';
  }

  roleOf(path: string): FileRole {
    return roleOfPath(path, { attributes: this.attributes });
  }

  dirRole(dir: string): FileRole {
    return directoryRole(dir, this.attributes, this.dirRoles);
  }

  /** Wanted files whose basename is one of `names`, shallowest first. */
  named(...names: string[]): string[] {
    return this.files.filter((p) => names.includes(basename(p)));
  }

  /** Any of the tree's paths (read or not) with one of these basenames in the repository's own directories, shallowest first. */
  ownFilesNamed(names: readonly string[]): string[] {
    if (!this.byName) {
      this.byName = new Map();
      for (const p of this.paths) {
        const name = basename(p);
        const list = this.byName.get(name);
        if (list) list.push(p);
        else this.byName.set(name, [p]);
      }
    }
    return names
      .flatMap((n) => this.byName?.get(n) ?? [])
      .filter((p) => this.isOwn(p))
      .sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  }

  /** The text of a file, or null when it was not read (the gap is reported by deriveKnowledge). */
  text(path: string): string | null {
    return this.texts.get(path) ?? null;
  }

  json(path: string): Json | null {
    return this.parse(path, () => {
      const text = this.text(path);
      if (text === null) return null;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        // JSONC (biome.jsonc, tsconfig.json) allows comments and trailing commas; plain JSON first.
        try {
          value = JSON.parse(stripJsonComments(text));
        } catch {
          throw error;
        }
      }
      if (!isObject(value)) throw new Error('not a JSON object');
      return value;
    });
  }

  toml(path: string): Json | null {
    return this.parse(path, () => {
      const text = this.text(path);
      return text === null ? null : (parseToml(text) as Json);
    });
  }

  /** A YAML document as plain data; a document that does not parse is null and a gap (`code`). */
  yaml(path: string, code = 'knowledge_file_invalid'): unknown {
    return this.parse(
      path,
      () => {
        const text = this.text(path);
        if (text === null) return null;
        const doc = parseDocument(text, { prettyErrors: false });
        const [error] = doc.errors;
        if (error) throw new Error(error.message.split('\n')[0]);
        return doc.toJS({ maxAliasCount: 100 }) as unknown;
      },
      code,
    );
  }

  /** An INI file (setup.cfg, tox.ini) as sections of keys; continuation lines join their key. */
  ini(path: string): Map<string, Map<string, string>> | null {
    return this.parse(path, () => {
      const text = this.text(path);
      return text === null ? null : parseIni(text);
    });
  }

  private parse<T>(path: string, read: () => T | null, code = 'knowledge_file_invalid'): T | null {
    if (this.parsed.has(path)) return this.parsed.get(path) as T | null;
    let value: T | null = null;
    try {
      value = read();
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      this.gaps.push({ code, message: `${path} could not be parsed (${reason}); nothing was read from it` });
    }
    this.parsed.set(path, value);
    return value;
  }
}

/** Removes `//` and `/* *\/` comments and trailing commas outside strings (biome.jsonc, tsconfig). */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}

export function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let section: Map<string, string> | null = null;
  let lastKey: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw) || raw.trim() === '') continue;
    const header = /^\[([^\]]+)\]\s*$/.exec(raw.trim());
    if (header && !/^\s/.test(raw)) {
      section = new Map();
      sections.set((header[1] as string).trim(), section);
      lastKey = null;
      continue;
    }
    if (!section) continue;
    if (/^\s/.test(raw) && lastKey) {
      section.set(lastKey, `${section.get(lastKey) ?? ''}\n${raw.trim()}`.trim());
      continue;
    }
    const kv = /^([^=:]+)[=:](.*)$/.exec(raw);
    if (!kv) continue;
    lastKey = (kv[1] as string).trim().toLowerCase().replace(/-/g, '_');
    section.set(lastKey, (kv[2] as string).trim());
  }
  return sections;
}

/** The first line that is neither blank nor a comment (`.nvmrc`, `.python-version`). */
export function firstLine(text: string): string | null {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line !== '') return line;
  }
  return null;
}
