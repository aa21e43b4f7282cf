/**
 * The real code part 3 reviews: published sources of open-source projects, two exact versions
 * each (`name@version`, pinned by tarball integrity in eval/shared/corpora.ts and fetched once
 * into the eval's cache), so the eval reviews the change between two real releases. Each
 * project is here for what our rules look at.
 */
export interface RealRepository {
  /** Short name: the label key's `package`, and the temporary repository's name. */
  name: string;
  /** `name@version` of the base version (its files are the base commit). */
  base: string;
  /** `name@version` of the head version. */
  head: string;
  /** Why it is in the eval. */
  why: string;
}

export const REAL_REPOSITORIES: RealRepository[] = [
  {
    name: 'express',
    base: 'express@4.18.2',
    head: 'express@4.21.2',
    why: 'request handling: redirects, file sending, headers built from request values',
  },
  {
    name: 'knex',
    base: 'knex@2.0.0',
    head: 'knex@3.1.0',
    why: 'a SQL builder: SQL text assembled from identifiers and fragments everywhere',
  },
  {
    name: 'ejs',
    base: 'ejs@3.1.6',
    head: 'ejs@3.1.10',
    why: 'a template engine: compiles templates to functions, escapes HTML',
  },
  {
    name: 'execa',
    base: 'execa@8.0.1',
    head: 'execa@9.5.2',
    why: 'a child_process wrapper: spawn and shell options on values its callers pass',
  },
  {
    name: 'node-gyp',
    base: 'node-gyp@10.0.0',
    head: 'node-gyp@10.2.0',
    why: 'Python (gyp) and JavaScript that run compilers, Python and shell commands',
  },
  {
    name: 'inappbrowser',
    base: 'cordova-plugin-inappbrowser@5.0.0',
    head: 'cordova-plugin-inappbrowser@6.0.0',
    why: 'Java (an Android WebView plugin) next to JavaScript',
  },
  {
    name: 'mysql2',
    base: 'mysql2@3.14.0',
    head: 'mysql2@3.24.6',
    why: 'a MySQL driver: query(), execute() and prepare() on SQL text its callers pass, escaping and formatting helpers',
  },
  {
    name: 'shelljs',
    base: 'shelljs@0.8.5',
    head: 'shelljs@0.10.0',
    why: 'Unix commands in JavaScript: exec() runs the command line its caller gives, through child_process',
  },
  {
    name: 'node-forge',
    base: 'node-forge@1.3.1',
    head: 'node-forge@1.4.3',
    why: 'TLS, X.509 and ciphers in pure JavaScript: MD5, SHA-1, DES and RC2 implemented and used on purpose',
  },
  {
    name: 'axios',
    base: 'axios@1.13.2',
    head: 'axios@1.15.0',
    why: 'an HTTP client: requests to whatever URL its caller gives, redirects, proxies, form data',
  },
  {
    name: 'cordova-android',
    base: 'cordova-android@10.1.2',
    head: 'cordova-android@14.0.1',
    why: "Android's Cordova platform: a Java WebView framework (plugin bridge, client certificates, HTTP auth) and the Node build scripts that run Gradle, adb and the emulator",
  },
  {
    name: 'cordova-file',
    base: 'cordova-plugin-file@6.0.2',
    head: 'cordova-plugin-file@8.1.3',
    why: 'file system access for web code: Java that maps URLs the page gives to files on the device (a path-traversal trap), and its JavaScript API',
  },
  {
    name: 'cordova-camera',
    base: 'cordova-plugin-camera@5.0.3',
    head: 'cordova-plugin-camera@8.0.0',
    why: 'Java that takes pictures and writes, scales and copies image files named by content URIs',
  },
  {
    name: 'ssh2-streams',
    base: 'ssh2-streams@0.2.1',
    head: 'ssh2-streams@0.3.0',
    why: 'an SSH key parser (OpenSSH, PEM, PuTTY) whose release adds some sixty throwaway private keys under test/fixtures, with their parsed results as JSON: test keys must not block a merge',
  },
  {
    name: 'marked',
    base: 'marked@4.2.12',
    head: 'marked@4.3.0',
    why: 'a Markdown parser that publishes its Rollup/Babel bundles (lib/marked.cjs, .esm.js, .umd.js, marked.min.js) next to the src/ they are built from: one change, made in the source and copied into each bundle',
  },
  {
    name: 'moment',
    base: 'moment@2.29.4',
    head: 'moment@2.30.1',
    why: "dates: the package's main file moment.js, min/ and locale/ are Rollup UMD builds of src/, committed beside it (not under dist/), and the release adds locales to both",
  },
  {
    name: 'immer',
    base: 'immer@11.1.0',
    head: 'immer@11.1.21',
    why: "immutable state in TypeScript without semicolons: the IProduce interface's call signatures followed by generic ones (src/types/types-external.ts) trip the TypeScript grammar; dist/ bundles beside src/",
  },
  {
    name: 'reselect',
    base: 'reselect@5.0.1',
    head: 'reselect@5.1.1',
    why: 'memoized selectors in TypeScript without semicolons: the call-signature interfaces of src/createSelectorCreator.ts trip the TypeScript grammar; dist/ bundles beside src/',
  },
];
