/**
 * `svc serve` and `svc worker` compile the builtin rules once started (prepareBuiltinSkills), so
 * the first review does not spend its first second on it in the server's thread. After the
 * preparation, a review's compileSkill is answered without a turn of the event loop; a skill
 * nobody prepared still needs several.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { compileSkill, prepareBuiltinSkills } from '../../../src/reviewers/builtin/engine';
import { type CatalogSkill, loadCatalog } from '../../../src/skills/catalog';

/** True when `work` settles before the event loop's next turn. */
async function settlesThisTurn(work: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void work.then(() => {
    settled = true;
  });
  await nextTurn();
  return settled;
}

describe('prepareBuiltinSkills', () => {
  it('compiles every rule skill of the catalog ahead of the first review', async () => {
    const catalog = await loadCatalog();
    const ruleSkills = catalog.filter((s) => s.engine === 'ast-grep');
    expect(ruleSkills.length).toBeGreaterThan(1);

    // A copy under another hash stands for a skill nobody prepared: compiling it takes turns.
    const unprepared: CatalogSkill = { ...(ruleSkills[0] as CatalogSkill), hash: 'not-prepared' };
    expect(await settlesThisTurn(compileSkill(unprepared))).toBe(false);

    await prepareBuiltinSkills(loadCatalog);
    for (const skill of ruleSkills) expect(await settlesThisTurn(compileSkill(skill))).toBe(true);
  });
});
