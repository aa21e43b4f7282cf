/** Diffs from real git: every kind of change a pull request can carry, with exact line numbers. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCodeHost } from '../../src/codehost/local/local-host';
import type { Diff, DiffFile } from '../../src/core/review';
import { commitFiles, gitIn, makeRepo, makeReposDir, writeFiles } from '../helpers/git';

let reposDir: string;
let host: LocalCodeHost;

beforeAll(() => {
  reposDir = makeReposDir();
  host = new LocalCodeHost(reposDir);
});
afterAll(() => rmSync(reposDir, { recursive: true, force: true }));

const lines = (n: number, prefix = 'line') =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');

let repoCount = 0;
/** A repository with `before` committed on main, then `after` committed on top; the diff between. */
async function diffOf(
  before: Record<string, string | Buffer>,
  after: Record<string, string | Buffer | null>,
  options: {
    limits?: Parameters<LocalCodeHost['getDiff']>[3];
    /** Runs on the base commit's repository before the base is taken (and may commit). */
    prepare?: (dir: string) => void;
    /** Runs after `after` is staged, before it is committed (index-only changes). */
    stage?: (dir: string) => void;
  } = {},
): Promise<{ diff: Diff; dir: string; base: string; head: string }> {
  const name = `acme/diff-${++repoCount}`;
  const dir = makeRepo(reposDir, name, before);
  options.prepare?.(dir);
  const base = gitIn(dir, ['rev-parse', 'HEAD']).trim();
  writeFiles(dir, after);
  gitIn(dir, ['add', '-A']);
  options.stage?.(dir);
  gitIn(dir, ['commit', '-q', '--allow-empty', '-m', 'change']);
  const head = gitIn(dir, ['rev-parse', 'HEAD']).trim();
  const diff = await host.getDiff(name, base, head, options.limits);
  return { diff, dir, base, head };
}

const file = (diff: Diff, path: string): DiffFile => {
  const found = diff.files.find((f) => f.path === path);
  if (!found) throw new Error(`${path} not in diff: ${diff.files.map((f) => f.path).join(', ')}`);
  return found;
};

describe('getDiff on real git', () => {
  it('modified file: hunks with old/new line numbers and changed lines merged into ranges', async () => {
    const before = lines(30);
    const after = before
      .replace('line 3\n', 'line 3\nnew a\nnew b\n')
      .replace('line 10\n', 'line ten\n')
      .replace('line 25\n', '');
    const { diff, base, head } = await diffOf({ 'src/app.ts': before }, { 'src/app.ts': after });
    expect(diff.base).toBe(base);
    expect(diff.head).toBe(head);
    expect(diff.gaps).toEqual([]);
    const f = file(diff, 'src/app.ts');
    expect(f).toMatchObject({
      change: 'modified',
      oldPath: null,
      binary: false,
      oldMode: '100644',
      newMode: '100644',
      language: 'typescript',
      additions: 3,
      deletions: 2,
      skipped: null,
    });
    // Lines 4-5 added after line 3; old line 10 (now 12) replaced; old 25 deleted (no new line).
    expect(f.changedLines).toEqual([
      { start: 4, end: 5 },
      { start: 12, end: 12 },
    ]);
    expect(f.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([
      [1, 13, 1, 15],
      [22, 7, 24, 6],
    ]);
    const first = f.hunks[0];
    expect(first?.header).toBe('@@ -1,13 +1,15 @@');
    expect(first?.lines.slice(2, 6)).toEqual([
      { kind: 'context', text: 'line 3', oldLine: 3, newLine: 3 },
      { kind: 'add', text: 'new a', oldLine: null, newLine: 4 },
      { kind: 'add', text: 'new b', oldLine: null, newLine: 5 },
      { kind: 'context', text: 'line 4', oldLine: 4, newLine: 6 },
    ]);
    expect(first?.lines.filter((l) => l.kind !== 'context')).toEqual([
      { kind: 'add', text: 'new a', oldLine: null, newLine: 4 },
      { kind: 'add', text: 'new b', oldLine: null, newLine: 5 },
      { kind: 'del', text: 'line 10', oldLine: 10, newLine: null },
      { kind: 'add', text: 'line ten', oldLine: null, newLine: 12 },
    ]);
    expect(f.hunks[1]?.lines.find((l) => l.kind === 'del')).toEqual({
      kind: 'del',
      text: 'line 25',
      oldLine: 25,
      newLine: null,
    });
  });

  it('added file: every line is changed', async () => {
    const { diff } = await diffOf({ 'README.md': 'x\n' }, { 'lib/util.py': 'def f():\n    return 1\n' });
    const f = file(diff, 'lib/util.py');
    expect(f).toMatchObject({
      change: 'added',
      oldPath: null,
      oldMode: null,
      newMode: '100644',
      language: 'python',
      additions: 2,
      deletions: 0,
      changedLines: [{ start: 1, end: 2 }],
    });
    expect(f.hunks[0]?.header).toBe('@@ -0,0 +1,2 @@');
  });

  it('rename without edits: oldPath, no hunks, no changed lines', async () => {
    const { diff } = await diffOf(
      { 'old/name.js': lines(20) },
      { 'old/name.js': null, 'new/name.js': lines(20) },
    );
    expect(diff.files).toHaveLength(1);
    expect(file(diff, 'new/name.js')).toMatchObject({
      change: 'renamed',
      oldPath: 'old/name.js',
      language: 'javascript',
      additions: 0,
      deletions: 0,
      changedLines: [],
      hunks: [],
    });
  });

  it('rename with edits: hunks against the old file, changed lines in the new one', async () => {
    const edited = lines(20).replace('line 20\n', 'line twenty\n');
    const { diff } = await diffOf({ 'a.go': lines(20) }, { 'a.go': null, 'b.go': edited });
    const f = file(diff, 'b.go');
    expect(f).toMatchObject({
      change: 'renamed',
      oldPath: 'a.go',
      language: 'go',
      additions: 1,
      deletions: 1,
    });
    expect(f.changedLines).toEqual([{ start: 20, end: 20 }]);
    expect(f.hunks[0]?.lines.filter((l) => l.kind !== 'context')).toEqual([
      { kind: 'del', text: 'line 20', oldLine: 20, newLine: null },
      { kind: 'add', text: 'line twenty', oldLine: null, newLine: 20 },
    ]);
  });

  it('copy of a file changed in the same commit: copied, with oldPath', async () => {
    const { diff } = await diffOf(
      { 'orig.rs': lines(40) },
      { 'orig.rs': `${lines(40)}extra\n`, 'copy.rs': lines(40) },
    );
    expect(file(diff, 'copy.rs')).toMatchObject({ change: 'copied', oldPath: 'orig.rs', changedLines: [] });
    expect(file(diff, 'orig.rs')).toMatchObject({
      change: 'modified',
      changedLines: [{ start: 41, end: 41 }],
    });
  });

  it('copies are not reported when detectCopies is off', async () => {
    const { diff } = await diffOf(
      { 'orig.rs': lines(40) },
      { 'orig.rs': `${lines(40)}extra\n`, 'copy.rs': lines(40) },
      { limits: { detectCopies: false } },
    );
    expect(file(diff, 'copy.rs')).toMatchObject({
      change: 'added',
      oldPath: null,
      changedLines: [{ start: 1, end: 40 }],
    });
  });

  it('deleted file: old path, deletions counted, no changed lines', async () => {
    const { diff } = await diffOf({ 'gone.ts': lines(3), 'keep.ts': 'k\n' }, { 'gone.ts': null });
    expect(diff.files).toHaveLength(1);
    const f = file(diff, 'gone.ts');
    expect(f).toMatchObject({
      change: 'deleted',
      oldPath: null,
      oldMode: '100644',
      newMode: null,
      additions: 0,
      deletions: 3,
      changedLines: [],
      skipped: null,
    });
    expect(f.hunks[0]?.lines.map((l) => [l.kind, l.oldLine, l.newLine])).toEqual([
      ['del', 1, null],
      ['del', 2, null],
      ['del', 3, null],
    ]);
  });

  it('binary file: binary, skipped binary_file, no hunks', async () => {
    const { diff } = await diffOf(
      { 'img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]) },
      { 'img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9]), 'new.bin': Buffer.from([0, 0, 1]) },
    );
    for (const path of ['img.png', 'new.bin']) {
      const f = file(diff, path);
      expect(f).toMatchObject({ binary: true, hunks: [], changedLines: [], additions: 0, deletions: 0 });
      expect(f.skipped?.code).toBe('binary_file');
    }
    expect(file(diff, 'new.bin').change).toBe('added');
    expect(diff.gaps).toEqual([]);
  });

  it('mode change only: old and new mode, nothing to review', async () => {
    const { diff } = await diffOf(
      { 'run.sh': 'echo hi\n' },
      {},
      { stage: (dir) => gitIn(dir, ['update-index', '--chmod=+x', 'run.sh']) },
    );
    expect(file(diff, 'run.sh')).toMatchObject({
      change: 'modified',
      oldMode: '100644',
      newMode: '100755',
      language: 'shell',
      hunks: [],
      changedLines: [],
    });
  });

  it('mode change with an edit keeps both', async () => {
    const { diff } = await diffOf(
      { 'run.sh': 'echo hi\n' },
      { 'run.sh': 'echo hi\necho there\n' },
      { stage: (dir) => gitIn(dir, ['update-index', '--chmod=+x', 'run.sh']) },
    );
    expect(file(diff, 'run.sh')).toMatchObject({
      oldMode: '100644',
      newMode: '100755',
      changedLines: [{ start: 2, end: 2 }],
    });
  });

  it('symlink replaced by a file: type_changed, the new content is changed lines', async () => {
    const { diff } = await diffOf(
      { 'target.txt': 't\n' },
      { 'link.txt': 'now a file\nwith two lines\n' },
      {
        prepare: (dir) => {
          // A symlink committed through the index, so the test does not depend on the filesystem.
          const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], 'target.txt');
          gitIn(dir, ['update-index', '--add', '--cacheinfo', `120000,${blob.trim()},link.txt`]);
          gitIn(dir, ['commit', '-q', '-m', 'symlink']);
        },
      },
    );
    const f = file(diff, 'link.txt');
    expect(f).toMatchObject({
      change: 'type_changed',
      oldMode: '120000',
      newMode: '100644',
      additions: 2,
      deletions: 1,
      changedLines: [{ start: 1, end: 2 }],
    });
    expect(f.hunks.map((h) => h.lines.map((l) => [l.kind, l.text, l.oldLine, l.newLine]))).toEqual([
      [['del', 'target.txt', 1, null]],
      [
        ['add', 'now a file', null, 1],
        ['add', 'with two lines', null, 2],
      ],
    ]);
    expect(diff.gaps).toEqual([]);
  });

  it('file over the changed-line limit: skipped file_too_large, and a gap on the diff', async () => {
    const { diff } = await diffOf(
      { 'small.ts': 'a\n' },
      { 'small.ts': 'a\nb\n', 'big.ts': lines(50) },
      { limits: { maxFileChangedLines: 20 } },
    );
    const big = file(diff, 'big.ts');
    expect(big).toMatchObject({ change: 'added', additions: 50, deletions: 0, hunks: [], changedLines: [] });
    expect(big.skipped?.code).toBe('file_too_large');
    expect(file(diff, 'small.ts')).toMatchObject({ skipped: null, changedLines: [{ start: 2, end: 2 }] });
    expect(diff.gaps).toHaveLength(1);
    expect(diff.gaps[0]?.code).toBe('file_too_large');
    expect(diff.gaps[0]?.message).toContain('big.ts');
  });

  it('file over the byte limit (few, long lines): skipped file_too_large', async () => {
    const long = `${'x'.repeat(5000)}\n`.repeat(3);
    const { diff } = await diffOf(
      { 'a.txt': 'a\n' },
      { 'min.js': long, 'a.txt': 'b\n' },
      { limits: { maxFileBytes: 4096 } },
    );
    const f = file(diff, 'min.js');
    expect(f.skipped?.code).toBe('file_too_large');
    expect(f).toMatchObject({ hunks: [], changedLines: [], additions: 3 });
    expect(file(diff, 'a.txt').skipped).toBeNull();
    expect(diff.gaps.map((g) => g.code)).toEqual(['file_too_large']);
  });

  it('the default limits read a 1,000-line file in full', async () => {
    const { diff } = await diffOf({ 'a.txt': 'a\n' }, { 'gen.py': lines(1000) });
    expect(file(diff, 'gen.py')).toMatchObject({ skipped: null, changedLines: [{ start: 1, end: 1000 }] });
  });

  it('non-UTF-8 content: read as latin1, named in a non_utf8_content gap, never a crash', async () => {
    const latin1 = Buffer.from('caf\xe9\nna\xefve\n', 'latin1');
    // Valid UTF-8 first, then an invalid line: the whole file is read one way (latin1).
    const mixed = Buffer.concat([Buffer.from('ü ok\n', 'utf8'), Buffer.from('bad \xff\n', 'latin1')]);
    const { diff } = await diffOf(
      { 'a.txt': 'a\n' },
      { 'legacy.c': latin1, 'mixed.txt': mixed, 'utf8.ts': 'naïve ✓\n' },
    );
    expect(file(diff, 'legacy.c').hunks[0]?.lines.map((l) => l.text)).toEqual(['café', 'naïve']);
    expect(file(diff, 'legacy.c').changedLines).toEqual([{ start: 1, end: 2 }]);
    expect(file(diff, 'mixed.txt').hunks[0]?.lines.map((l) => l.text)).toEqual([
      Buffer.from('ü ok', 'utf8').toString('latin1'),
      'bad ÿ',
    ]);
    expect(file(diff, 'utf8.ts').hunks[0]?.lines.map((l) => l.text)).toEqual(['naïve ✓']);
    expect(diff.gaps).toHaveLength(1);
    expect(diff.gaps[0]?.code).toBe('non_utf8_content');
    expect(diff.gaps[0]?.message).toContain('legacy.c');
    expect(diff.gaps[0]?.message).toContain('mixed.txt');
    expect(diff.gaps[0]?.message).not.toContain('utf8.ts');
  });

  it('names with spaces, unicode, quotes and tabs keep their exact paths', async () => {
    const names = [
      'dir with space/file name.ts',
      'naïve/文件.py',
      'quote"d.js',
      'tab\there.go',
      'back\\slash.rs',
    ];
    const { diff } = await diffOf(
      { 'keep.txt': 'k\n' },
      Object.fromEntries(names.map((n) => [n, 'one\ntwo\n'])),
    );
    expect(diff.files.map((f) => f.path).sort()).toEqual([...names].sort());
    for (const f of diff.files) expect(f.changedLines).toEqual([{ start: 1, end: 2 }]);
    expect(file(diff, 'naïve/文件.py').language).toBe('python');
    expect(diff.gaps).toEqual([]);
  });

  it('renames between unicode names with spaces', async () => {
    const { diff } = await diffOf({ 'été 1.ts': lines(10) }, { 'été 1.ts': null, 'été 2.ts': lines(10) });
    expect(diff.files).toEqual([
      expect.objectContaining({ path: 'été 2.ts', oldPath: 'été 1.ts', change: 'renamed' }),
    ]);
  });

  it('empty files: added and deleted with no hunks', async () => {
    const added = (await diffOf({ 'a.txt': 'a\n' }, { 'empty.ts': '' })).diff;
    expect(file(added, 'empty.ts')).toMatchObject({
      change: 'added',
      hunks: [],
      changedLines: [],
      additions: 0,
    });
    const deleted = (await diffOf({ 'a.txt': 'a\n', 'was-empty.txt': '' }, { 'was-empty.txt': null })).diff;
    expect(file(deleted, 'was-empty.txt')).toMatchObject({ change: 'deleted', hunks: [], deletions: 0 });
    // Git pairs identical content, empty included: an empty file moved is a rename.
    const moved = (await diffOf({ 'was-empty.txt': '' }, { 'was-empty.txt': null, 'empty.ts': '' })).diff;
    expect(moved.files).toEqual([
      expect.objectContaining({ path: 'empty.ts', oldPath: 'was-empty.txt', change: 'renamed' }),
    ]);
  });

  it('no newline at end of file: the marker is not a line, numbers stay exact', async () => {
    const { diff } = await diffOf({ 'x.txt': 'a\nb\nc' }, { 'x.txt': 'a\nb\nc\nd', 'y.txt': 'only' });
    const x = file(diff, 'x.txt');
    expect(x.hunks[0]?.lines).toEqual([
      { kind: 'context', text: 'a', oldLine: 1, newLine: 1 },
      { kind: 'context', text: 'b', oldLine: 2, newLine: 2 },
      { kind: 'del', text: 'c', oldLine: 3, newLine: null },
      { kind: 'add', text: 'c', oldLine: null, newLine: 3 },
      { kind: 'add', text: 'd', oldLine: null, newLine: 4 },
    ]);
    expect(x.changedLines).toEqual([{ start: 3, end: 4 }]);
    expect(file(diff, 'y.txt')).toMatchObject({ additions: 1, changedLines: [{ start: 1, end: 1 }] });
  });

  it('blank lines and CRLF content are kept as lines', async () => {
    const { diff } = await diffOf({ 'w.txt': 'a\n\nb\n' }, { 'w.txt': 'a\n\nb\n\nc\r\n' });
    const w = file(diff, 'w.txt');
    expect(w.hunks[0]?.lines.map((l) => [l.kind, l.text, l.oldLine, l.newLine])).toEqual([
      ['context', 'a', 1, 1],
      ['context', '', 2, 2],
      ['context', 'b', 3, 3],
      ['add', '', null, 4],
      ['add', 'c\r', null, 5],
    ]);
  });

  it('submodule changes: skipped with submodule_change, and a gap on the diff', async () => {
    const { diff } = await diffOf(
      { 'a.txt': 'a\n' },
      { 'a.txt': 'b\n' },
      {
        stage: (dir) => {
          const commit = gitIn(dir, ['rev-parse', 'HEAD']).trim();
          gitIn(dir, ['update-index', '--add', '--cacheinfo', `160000,${commit},vendor/lib`]);
        },
      },
    );
    const sub = file(diff, 'vendor/lib');
    expect(sub).toMatchObject({
      change: 'added',
      newMode: '160000',
      hunks: [],
      changedLines: [],
      language: null,
    });
    expect(sub.skipped?.code).toBe('submodule_change');
    expect(file(diff, 'a.txt').changedLines).toEqual([{ start: 1, end: 1 }]);
    expect(diff.gaps.map((g) => g.code)).toEqual(['submodule_change']);
  });

  it('git skipping rename detection (too many files) becomes a rename_detection_skipped gap', async () => {
    const before = Object.fromEntries([1, 2, 3].map((i) => [`a${i}.ts`, lines(30, `file ${i}`)]));
    const after = Object.fromEntries(
      [1, 2, 3].flatMap((i) => [
        [`a${i}.ts`, null],
        [`b${i}.ts`, `${lines(30, `file ${i}`)}edit\n`],
      ]),
    );
    const { diff } = await diffOf(before, after, {
      prepare: (dir) => gitIn(dir, ['config', 'diff.renameLimit', '1']),
    });
    expect(diff.files.map((f) => f.change).sort()).toEqual([
      'added',
      'added',
      'added',
      'deleted',
      'deleted',
      'deleted',
    ]);
    expect(diff.gaps.map((g) => g.code)).toEqual(['rename_detection_skipped']);
  });

  it('an empty range is an empty diff', async () => {
    const name = `acme/diff-${++repoCount}`;
    const dir = makeRepo(reposDir, name, { 'a.txt': 'a\n' });
    const sha = gitIn(dir, ['rev-parse', 'HEAD']).trim();
    expect(await host.getDiff(name, sha, sha)).toEqual({ base: sha, head: sha, files: [], gaps: [] });
  });

  it('2,000 files / 100,000 changed lines in one pass, in seconds', async () => {
    const name = `acme/diff-${++repoCount}`;
    const dir = makeRepo(reposDir, name, { 'README.md': 'r\n' });
    const base = gitIn(dir, ['rev-parse', 'HEAD']).trim();
    const body = lines(50, 'const x =');
    const files: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) files[`pkg${i % 20}/file-${i}.ts`] = body;
    const head = commitFiles(dir, files);
    const started = performance.now();
    const diff = await host.getDiff(name, base, head);
    const elapsed = performance.now() - started;
    expect(diff.files).toHaveLength(2000);
    expect(diff.files.reduce((n, f) => n + f.additions, 0)).toBe(100_000);
    expect(diff.files.every((f) => f.changedLines.length === 1 && f.changedLines[0]?.end === 50)).toBe(true);
    expect(elapsed).toBeLessThan(10_000);
  }, 60_000);

  it('the diff is the same when the repository lives at owner/repo.git', async () => {
    const dir = makeRepo(reposDir, 'acme/dotgit.git', { 'a.ts': 'a\n' });
    const base = gitIn(dir, ['rev-parse', 'HEAD']).trim();
    const head = commitFiles(dir, { 'a.ts': 'a\nb\n' });
    const diff = await host.getDiff('acme/dotgit', base, head);
    expect(file(diff, 'a.ts').changedLines).toEqual([{ start: 2, end: 2 }]);
    expect(join(reposDir, 'acme/dotgit.git')).toBe(dir);
  });
});
