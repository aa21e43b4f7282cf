/**
 * Values that look like credentials but are known not to be: published example keys,
 * placeholders, masked or hand-typed values, and the samples secret scanners test themselves on.
 * A credential is reported at full severity in every kind of file, so these are the only way a
 * found value stays quiet; each rule is a property of the value (or, for scanner samples, of
 * where it lives), never of the variable name or the line around it.
 */
import type { FileRole } from '../../core/file-roles';

/**
 * Example keys that providers publish in their documentation (copied into countless tutorials).
 * A value containing one of them is that example, whatever prefix it carries.
 */
const DOCUMENTED_EXAMPLES = [
  // AWS: access key id and secret access key of the IAM docs.
  'AKIAIOSFODNN7EXAMPLE',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  // Stripe: the test-mode keys of the API reference, old and current.
  'sk_test_BQokikJOvBiI2HlWgH4olfQ2',
  'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  // GitHub: the token body of the docs' `ghp_`/`gho_`/... examples.
  '16C7e42F292c6912E7710c838347Ae178B4a',
  // Slack: the bot token of the OAuth docs' response.
  'xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy',
  // Google: the API key of the "Using API keys" docs.
  'AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe',
];

/** Words people write into a value to say it is not real. */
const NOT_REAL_WORDS =
  /example|sample|dummy|fake|placeholder|redacted|changeme|replace[_-]?me|not[_-]?a?[_-]?real|your[_-]?(?:own[_-]?)?(?:api[_-]?|access[_-]?|secret[_-]?|auth[_-]?)?(?:key|token|secret|password)/gi;

/**
 * In tests and fixtures, also the words of test data. Not elsewhere: a production value may contain
 * "test" by chance far more often than "placeholder". Stripe's test-mode prefixes are removed first.
 */
const TEST_DATA_WORDS = /test|mock|fixture|bogus|invalid|foobar/gi;
const TEST_MODE_PREFIX = /\b[spr]k_test_/g;

/** A masked or zeroed value: six or more of one masking character in a row. */
const MASK_RUN = /([xX*0•#.])\1{5,}/;

/** Template and shell placeholders: `${VAR}`, `{{var}}`, `<your-token>`, `%VAR%`, `$VAR`. */
const PLACEHOLDER = /\$\{[^}]*\}|\{\{[^}]*\}\}|<[A-Za-z][\w .-]*>|%[A-Z_]{2,}%|\$[A-Z_][A-Z0-9_]+/;

/** Length of a counting run (`12345678`, `abcdefgh`) that marks a value as typed by a person. */
const COUNTING_RUN = 8;

/** True when `value` holds a run of COUNTING_RUN characters each one after the previous (0-9, a-z, A-Z). */
function hasCountingRun(value: string): boolean {
  let run = 1;
  for (let i = 1; i < value.length; i++) {
    const previous = value.charCodeAt(i - 1);
    const current = value.charCodeAt(i);
    run = current === previous + 1 && sameClass(previous, current) ? run + 1 : 1;
    if (run >= COUNTING_RUN) return true;
  }
  return false;
}

const classOf = (code: number) =>
  code >= 48 && code <= 57
    ? 'digit'
    : code >= 97 && code <= 122
      ? 'lower'
      : code >= 65 && code <= 90
        ? 'upper'
        : null;
const sameClass = (a: number, b: number) => classOf(a) !== null && classOf(a) === classOf(b);

/**
 * True when `words` occurs in `value` written as a word is (`fake`, `FAKE`, `Fake`, `FakeKey`), not
 * in the mixed case of random text: a 3,000-character private key holds some casing of "fake" about
 * once in 350 keys, one of these three casings once in 1,800. Words of seven letters and more do
 * not occur by chance, so any casing counts (`yourApiKey`).
 */
function hasWord(words: RegExp, value: string): boolean {
  for (const match of value.matchAll(words)) {
    const text = match[0];
    const rest = text.slice(1);
    if (
      text.length > 6 ||
      text === text.toLowerCase() ||
      text === text.toUpperCase() ||
      rest === rest.toLowerCase()
    )
      return true;
  }
  return false;
}

/** `scheme://user:password@host` at the start of a found connection string or URL. */
const URL_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/([^:@/\s]+):([^@/\s]+)@(\[[^\]]*\]|[^/?:\s]+)/i;
const LOCAL_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\])$/i;

/**
 * Credentials in a URL that guard nothing anyone else can reach: the user name repeated as the
 * password (`postgres:postgres@`, the images' defaults), or a server on this machine.
 */
function localOrDefaultLogin(value: string): boolean {
  const m = URL_CREDENTIALS.exec(value);
  if (!m) return false;
  const [, user, password, host] = m as unknown as [string, string, string, string];
  return user === password || LOCAL_HOST.test(host);
}

const TEST_MATERIAL_ROLES: ReadonlySet<FileRole> = new Set(['test', 'fixture']);

/** Why `value` is not a credential to report, or null when it is one. */
export function notACredential(value: string, role: FileRole): string | null {
  if (DOCUMENTED_EXAMPLES.some((example) => value.includes(example))) return 'a documented example key';
  if (hasWord(NOT_REAL_WORDS, value)) return 'says it is not real';
  if (PLACEHOLDER.test(value)) return 'a placeholder';
  if (MASK_RUN.test(value)) return 'masked';
  if (hasCountingRun(value)) return 'typed by hand';
  if (localOrDefaultLogin(value)) return 'a local or default login';
  if (TEST_MATERIAL_ROLES.has(role) && hasWord(TEST_DATA_WORDS, value.replace(TEST_MODE_PREFIX, ''))) {
    return 'test data';
  }
  return null;
}

/** Directory names of secret scanners (their sources, vendored or in a monorepo). */
const SCANNER_DIRECTORY =
  /^(?:@?secretlint(?:[-_.].*)?|detect[-_]secrets|gitleaks|trufflehog|truffle[-_]hog|git[-_]secrets|ggshield|nosey[-_]?parker|kingfisher)$/i;

/** Directory names that hold test material. */
const TEST_DIRECTORY =
  /^(?:tests?|__tests__|testing|specs?|testdata|test[-_]data|fixtures?|__fixtures__|__snapshots__|snapshots)$/i;

/** File names of tests: `aws_test.go`, `aws.test.ts`, `test_aws.py`, `AwsTest.java`, `aws_spec.rb`. */
const TEST_FILE = /(?:^|[._-])(?:test|spec)s?(?:[._-]|$)|[a-z0-9]Tests?\.[A-Za-z]+$/;

/**
 * True for the test material of a secret scanner: a path with a directory named for a scanner and,
 * below it, a test directory or a test file. Scanners test their rules on values shaped like real
 * keys; anywhere else such a value is reported.
 */
export function isSecretScannerTestMaterial(path: string): boolean {
  const parts = path.split('/');
  const fileName = parts.pop() ?? '';
  const scannerAt = parts.findIndex((part) => SCANNER_DIRECTORY.test(part));
  if (scannerAt < 0) return false;
  return parts.slice(scannerAt + 1).some((part) => TEST_DIRECTORY.test(part)) || TEST_FILE.test(fileName);
}
