/** The base's files for rule reviewers: decoded, read once per path per review, a failed read not kept. */
import { describe, expect, it } from 'vitest';
import { baseReader } from '../../src/review/base-reader';

describe('baseReader', () => {
  it('reads each path once across the skills that ask, and decodes it', async () => {
    const asked: string[][] = [];
    const read = baseReader(async (paths) => {
      asked.push([...paths]);
      return new Map(paths.map((p) => [p, p === 'gone.js' ? null : Buffer.from(`// ${p}\n`)]));
    });
    const [first, second] = await Promise.all([read(['a.js', 'b.js']), read(['b.js', 'gone.js'])]);
    expect([...first]).toEqual([
      ['a.js', '// a.js\n'],
      ['b.js', '// b.js\n'],
    ]);
    expect([...second]).toEqual([
      ['b.js', '// b.js\n'],
      ['gone.js', null],
    ]);
    expect(asked).toEqual([['a.js', 'b.js'], ['gone.js']]);
  });

  it('asks again after a failed read', async () => {
    let calls = 0;
    const read = baseReader(async (paths) => {
      calls++;
      if (calls === 1) throw new Error('git is gone');
      return new Map(paths.map((p) => [p, Buffer.from('x')]));
    });
    await expect(read(['a.js'])).rejects.toThrow('git is gone');
    expect([...(await read(['a.js']))]).toEqual([['a.js', 'x']]);
    expect(calls).toBe(2);
  });
});
