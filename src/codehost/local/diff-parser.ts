/**
 * Parses the output of one `git diff -z --raw --numstat -p` in a single streaming pass into the
 * diff model (src/core/review.ts).
 *
 * The stream is: NUL-terminated raw records (`:oldmode newmode oldsha newsha status`, path[, path]),
 * NUL-terminated numstat records (one per raw record, same order), one extra NUL, then the patch
 * text. Paths come from the raw records (exact bytes, no quoting); the patch contributes hunks and
 * the binary marker. Patch sections follow raw records in order, one section each, except a type
 * change (symlink ↔ file), which git prints as a deletion section and an addition section.
 *
 * Every hunk line starts with ' ', '+', '-' or '\', so a line starting `diff --git ` always opens a
 * new section: a skipped file's lines are passed over without counting them.
 */
import { isUtf8 } from 'node:buffer';
import { languageForPath } from '../../core/languages';
import type { Diff, DiffFile, DiffLine, FileChange, Hunk, LineRange } from '../../core/review';
import type { Gap } from '../../core/runs';
import type { DiffLimits } from '../types';

interface RawEntry {
  oldMode: string;
  newMode: string;
  status: string;
  /** Path in the old tree (renames and copies), or the only path. */
  src: string;
  dst: string;
  added: number | null;
  deleted: number | null;
}

const NUL = 0;
const LF = 10;
const DIFF_GIT = Buffer.from('diff --git ');
const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const GITLINK = '160000';
const NULL_MODE = '000000';

const decodeName = (bytes: Buffer, onInvalid: () => void): string => {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  onInvalid();
  return bytes.toString('latin1');
};

const CHANGE: Record<string, FileChange> = {
  A: 'added',
  D: 'deleted',
  M: 'modified',
  R: 'renamed',
  C: 'copied',
  T: 'type_changed',
};

/** How git writes a path in a `diff --git` line with core.quotepath=off (C-style when needed). */
export function gitQuotePath(path: string): string {
  const needsQuoting = (code: number) => code < 0x20 || code === 0x7f || code === 0x22 || code === 0x5c;
  let plain = true;
  for (let i = 0; i < path.length && plain; i++) plain = !needsQuoting(path.charCodeAt(i));
  if (plain) return path;
  const escapes: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\t': '\\t',
    '\n': '\\n',
    '\v': '\\v',
    '\f': '\\f',
    '\r': '\\r',
    '"': '\\"',
    '\\': '\\\\',
  };
  let out = '"';
  for (const ch of path) {
    const code = ch.charCodeAt(0);
    out += escapes[ch] ?? (code < 0x20 || code === 0x7f ? `\\${code.toString(8).padStart(3, '0')}` : ch);
  }
  return `${out}"`;
}

interface FileState {
  entry: RawEntry;
  file: DiffFile;
  sections: number;
  /** Lines are passed over (binary, submodule, too large). */
  ignoring: boolean;
  bytes: number;
  hunk: Hunk | null;
  oldNo: number;
  newNo: number;
  lastRange: LineRange | null;
  /** The file is not valid UTF-8: its lines are read as latin1. */
  latin1: boolean;
}

export class GitDiffParser {
  private headerParts: Buffer[] = [];
  private inPatch = false;
  private pending: Buffer[] = [];
  private entries: RawEntry[] = [];
  private next = 0;
  private current: FileState | null = null;
  private readonly files: DiffFile[] = [];
  private readonly gaps: Gap[] = [];
  private readonly tooLarge: string[] = [];
  private readonly nonUtf8 = new Set<string>();
  private readonly submodules: string[] = [];
  private mismatches = 0;

  constructor(
    private readonly base: string,
    private readonly head: string,
    private readonly limits: DiffLimits,
  ) {}

  push(chunk: Buffer): void {
    if (!this.inPatch) {
      const at = this.findHeaderEnd(chunk);
      if (at < 0) {
        this.headerParts.push(chunk);
        return;
      }
      this.headerParts.push(chunk.subarray(0, at));
      this.parseHeader(Buffer.concat(this.headerParts));
      this.headerParts = [];
      this.inPatch = true;
      chunk = chunk.subarray(at + 1);
    }
    let start = 0;
    let nl = chunk.indexOf(LF, start);
    if (nl >= 0 && this.pending.length > 0) {
      this.pending.push(chunk.subarray(0, nl));
      this.line(Buffer.concat(this.pending));
      this.pending = [];
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    while (nl >= 0) {
      this.line(chunk.subarray(start, nl));
      start = nl + 1;
      nl = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }

  /** Finishes the parse; `stderr` is what git said (a skipped rename detection becomes a gap). */
  end(stderr = ''): Diff {
    if (!this.inPatch) {
      const header = Buffer.concat(this.headerParts);
      if (header.length > 0) this.parseHeader(header);
      this.inPatch = true;
    }
    if (this.pending.length > 0) {
      this.line(Buffer.concat(this.pending));
      this.pending = [];
    }
    this.finishFile();
    // Records the patch had no section for (never expected) still become files.
    while (this.next < this.entries.length) {
      this.startFile(this.entries[this.next++] as RawEntry);
      this.finishFile();
    }
    this.summarise(stderr);
    return { base: this.base, head: this.head, files: this.files, gaps: this.gaps };
  }

  /** Index in `chunk` of the NUL that ends the header (the second of two in a row), or -1. */
  private findHeaderEnd(chunk: Buffer): number {
    const last = this.headerParts.at(-1);
    if (last && last.length > 0 && last[last.length - 1] === NUL && chunk[0] === NUL) return 0;
    let at = chunk.indexOf(NUL);
    while (at >= 0) {
      if (chunk[at + 1] === NUL) return at + 1;
      at = chunk.indexOf(NUL, at + 1);
    }
    return -1;
  }

  private parseHeader(header: Buffer): void {
    const tokens: Buffer[] = [];
    let start = 0;
    for (let at = header.indexOf(NUL); at >= 0; at = header.indexOf(NUL, start)) {
      tokens.push(header.subarray(start, at));
      start = at + 1;
    }
    if (start < header.length) tokens.push(header.subarray(start));
    let i = 0;
    while (i < tokens.length && tokens[i]?.[0] === 0x3a /* ':' */) {
      const meta = (tokens[i++] as Buffer).toString('latin1').slice(1).split(' ');
      const [oldMode = NULL_MODE, newMode = NULL_MODE, , , statusScore = 'M'] = meta;
      const status = statusScore.charAt(0);
      const first = this.name(tokens[i++]);
      const second = status === 'R' || status === 'C' ? this.name(tokens[i++]) : first;
      this.entries.push({ oldMode, newMode, status, src: first, dst: second, added: null, deleted: null });
    }
    for (const entry of this.entries) {
      const token = tokens[i++];
      if (!token) break;
      const text = token.toString('latin1');
      const [added, deleted, path] = text.split('\t');
      entry.added = added === '-' || added === undefined ? null : Number(added);
      entry.deleted = deleted === '-' || deleted === undefined ? null : Number(deleted);
      if (path === '') i += 2; // rename/copy: the two paths follow as their own records
    }
  }

  private name(token: Buffer | undefined): string {
    if (!token) return '';
    const name = decodeName(token, () => {});
    if (!isUtf8(token)) this.nonUtf8.add(name);
    return name;
  }

  private line(line: Buffer): void {
    if (
      line[0] === 0x64 /* d */ &&
      line.length >= DIFF_GIT.length &&
      line.compare(DIFF_GIT, 0, DIFF_GIT.length, 0, DIFF_GIT.length) === 0
    ) {
      this.section(line);
      return;
    }
    const state = this.current;
    if (!state || state.ignoring) return;
    const first = line[0];
    if (state.hunk) {
      if (first === 0x20 /* ' ' */ || first === 0x2b /* + */ || first === 0x2d /* - */ || line.length === 0) {
        state.bytes += line.length + 1;
        if (state.bytes > this.limits.maxFileBytes) {
          this.skipTooLarge(state);
          return;
        }
        this.hunkLine(state, state.hunk, line);
        return;
      }
      if (first === 0x5c /* \ No newline at end of file */) return;
    }
    if (first === 0x40 /* @ */) {
      const match = HUNK.exec(line.toString('latin1'));
      if (!match) return;
      const header = this.text(state, line, 0);
      const hunk: Hunk = {
        oldStart: Number(match[1]),
        oldLines: match[2] === undefined ? 1 : Number(match[2]),
        newStart: Number(match[3]),
        newLines: match[4] === undefined ? 1 : Number(match[4]),
        header,
        lines: [],
      };
      state.hunk = hunk;
      state.oldNo = hunk.oldStart;
      state.newNo = hunk.newStart;
      state.file.hunks.push(hunk);
      return;
    }
    if (first === 0x42 /* B */ && line.toString('latin1').startsWith('Binary files ')) {
      this.markBinary(state);
    }
  }

  private hunkLine(state: FileState, hunk: Hunk, line: Buffer): void {
    const first = line[0];
    const text = line.length > 1 ? this.text(state, line, 1) : '';
    let diffLine: DiffLine;
    if (first === 0x2b) {
      const newLine = state.newNo++;
      diffLine = { kind: 'add', text, oldLine: null, newLine };
      state.file.additions++;
      const range = state.lastRange;
      if (range && range.end + 1 === newLine) range.end = newLine;
      else {
        state.lastRange = { start: newLine, end: newLine };
        state.file.changedLines.push(state.lastRange);
      }
    } else if (first === 0x2d) {
      diffLine = { kind: 'del', text, oldLine: state.oldNo++, newLine: null };
      state.file.deletions++;
    } else {
      diffLine = { kind: 'context', text, oldLine: state.oldNo++, newLine: state.newNo++ };
    }
    hunk.lines.push(diffLine);
  }

  /**
   * A line's text: UTF-8 while the file's lines are valid UTF-8; from the first line that is not,
   * the whole file is latin1 (lines read before are converted back, losslessly), so one file is
   * never decoded two ways.
   */
  private text(state: FileState, line: Buffer, from: number): string {
    const body = from === 0 ? line : line.subarray(from);
    if (state.latin1) return body.toString('latin1');
    if (isUtf8(body)) return body.toString('utf8');
    state.latin1 = true;
    this.nonUtf8.add(state.file.path);
    const toLatin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    for (const hunk of state.file.hunks) {
      hunk.header = toLatin1(hunk.header);
      for (const l of hunk.lines) l.text = toLatin1(l.text);
    }
    return body.toString('latin1');
  }

  private section(line: Buffer): void {
    const state = this.current;
    const header = decodeName(line, () => {});
    // A type change prints a second section (the new side) under the same header.
    if (
      state &&
      state.entry.status === 'T' &&
      state.sections === 1 &&
      header === this.expectedHeader(state.entry)
    ) {
      state.sections++;
      state.hunk = null;
      state.lastRange = null;
      return;
    }
    this.finishFile();
    const entry = this.entries[this.next++];
    if (!entry) {
      this.mismatches++;
      return;
    }
    if (header !== this.expectedHeader(entry)) this.mismatches++;
    this.startFile(entry);
  }

  private expectedHeader(entry: RawEntry): string {
    return `diff --git ${gitQuotePath(`a/${entry.src}`)} ${gitQuotePath(`b/${entry.dst}`)}`;
  }

  private startFile(entry: RawEntry): void {
    const change = CHANGE[entry.status] ?? 'modified';
    const oldMode = entry.oldMode === NULL_MODE ? null : entry.oldMode;
    const newMode = entry.newMode === NULL_MODE ? null : entry.newMode;
    const path = change === 'deleted' ? entry.src : entry.dst;
    const submodule = entry.oldMode === GITLINK || entry.newMode === GITLINK;
    const file: DiffFile = {
      path,
      oldPath: change === 'renamed' || change === 'copied' ? entry.src : null,
      change,
      binary: false,
      oldMode,
      newMode,
      language: submodule ? null : languageForPath(path),
      additions: 0,
      deletions: 0,
      changedLines: [],
      hunks: [],
      skipped: null,
    };
    const state: FileState = {
      entry,
      file,
      sections: 1,
      ignoring: false,
      bytes: 0,
      hunk: null,
      oldNo: 0,
      newNo: 0,
      lastRange: null,
      latin1: false,
    };
    this.current = state;
    if (submodule) {
      state.ignoring = true;
      file.skipped = {
        code: 'submodule_change',
        message: `${path} is a submodule; its commit changed, which is not reviewed as lines`,
      };
      this.submodules.push(path);
    } else if (entry.added === null && entry.deleted === null) {
      // numstat's "-\t-" means binary; the patch's "Binary files … differ" line agrees.
      this.markBinary(state);
    } else if ((entry.added ?? 0) + (entry.deleted ?? 0) > this.limits.maxFileChangedLines) {
      this.skipTooLarge(state);
    }
  }

  private markBinary(state: FileState): void {
    const { file } = state;
    state.ignoring = true;
    file.binary = true;
    file.hunks = [];
    file.changedLines = [];
    file.additions = 0;
    file.deletions = 0;
    file.skipped = { code: 'binary_file', message: `${file.path} is binary; it was not diffed` };
  }

  private skipTooLarge(state: FileState): void {
    const { file, entry } = state;
    state.ignoring = true;
    state.hunk = null;
    file.hunks = [];
    file.changedLines = [];
    file.additions = entry.added ?? file.additions;
    file.deletions = entry.deleted ?? file.deletions;
    file.skipped = {
      code: 'file_too_large',
      message:
        `${file.path} changes ${file.additions + file.deletions} lines; over the limit ` +
        `(${this.limits.maxFileChangedLines} changed lines or ${this.limits.maxFileBytes} bytes of patch per file), ` +
        'so it was not diffed',
    };
    this.tooLarge.push(file.path);
  }

  private finishFile(): void {
    const state = this.current;
    if (!state) return;
    this.current = null;
    this.files.push(state.file);
  }

  private summarise(stderr: string): void {
    const list = (paths: string[]) =>
      paths.length <= 10
        ? paths.join(', ')
        : `${paths.slice(0, 10).join(', ')} and ${paths.length - 10} more`;
    if (this.tooLarge.length > 0) {
      this.gaps.push({
        code: 'file_too_large',
        message:
          `${this.tooLarge.length} file(s) exceed the per-file limit (${this.limits.maxFileChangedLines} changed lines ` +
          `or ${this.limits.maxFileBytes} bytes of patch) and were not diffed: ${list(this.tooLarge)}`,
      });
    }
    if (this.nonUtf8.size > 0) {
      this.gaps.push({
        code: 'non_utf8_content',
        message: `${this.nonUtf8.size} file(s) are not valid UTF-8 and were read as latin1: ${list([...this.nonUtf8])}`,
      });
    }
    if (this.submodules.length > 0) {
      this.gaps.push({
        code: 'submodule_change',
        message: `${this.submodules.length} submodule(s) changed commit; submodule contents are not reviewed: ${list(this.submodules)}`,
      });
    }
    if (/rename detection was skipped/i.test(stderr)) {
      this.gaps.push({
        code: 'rename_detection_skipped',
        message:
          'git skipped rename detection (too many files); renamed files appear as a deletion and an addition',
      });
    }
    if (this.mismatches > 0) {
      this.gaps.push({
        code: 'diff_parse_mismatch',
        message: `${this.mismatches} patch section(s) did not match git's file list; their hunks may be missing`,
      });
    }
  }
}
