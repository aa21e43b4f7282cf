/** The labelled evaluation `npm run eval` prints, held to its threshold. */
import { describe, expect, it } from 'vitest';
import { evaluate, THRESHOLD } from '../../../eval/evaluate';

describe('builtin reviewers on the labelled cases', () => {
  it('reach the precision and recall threshold in every category', async () => {
    const report = await evaluate();
    expect(report.gaps).toEqual([]);
    expect(Object.keys(report.byCategory).sort()).toEqual(['correctness', 'secrets', 'security']);
    for (const [category, score] of Object.entries(report.byCategory)) {
      expect({ category, misses: report.misses, precision: score.precision >= THRESHOLD }).toMatchObject({
        category,
        precision: true,
      });
      expect({ category, misses: report.misses, recall: score.recall >= THRESHOLD }).toMatchObject({
        category,
        recall: true,
      });
    }
  });
});
