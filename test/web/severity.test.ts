/** The console's one finding order (web/src/severity.ts): P0 first, then file, then line. */
import { describe, expect, it } from 'vitest';
import type { Severity } from '../../web/src/api';
import { sortedBySeverity } from '../../web/src/severity';

const f = (severity: Severity, path: string, line: number) => ({ severity, path, line });

describe('sortedBySeverity', () => {
  it('lists P0 before P1 before P2, then by file and line, without changing the input', () => {
    const input = [
      f('P2', 'a.js', 1),
      f('P1', 'b.js', 9),
      f('P0', 'z.js', 3),
      f('P0', 'a.js', 10),
      f('P0', 'a.js', 2),
    ];
    const copy = [...input];
    expect(sortedBySeverity(input)).toEqual([
      f('P0', 'a.js', 2),
      f('P0', 'a.js', 10),
      f('P0', 'z.js', 3),
      f('P1', 'b.js', 9),
      f('P2', 'a.js', 1),
    ]);
    expect(input).toEqual(copy);
  });
});
