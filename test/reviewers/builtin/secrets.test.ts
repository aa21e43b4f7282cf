/**
 * The secrets skill: what secretlint and the supplementary rules find, which found values stay
 * quiet as known examples, and that the pinned secretlint packages accept Node 20.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { secretLintProfiler } from '@secretlint/profiler';
import { describe, expect, it } from 'vitest';
import { snippetDiffFile } from '../../../eval/evaluate';
import { runBuiltinSkill } from '../../../src/reviewers/builtin/engine';
import { isSecretScannerTestMaterial, notACredential } from '../../../src/reviewers/builtin/secret-examples';
import { SUPPLEMENTARY_RULES } from '../../../src/reviewers/builtin/secret-rules';
import { coreConfig, scanSecrets, secretSeverity } from '../../../src/reviewers/builtin/secrets';
import { type CatalogSkill, catalogSkill } from '../../../src/skills/catalog';

const secretsSkill = async (): Promise<CatalogSkill> => {
  const skill = await catalogSkill('secrets');
  if (!skill) throw new Error('no catalog skill secrets');
  return skill;
};

/**
 * Made-up values at each rule's shape, assembled at run time so this file holds no literal that
 * looks like a credential. The bodies are fixed pseudo-random text: no words, runs or counting.
 */
const BODY = 'Qm7Tz2Kp9Vw4Rx8Ny3Lb6Hd1Gf5Jc0Sa';
const fake = {
  awsKeyId: `AKIA${'Q3ZT7WX2KV9MB4NP'}`,
  stripeLive: `sk_${'live'}_${BODY}`,
  stripeTest: `sk_${'test'}_${BODY}`,
  stripePublishable: `pk_${'live'}_${BODY}`,
  github: `gh${'p'}_${BODY}R4sU`,
  npm: `np${'m'}_${BODY}W8eZ`,
  google: `AI${'za'}Sy${BODY}T`,
  cloudflare: `cf${'ut'}_${BODY}Ue4Yi7Oa${'3f9c0b1e'}`,
  tailscale: `tskey-${'auth'}-kT3vN8qW2xR5-${BODY}`,
  githubApp: `gh${'s'}_8123456_eyJhbGciOi.eyJpc3MiOi${BODY}.Sg8Vn2Lq`,
};

/** A PEM block around `body` (64-character lines). */
const pem = (kind: string, body: string) =>
  `-----BEGIN ${kind}-----\n${(body.match(/.{1,64}/g) ?? []).join('\n')}\n-----END ${kind}-----`;
const base64 = (length: number, seed: string) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  let x = [...seed].reduce((n, c) => n * 31 + c.charCodeAt(0), 7) >>> 0;
  while (out.length < length) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += alphabet[(x >>> 16) % 64];
  }
  return out;
};

const scan = async (path: string, content: string) => scanSecrets(await secretsSkill(), path, content);
const rulesOf = async (path: string, content: string) => (await scan(path, content)).map((m) => m.rule);

describe('configuration', () => {
  it('names every supplementary rule in secretlint.json and binds every id to a rule', async () => {
    const skill = await secretsSkill();
    const json = skill.files['secretlint.json'] as string;
    const ids = (JSON.parse(json) as { rules: { id: string }[] }).rules.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining([...SUPPLEMENTARY_RULES.keys()]));
    const config = coreConfig(json, 'secrets');
    expect(config.rules.map((r) => r.rule.meta.id)).toEqual(ids);
  });

  it('refuses a configuration naming a rule it does not have', () => {
    const json = JSON.stringify({ rules: [{ id: '@secretlint/secretlint-rule-no-such-rule' }] });
    expect(() => coreConfig(json, 'secrets')).toThrow(
      /unknown rule @secretlint\/secretlint-rule-no-such-rule/,
    );
  });

  it('pins secretlint packages whose engines accept the Node 20 the project runs on', () => {
    const require = createRequire(import.meta.url);
    const project = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const pinned = Object.keys(project.dependencies).filter((name) => name.startsWith('@secretlint/'));
    expect(pinned.sort()).toEqual([
      '@secretlint/core',
      '@secretlint/profiler',
      '@secretlint/secretlint-rule-preset-recommend',
      '@secretlint/types',
    ]);
    for (const name of pinned) {
      const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
        version: string;
        engines?: { node?: string };
      };
      expect(project.dependencies[name], name).toBe(manifest.version);
      const floor = /^>=\s*(\d+)/.exec(manifest.engines?.node ?? '>=0');
      expect(Number(floor?.[1]), `${name} engines ${manifest.engines?.node}`).toBeLessThanOrEqual(20);
    }
  });
});

describe('what is found', () => {
  it('reports the providers the 12.0.0 preset lacks, under secretlint 13 rule names', async () => {
    const text = [
      `STRIPE_KEY=${fake.stripeLive}`,
      `CF_API_TOKEN=${fake.cloudflare}`,
      `TS_AUTHKEY=${fake.tailscale}`,
      `INSTALLATION_TOKEN=${fake.githubApp}`,
      `MAPS_KEY=${fake.google}`,
    ].join('\n');
    const found = await scan('deploy/.env', text);
    expect(found.map((m) => [m.rule, m.messageId, m.line])).toEqual([
      ['stripe', 'STRIPE_SECRET_KEY_LIVE', 1],
      ['cloudflare', 'CLOUDFLARE_USER_API_TOKEN', 2],
      ['tailscale', 'TAILSCALE_AUTH_KEY', 3],
      ['github', 'GITHUB_TOKEN', 4],
      ['google-api-key', 'GOOGLE_API_KEY', 5],
    ]);
    const messages = JSON.stringify(found);
    for (const value of [fake.stripeLive, fake.cloudflare, fake.tailscale, fake.githubApp, fake.google]) {
      expect(messages).not.toContain(value);
    }
  });

  it('does not report a Stripe publishable key, which is meant for browsers', async () => {
    expect(await rulesOf('web/checkout.ts', `loadStripe('${fake.stripePublishable}');`)).toEqual([]);
  });

  it('reports short EC and Ed25519 private keys the preset misses, and a long RSA key once', async () => {
    const ec = pem('EC PRIVATE KEY', `MHcCAQEEI${base64(151, 'ec')}`);
    const ed25519 = pem('PRIVATE KEY', `MC4CAQAwBQYDK2VwBCIEI${base64(43, 'ed')}`);
    const rsa = pem('RSA PRIVATE KEY', `MIIEpAIBAAKCAQEA${base64(1572, 'rsa')}`);
    expect(await rulesOf('keys/signing.pem', ec)).toEqual(['privatekey']);
    expect(await rulesOf('config/keys.json', JSON.stringify({ key: ed25519 }))).toEqual(['privatekey']);
    expect(await rulesOf('deploy/id_rsa', rsa)).toEqual(['privatekey']);
  });

  it('does not take a private key placeholder or a public key for a private key', async () => {
    const placeholder = '-----BEGIN EC PRIVATE KEY-----\n...\n-----END EC PRIVATE KEY-----';
    const publicKey = pem('PUBLIC KEY', `MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA${base64(348, 'pub')}`);
    expect(await rulesOf('docs/keys.md', placeholder)).toEqual([]);
    expect(await rulesOf('src/verify.ts', publicKey)).toEqual([]);
  });

  it('reports one finding for an npm token the .npmrc rule and the token rule both see', async () => {
    const found = await scan('.npmrc', `//registry.npmjs.org/:_authToken=${fake.npm}\n`);
    expect(found.map((m) => [m.rule, m.line])).toEqual([['npm', 1]]);
  });

  it('does not report a Google API key in a Firebase web configuration', async () => {
    const firebase = `initializeApp({ apiKey: '${fake.google}', authDomain: 'shop.firebaseapp.com' });`;
    expect(await rulesOf('web/src/firebase.ts', firebase)).toEqual([]);
    expect(await rulesOf('android/app/google-services.json', `{"current_key": "${fake.google}"}`)).toEqual(
      [],
    );
  });
});

describe('severity', () => {
  const drafts = async (path: string, text: string) =>
    (
      await runBuiltinSkill(await secretsSkill(), [{ diff: snippetDiffFile(path, text), content: text }], {
        reviewerId: 'secrets',
        signal: new AbortController().signal,
      })
    ).findings.map((f) => [f.rule, f.severity]);

  it('rates live keys P0 and Stripe test-mode and Google API keys P1', async () => {
    const text = `LIVE=${fake.stripeLive}\nTEST=${fake.stripeTest}\nMAPS=${fake.google}\n`;
    expect(await drafts('src/config.env', text)).toEqual([
      ['secrets/stripe', 'P0'],
      ['secrets/stripe', 'P1'],
      ['secrets/google-api-key', 'P1'],
    ]);
    const skill = await secretsSkill();
    expect(secretSeverity(skill, 'AWSAccountID')).toBe('P2');
    expect(secretSeverity(skill, 'GITHUB_TOKEN')).toBe('P0');
  });

  it('keeps a real-looking credential P0 in tests, fixtures and docs', async () => {
    for (const path of ['test/payments.test.ts', 'spec/fixtures/cassette.yml', 'docs/deploy.md']) {
      expect(await drafts(path, `const key = '${fake.stripeLive}';\n`), path).toEqual([
        ['secrets/stripe', 'P0'],
      ]);
    }
  });
});

describe('throwaway credentials in tests', () => {
  const found = async (path: string, text: string) =>
    (
      await runBuiltinSkill(await secretsSkill(), [{ diff: snippetDiffFile(path, text), content: text }], {
        reviewerId: 'secrets',
        signal: new AbortController().signal,
      })
    ).findings.map((f) => ({ rule: f.rule, severity: f.severity, title: f.title }));
  const hostKey = pem('EC PRIVATE KEY', `MHcCAQEEI${base64(151, 'host')}`);
  const url = 'DB="postgres://shop:Kq7Vw2Nz9Rt4@db.acme.internal:5432/shop"\n';

  it('rates a private key or a password URL in a test, fixture or example file P2, asking to confirm it is throwaway', async () => {
    for (const path of [
      'src/test/resources/ssh/host_key',
      'tests/_support/tls.pem',
      'spec/fixtures/keys/id_ecdsa',
      'examples/server/key.pem',
    ]) {
      expect(await found(path, hostKey), path).toEqual([
        {
          rule: 'secrets/privatekey',
          severity: 'P2',
          title: expect.stringMatching(/^Test fixture credential committed: .*confirm it is throwaway/),
        },
      ]);
    }
    const [inTest] = await found('test/db_test.py', url);
    expect(inTest?.severity).toBe('P2');
  });

  it('keeps the same key P0 in production code, and a live provider token P0 in a test', async () => {
    expect((await found('deploy/host_key', hostKey)).map((f) => f.severity)).toEqual(['P0']);
    expect((await found('config/prod.py', url)).map((f) => f.severity)).toEqual(['P0']);
    const live = await found('tests/_support/github.ts', `const token = '${fake.github}';\n`);
    expect(live.map((f) => [f.rule, f.severity])).toEqual([['secrets/github', 'P0']]);
    expect(live[0]?.title).toMatch(/^Credential committed/);
  });
});

describe('known example values stay quiet', () => {
  it.each([
    ['AWS documented key id', 'AKIAIOSFODNN7EXAMPLE'],
    ['AWS documented secret', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
    ['Stripe API reference key', `sk_${'test'}_4eC39HqLyjWDarjtT1zdp7dc`],
    ['GitHub docs token', `gh${'p'}_16C7e42F292c6912E7710c838347Ae178B4a`],
    ['word in the value', `sk_${'live'}_ExampleKeyQm7Tz2Kp9Vw4Rx8N`],
    ['upper-case word', `gh${'p'}_${BODY.slice(0, 26)}DUMMYTOKEN`],
    ['your-key placeholder', `sk_${'live'}_yourSecretKeyGoesHereQm7Tz`],
    ['masked with x', `sk_${'live'}_${'x'.repeat(24)}`],
    ['zeroed', `gh${'p'}_${'0'.repeat(36)}`],
    ['counting', 'AKIA1234567890ABCDEF'],
  ])('%s', async (_name, value) => {
    expect(await rulesOf('src/config.ts', `const credential = '${value}';\n`)).toEqual([]);
  });

  it('an angle-bracket placeholder in .npmrc', async () => {
    expect(await rulesOf('.npmrc', '//npm.pkg.github.com/:_authToken=<your-token>\n')).toEqual([]);
  });

  it('URL credentials for a local server or the image default login, not a shared host', async () => {
    const password = 'Kq7Vw2Nz9Rt4';
    expect(await rulesOf('compose.yml', `DB=postgres://shop:${password}@localhost:5432/shop`)).toEqual([]);
    expect(await rulesOf('compose.yml', 'DB=postgres://postgres:postgres@db:5432/app')).toEqual([]);
    expect(
      await rulesOf('config/prod.py', `DB="postgres://shop:${password}@db.acme.internal:5432/shop"`),
    ).toEqual(['database-connection-string']);
  });

  it('test words only in tests and fixtures', async () => {
    const token = `gh${'p'}_mockTokenForTheClient${BODY.slice(0, 15)}`;
    expect(await rulesOf('test/client.test.ts', `const token = '${token}';`)).toEqual([]);
    expect(await rulesOf('tests/fixtures/event.json', `{"token": "${token}"}`)).toEqual([]);
    expect(await rulesOf('src/client.ts', `const token = '${token}';`)).toEqual(['github']);
  });

  it('Stripe test-mode prefix is not a test word', async () => {
    expect(await rulesOf('test/billing.test.ts', `const key = '${fake.stripeTest}';`)).toEqual(['stripe']);
  });
});

describe('notACredential', () => {
  it('counts a short word only when written as a word, not in the mixed case of random text', () => {
    expect(notACredential('Qm7FakeTz2Kp9Vw4', 'production')).not.toBeNull();
    expect(notACredential('Qm7FAKETz2Kp9Vw4', 'production')).not.toBeNull();
    expect(notACredential('Qm7fAkETz2Kp9Vw4', 'production')).toBeNull();
  });

  it('reports a value free of every marker', () => {
    expect(notACredential(fake.stripeLive, 'production')).toBeNull();
    expect(notACredential(fake.stripeLive, 'test')).toBeNull();
  });
});

describe('secret scanner test material', () => {
  it.each([
    ['packages/@secretlint/secretlint-rule-stripe/test/snapshots/live/input.txt', true],
    ['tools/gitleaks/testdata/repos/small/api.go', true],
    ['third_party/detect-secrets/test_data/each_secret.py', true],
    ['scanners/trufflehog/pkg/detectors/stripe/stripe_test.go', true],
    ['vendor/trufflehog/pkg/detectors/stripe/stripe.go', false],
    ['ci/gitleaks/config.toml', false],
    ['test/fixtures/secretlint-report.json', false],
    ['src/secrets/test/keys.ts', false],
  ])('%s: %s', (path, expected) => {
    expect(isSecretScannerTestMaterial(path)).toBe(expected);
  });

  it('drops everything found there, and only there', async () => {
    const text = `key = "${fake.stripeLive}"\n`;
    expect(await rulesOf('packages/secretlint-rule-stripe/test/fixtures/input.txt', text)).toEqual([]);
    expect(await rulesOf('packages/billing/test/fixtures/input.txt', text)).toEqual(['stripe']);
  });
});

describe('secretlint profiler', () => {
  it('leaves no user-timing mark or profiler entry behind a scan', async () => {
    const skill = await secretsSkill();
    const before = performance.getEntriesByType('mark').length;
    for (let i = 0; i < 100; i++) await scanSecrets(skill, `src/f${i}.ts`, `export const n = ${i};\n`);
    expect(performance.getEntriesByType('mark').length).toBe(before);
    expect(await secretLintProfiler.getEntries()).toEqual([]);
  });
});
