/**
 * What a file is for, as a reviewer must know it: a finding in a test, a fixture, an example, the
 * docs or build tooling is never a P0, and rules that only matter in production do not run there;
 * generated and vendored files were not written in this change, so only secrets are looked for.
 *
 * A role comes from, in order: the repository's own configuration (extra test globs), its
 * `.gitattributes` (`linguist-generated`, `linguist-vendored`, `linguist-documentation`), a
 * generated-file marker in the first lines, and the conventional paths and names of each language.
 */
import { globListMatcher, matchesGlob } from './globs';

export const FILE_ROLES = [
  'production',
  'test',
  'fixture',
  'example',
  'docs',
  'tooling',
  'generated',
  'vendored',
] as const;
export type FileRole = (typeof FILE_ROLES)[number];

/** Roles whose code was not written by hand in this repository: only secrets are looked for. */
export const isForeignCode = (role: FileRole) => role === 'generated' || role === 'vendored';

/** Conventional globs per role, checked in this order (a fixture under test/ is a fixture). */
const CONVENTIONS: [FileRole, string[]][] = [
  [
    'vendored',
    [
      '**/node_modules/**',
      '**/bower_components/**',
      '**/vendor/**',
      '**/vendors/**',
      '**/third_party/**',
      '**/third-party/**',
      '**/thirdparty/**',
      '**/external/**',
      '**/extern/**',
      '**/.yarn/**',
    ],
  ],
  [
    'generated',
    [
      '*.min.js',
      '*.min.mjs',
      '*.min.css',
      '*.bundle.js',
      '*.chunk.js',
      '*.map',
      '*.pb.go',
      '*.pb.gw.go',
      '*_pb2.py',
      '*_pb2_grpc.py',
      '*.generated.*',
      '*.g.dart',
      '*.g.cs',
      '*_generated.go',
      'zz_generated*.go',
      '**/generated/**',
      '**/__generated__/**',
      '**/gen/**/*.go',
      '**/dist/**',
      '**/out/**/*.js',
      'package-lock.json',
      'yarn.lock',
      'pnpm-lock.yaml',
      'poetry.lock',
      'Cargo.lock',
      'go.sum',
      'composer.lock',
      'Gemfile.lock',
    ],
  ],
  [
    'fixture',
    [
      '**/fixtures/**',
      '**/fixture/**',
      '**/__fixtures__/**',
      '**/testdata/**',
      '**/test-data/**',
      '**/test_data/**',
      '**/__mocks__/**',
      '**/mocks/**',
      '**/__snapshots__/**',
      '*.snap',
    ],
  ],
  [
    'test',
    [
      '**/test/**',
      '**/tests/**',
      '**/__tests__/**',
      '**/spec/**',
      '**/specs/**',
      '**/e2e/**',
      '**/cypress/**',
      '**/testing/**',
      '**/src/test/**',
      '**/src/androidTest/**',
      '*.test.*',
      '*.spec.*',
      '*.e2e.*',
      '*-test.*',
      '*_test.go',
      'test_*.py',
      '*_test.py',
      'conftest.py',
      '*Test.java',
      '*Tests.java',
      '*IT.java',
      '*Test.kt',
      '*_spec.rb',
      '*_test.rb',
    ],
  ],
  [
    'example',
    [
      '**/examples/**',
      '**/example/**',
      '**/samples/**',
      '**/sample/**',
      '**/demo/**',
      '**/demos/**',
      '**/playground/**',
      '**/sandbox/**',
      '*.stories.*',
      '*.example.*',
    ],
  ],
  [
    'docs',
    [
      '**/docs/**',
      '**/doc/**',
      '**/documentation/**',
      '**/website/**',
      '*.md',
      '*.mdx',
      '*.markdown',
      '*.rst',
      '*.adoc',
      '*.txt',
    ],
  ],
  [
    'tooling',
    [
      '**/scripts/**',
      '**/script/**',
      '**/tools/**',
      '**/tooling/**',
      '**/benchmark/**',
      '**/benchmarks/**',
      '**/bench/**',
      '**/.github/**',
      '**/.circleci/**',
      // Task runners accept either case for their file (jake's own repository has `jakefile.js`).
      '{G,g}runtfile.*',
      '{G,g}ulpfile.*',
      '{J,j}akefile.*',
      '*.config.js',
      '*.config.cjs',
      '*.config.mjs',
      '*.config.ts',
      '.eslintrc.*',
      'noxfile.py',
      'fabfile.py',
      'tasks.py',
      'Makefile',
      'Rakefile',
    ],
  ],
];

const CONVENTION_MATCHERS = CONVENTIONS.map(([role, globs]) => [role, globListMatcher(globs)] as const);

/** Attributes of `.gitattributes` that set a role, and the role they set. */
const ATTRIBUTE_ROLES: Record<string, FileRole> = {
  'linguist-generated': 'generated',
  'linguist-vendored': 'vendored',
  'linguist-documentation': 'docs',
};

export interface GitAttributeRule {
  glob: string;
  role: FileRole;
  /** false for `-linguist-generated` or `linguist-generated=false`: the pattern is not that role. */
  set: boolean;
}

/** Converts a gitattributes pattern to our glob form (a leading `/` anchors it at the root). */
function attributeGlob(pattern: string): string {
  if (pattern.startsWith('/')) return pattern.slice(1);
  // A pattern naming a directory (`dist/`) or with a slash inside is relative to the root in git;
  // a bare name matches at any depth, as our globs already do.
  if (pattern.endsWith('/')) return `**/${pattern}**`;
  return pattern;
}

/** The role-setting lines of a `.gitattributes` file, in file order (a later line wins). */
export function parseGitAttributes(text: string): GitAttributeRule[] {
  const rules: GitAttributeRule[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [pattern, ...attributes] = line.split(/\s+/);
    if (!pattern) continue;
    for (const attribute of attributes) {
      const m = /^([-!]?)(linguist-[a-z]+)(?:=(\w+))?$/.exec(attribute);
      const role = m ? ATTRIBUTE_ROLES[m[2] as string] : undefined;
      if (!m || !role) continue;
      const set = m[1] === '' && m[3] !== 'false';
      rules.push({ glob: attributeGlob(pattern), role, set });
    }
  }
  return rules;
}

/** Marker lines of generated files (Go's convention, Meta's `@generated`, common generators). */
const GENERATED_MARKER =
  /(Code generated .* DO NOT EDIT|@generated\b|auto-?generated|do not edit(?: this file)?,? (?:it|this file) (?:is|was) generated|This file (?:is|was) (?:automatically )?generated)/i;

/** True when the first lines of `content` say the file is generated. */
export function hasGeneratedMarker(content: string): boolean {
  const head = content.slice(0, 2000).split('\n').slice(0, 5).join('\n');
  return GENERATED_MARKER.test(head);
}

export interface RoleSources {
  /** Extra test globs from the repository's configuration (`paths.tests`). */
  testGlobs?: readonly string[];
  attributes?: readonly GitAttributeRule[];
  /** The file's text, to read a generated marker; omitted: not checked. */
  content?: string | null;
}

/** The role of `path` (repository-relative, `/`-separated). */
export function roleOfPath(path: string, sources: RoleSources = {}): FileRole {
  if (sources.testGlobs?.some((g) => matchesGlob(path, g))) return 'test';
  const byAttributes = new Map<FileRole, boolean>();
  for (const rule of sources.attributes ?? []) {
    if (matchesGlob(path, rule.glob)) byAttributes.set(rule.role, rule.set);
  }
  for (const role of ['generated', 'vendored', 'docs'] as const) {
    if (byAttributes.get(role) === true) return role;
  }
  if (sources.content && byAttributes.get('generated') !== false && hasGeneratedMarker(sources.content))
    return 'generated';
  for (const [role, matches] of CONVENTION_MATCHERS) {
    if (byAttributes.get(role) === false) continue;
    if (matches(path)) return role;
  }
  return 'production';
}
