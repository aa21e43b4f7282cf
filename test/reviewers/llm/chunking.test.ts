import { describe, expect, it } from 'vitest';
import { chunkDiff, estimateTokens, renderFile } from '../../../src/reviewers/llm/prompt';
import { addedFile, appFile, file, hunk } from './diff-fixtures';

/** Every added line's new-file number, as rendered (`   12 + …`). */
function renderedAddedLines(text: string, path: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const header = /^=== FILE (\S+) /.exec(line);
    if (header) current = header[1] ?? '';
    const added = /^\s*(\d+) \+ /.exec(line);
    if (added && current === path) out.push(added[1] ?? '');
  }
  return out;
}

describe('chunkDiff', () => {
  it('keeps a small diff in one chunk, lines numbered in the new file', () => {
    const chunks = chunkDiff([appFile()], 10_000);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.paths).toEqual(['src/app.ts']);
    expect(chunks[0]?.text).toContain('=== FILE src/app.ts (modified) ===');
    expect(chunks[0]?.text).toContain('    10 + const y = eval(input);');
    expect(chunks[0]?.text).toContain('       -   old();');
  });

  it('packs whole files into chunks under the budget', () => {
    const files = Array.from({ length: 12 }, (_, i) => addedFile(`src/f${i}.ts`, 40));
    const budget = 2000;
    const chunks = chunkDiff(files, budget);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(budget);
    // Every file lands whole in exactly one chunk.
    expect(chunks.flatMap((c) => c.paths).sort()).toEqual(files.map((f) => f.path).sort());
  });

  it('splits a file larger than the budget by hunks, and a hunk larger than the budget by lines', () => {
    const big = addedFile('src/big.ts', 600);
    const budget = 1500;
    const parts = renderFile(big, budget);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) {
      expect(estimateTokens(part)).toBeLessThanOrEqual(budget);
      expect(part).toMatch(/^=== FILE src\/big\.ts \(added, part \d+ of \d+\) ===/);
    }
    const chunks = chunkDiff([big], budget);
    const lines = chunks.flatMap((c) => renderedAddedLines(c.text, 'src/big.ts'));
    expect(lines).toEqual(Array.from({ length: 600 }, (_, i) => String(i + 1)));
  });

  it('keeps many hunks of one file apart only where it must', () => {
    const hunks = Array.from({ length: 30 }, (_, i) =>
      hunk(i * 100 + 1, i * 100 + 1, [
        ' ctx',
        ...Array.from({ length: 10 }, (_, j) => `+line ${i}.${j} ${'y'.repeat(50)}`),
      ]),
    );
    const chunks = chunkDiff([file('src/many.ts', hunks)], 1200);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(1200);
      // Hunks stay whole: each part has whole multiples of a hunk's 11 lines.
      expect(chunk.text.match(/^@@ .* @@$/gm)?.length).toBeGreaterThan(0);
      expect(chunk.text).not.toContain('(continued)');
    }
    expect(chunks.flatMap((c) => renderedAddedLines(c.text, 'src/many.ts'))).toHaveLength(300);
  });

  it('leaves out binary, skipped, deleted files and files without added lines', () => {
    const binary = { ...appFile(), path: 'img.png', binary: true };
    const skipped = {
      ...appFile(),
      path: 'huge.ts',
      skipped: { code: 'file_too_large', message: 'too large' },
    };
    const deleted = file('old.ts', [hunk(1, 0, ['-gone'])], 'deleted');
    const onlyRemovals = file('trim.ts', [hunk(1, 1, [' keep', '-drop'])]);
    expect(chunkDiff([binary, skipped, deleted, onlyRemovals], 10_000)).toEqual([]);
  });
});
