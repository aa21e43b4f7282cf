/**
 * The real code part 3 reviews: published sources of open-source projects, pinned in
 * package.json as two exact versions each through npm aliases (`eval-<name>-a`/`-b`), so the
 * eval reviews the change between two real releases with no network at run time. Each project
 * is here for what our rules look at.
 */
export interface RealRepository {
  /** Short name: the label key's `package`, and the temporary repository's name. */
  name: string;
  /** npm alias of the base version (its files are the base commit). */
  base: string;
  /** npm alias of the head version. */
  head: string;
  /** Why it is in the eval. */
  why: string;
}

export const REAL_REPOSITORIES: RealRepository[] = [
  {
    name: 'express',
    base: 'eval-express-a',
    head: 'eval-express-b',
    why: 'request handling: redirects, file sending, headers built from request values',
  },
  {
    name: 'knex',
    base: 'eval-knex-a',
    head: 'eval-knex-b',
    why: 'a SQL builder: SQL text assembled from identifiers and fragments everywhere',
  },
  {
    name: 'ejs',
    base: 'eval-ejs-a',
    head: 'eval-ejs-b',
    why: 'a template engine: compiles templates to functions, escapes HTML',
  },
  {
    name: 'execa',
    base: 'eval-execa-a',
    head: 'eval-execa-b',
    why: 'a child_process wrapper: spawn and shell options on values its callers pass',
  },
  {
    name: 'node-gyp',
    base: 'eval-node-gyp-a',
    head: 'eval-node-gyp-b',
    why: 'Python (gyp) and JavaScript that run compilers, Python and shell commands',
  },
  {
    name: 'inappbrowser',
    base: 'eval-inappbrowser-a',
    head: 'eval-inappbrowser-b',
    why: 'Java (an Android WebView plugin) next to JavaScript',
  },
  {
    name: 'mysql2',
    base: 'eval-mysql2-a',
    head: 'eval-mysql2-b',
    why: 'a MySQL driver: query(), execute() and prepare() on SQL text its callers pass, escaping and formatting helpers',
  },
  {
    name: 'shelljs',
    base: 'eval-shelljs-a',
    head: 'eval-shelljs-b',
    why: 'Unix commands in JavaScript: exec() runs the command line its caller gives, through child_process',
  },
  {
    name: 'node-forge',
    base: 'eval-node-forge-a',
    head: 'eval-node-forge-b',
    why: 'TLS, X.509 and ciphers in pure JavaScript: MD5, SHA-1, DES and RC2 implemented and used on purpose',
  },
  {
    name: 'axios',
    base: 'eval-axios-a',
    head: 'eval-axios-b',
    why: 'an HTTP client: requests to whatever URL its caller gives, redirects, proxies, form data',
  },
  {
    name: 'cordova-android',
    base: 'eval-cordova-android-a',
    head: 'eval-cordova-android-b',
    why: "Android's Cordova platform: a Java WebView framework (plugin bridge, client certificates, HTTP auth) and the Node build scripts that run Gradle, adb and the emulator",
  },
  {
    name: 'cordova-file',
    base: 'eval-cordova-file-a',
    head: 'eval-cordova-file-b',
    why: 'file system access for web code: Java that maps URLs the page gives to files on the device (a path-traversal trap), and its JavaScript API',
  },
  {
    name: 'cordova-camera',
    base: 'eval-cordova-camera-a',
    head: 'eval-cordova-camera-b',
    why: 'Java that takes pictures and writes, scales and copies image files named by content URIs',
  },
  {
    name: 'ssh2-streams',
    base: 'eval-ssh2-streams-a',
    head: 'eval-ssh2-streams-b',
    why: 'an SSH key parser (OpenSSH, PEM, PuTTY) whose release adds some sixty throwaway private keys under test/fixtures, with their parsed results as JSON: test keys must not block a merge',
  },
  {
    name: 'marked',
    base: 'eval-marked-a',
    head: 'eval-marked-b',
    why: 'a Markdown parser that publishes its Rollup/Babel bundles (lib/marked.cjs, .esm.js, .umd.js, marked.min.js) next to the src/ they are built from: one change, made in the source and copied into each bundle',
  },
  {
    name: 'moment',
    base: 'eval-moment-a',
    head: 'eval-moment-b',
    why: "dates: the package's main file moment.js, min/ and locale/ are Rollup UMD builds of src/, committed beside it (not under dist/), and the release adds locales to both",
  },
  {
    name: 'immer',
    base: 'eval-immer-a',
    head: 'eval-immer-b',
    why: "immutable state in TypeScript without semicolons: the IProduce interface's call signatures followed by generic ones (src/types/types-external.ts) trip the TypeScript grammar; dist/ bundles beside src/",
  },
  {
    name: 'reselect',
    base: 'eval-reselect-a',
    head: 'eval-reselect-b',
    why: 'memoized selectors in TypeScript without semicolons: the call-signature interfaces of src/createSelectorCreator.ts trip the TypeScript grammar; dist/ bundles beside src/',
  },
];
