/**
 * A planted credential never sits in the findings ledger: a finding's anchor (the code it points
 * at) is stored with every credential found in its file masked, as the finding's text already
 * was. A masked anchor is still recognised in the file while the code around the credential
 * remains, so a finding is not marked fixed just because its anchor was masked.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeAnchor } from '../../src/core/review';
import { anchorOccursIn, maskAnchor, SECRET_MASK } from '../../src/core/secret-mask';
import { Worker } from '../../src/engine/worker';
import { type LedgerEntry, reconcileLedger } from '../../src/review/ledger-reconcile';
import { findings } from '../../src/storage/schema';
import { bearer, createProject, createTestApp, type TestApp } from '../helpers/app';
import { makeRepo, makeReposDir, openPullRequest } from '../helpers/git';

// Assembled at run time so this file holds no literal that looks like a credential.
const TOKEN = `gh${'p'}_Qm7Tz2Kp9Vw4Rx8Ny3Lb6Hd1Gf5Jc0SaR4sU`;

describe('masked anchors', () => {
  it('masks each credential, also where the anchor folded its line breaks', () => {
    const key = 'line-one\nline-two';
    const anchor = normalizeAnchor(`const k = '${TOKEN}'; const pem = \`${key}\`;`);
    expect(maskAnchor(anchor, [TOKEN, key])).toBe(
      `const k = '${SECRET_MASK}'; const pem = \`${SECRET_MASK}\`;`,
    );
  });

  it('recognises a masked anchor while the code around the credential remains', () => {
    const stored = `const token = '${SECRET_MASK}';`;
    expect(anchorOccursIn(stored, `a(); const token = '${TOKEN}'; b();`)).toBe(true);
    expect(anchorOccursIn(stored, 'a(); const token = process.env.TOKEN; b();')).toBe(false);
    expect(anchorOccursIn(stored, "const token = ''; b();")).toBe(false);
    expect(anchorOccursIn(SECRET_MASK, `x ${TOKEN} y`)).toBe(false);
    expect(anchorOccursIn('plain()', 'a plain() call')).toBe(true);
  });

  it('marks a masked finding fixed only when its code is gone', () => {
    const entry: LedgerEntry = {
      fingerprint: 'f1',
      status: 'open',
      path: 'src/client.js',
      anchorText: `const token = '${SECRET_MASK}';`,
      reviewers: ['secrets'],
    };
    const paths = new Set(['src/client.js']);
    const still = reconcileLedger([entry], [], () => `const token = '${TOKEN}';\n`, paths);
    expect(still.fixed).toEqual([]);
    const gone = reconcileLedger([entry], [], () => 'const token = process.env.TOKEN;\n', paths);
    expect(gone.fixed).toEqual([entry]);
  });
});

describe('the findings ledger after a review of a planted credential', () => {
  let t: TestApp;
  let worker: Worker;
  let headers: Record<string, string>;

  const review = async (reviewers: string[]) => {
    const started = await t.app.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers,
      payload: { pr: 1, reviewers },
    });
    expect(started.statusCode, started.body).toBe(202);
    for (let i = 0; ; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/reviews/${started.json().id}`, headers });
      const run = res.json().run;
      if (run?.status === 'completed') return;
      if (i > 400 || ['failed', 'canceled'].includes(run?.status)) throw new Error(res.body);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    const reposDir = makeReposDir();
    const repo = makeRepo(reposDir, 'acme/planted', { 'src/app.js': 'export const ok = 1;\n' });
    openPullRequest(
      repo,
      1,
      { 'src/client.js': `export const token = '${TOKEN}';\nexport const run = (q) => eval(q);\n` },
      'client',
    );
    t = await createTestApp({ reposDir, env: { SVC_POLL_MS: '50' } });
    worker = new Worker(t.services.engine, { concurrency: 1 });
    await worker.start();
    headers = { ...bearer(t.workspaceKey), 'project-id': await createProject(t, 'acme/planted') };
    await review(['secrets', 'security']);
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  it('stores the anchor with the credential masked, and the credential nowhere in the row', async () => {
    const rows = await t.services.db.orm.select().from(findings).where(eq(findings.path, 'src/client.js'));
    const secret = rows.find((r) => r.category === 'secrets');
    expect(secret?.anchorText).toBe(`export const token = '${SECRET_MASK}';`);
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) expect(JSON.stringify(row)).not.toContain(TOKEN);
  });

  it('keeps the finding open when a later review without the secrets reviewer reads the file', async () => {
    await review(['security']);
    const [secret] = await t.services.db.orm.select().from(findings).where(eq(findings.category, 'secrets'));
    expect(secret?.status).toBe('open');
  });
});
