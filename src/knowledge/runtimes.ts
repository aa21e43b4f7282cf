/**
 * Runtime versions, as the repository states them: a range (`>=20.12`, `^3.10`) or a pinned
 * version (`.nvmrc`), each with the file and field it was read from. Several statements of the
 * same runtime (engines and .nvmrc) are all kept: they say different things (what is supported,
 * what the developers use). A runtime the repository plainly uses but states no version of is not
 * guessed: it is absent and a `runtime_version_unknown` gap names where we looked.
 */
import type { KnowledgeRuntime } from '../core/repo-knowledge';
import { depth, field, firstLine, type Sources, stringField } from './sources';

interface Found {
  version: string;
  source: string;
}

/** Files only read for a runtime version. */
export const VERSION_FILES = [
  '.nvmrc',
  '.node-version',
  '.tool-versions',
  '.python-version',
  'runtime.txt',
  '.go-version',
  '.java-version',
  '.sdkmanrc',
  'rust-toolchain',
  'rust-toolchain.toml',
  '.ruby-version',
];

/** `.tool-versions` (asdf, mise) tool names per runtime. */
const TOOL_VERSIONS_NAMES: Record<string, string[]> = {
  node: ['nodejs', 'node'],
  python: ['python'],
  go: ['golang', 'go'],
  java: ['java'],
  rust: ['rust'],
  ruby: ['ruby'],
  php: ['php'],
};

function fromVersionFiles(src: Sources, names: string[], clean = (v: string): string | null => v): Found[] {
  return src.named(...names).flatMap((path) => {
    const line = firstLine(src.text(path) ?? '');
    const version = line === null ? null : clean(line);
    return version ? [{ version, source: path }] : [];
  });
}

function fromToolVersions(src: Sources, runtime: string): Found[] {
  const names = TOOL_VERSIONS_NAMES[runtime] ?? [];
  return src.named('.tool-versions').flatMap((path) => {
    for (const raw of (src.text(path) ?? '').split(/\r?\n/)) {
      const [tool, version] = raw.replace(/#.*$/, '').trim().split(/\s+/);
      if (tool && version && names.includes(tool)) return [{ version, source: `${path}#${tool}` }];
    }
    return [];
  });
}

function node(src: Sources): Found[] {
  const fromManifests = src.named('package.json').flatMap((path) => {
    const pkg = src.json(path);
    const found: Found[] = [];
    const engines = stringField(pkg, 'engines', 'node');
    if (engines) found.push({ version: engines, source: `${path}#engines.node` });
    const volta = stringField(pkg, 'volta', 'node');
    if (volta) found.push({ version: volta, source: `${path}#volta.node` });
    return found;
  });
  return [
    ...fromVersionFiles(src, ['.nvmrc', '.node-version']),
    ...fromToolVersions(src, 'node'),
    ...fromManifests,
  ];
}

function python(src: Sources): Found[] {
  const found: Found[] = [
    ...fromVersionFiles(src, ['.python-version']),
    ...fromToolVersions(src, 'python'),
    // Heroku's runtime.txt: `python-3.11.4`; any other runtime named there is not Python.
    ...fromVersionFiles(src, ['runtime.txt'], (line) => /^python-(\S+)$/.exec(line)?.[1] ?? null),
  ];
  for (const path of src.named('pyproject.toml')) {
    const doc = src.toml(path);
    const pep621 = stringField(doc, 'project', 'requires-python');
    if (pep621) found.push({ version: pep621, source: `${path}#project.requires-python` });
    const poetry = field(doc, 'tool', 'poetry', 'dependencies', 'python');
    const poetryVersion = typeof poetry === 'string' ? poetry : stringField(poetry, 'version');
    if (poetryVersion)
      found.push({ version: poetryVersion, source: `${path}#tool.poetry.dependencies.python` });
  }
  for (const path of src.named('setup.cfg')) {
    const requires = src.ini(path)?.get('options')?.get('python_requires');
    if (requires) found.push({ version: requires, source: `${path}#options.python_requires` });
  }
  for (const path of src.named('Pipfile')) {
    const doc = src.toml(path);
    for (const key of ['python_full_version', 'python_version']) {
      const version = stringField(doc, 'requires', key);
      if (version) {
        found.push({ version, source: `${path}#requires.${key}` });
        break;
      }
    }
  }
  return found;
}

function go(src: Sources): Found[] {
  const found: Found[] = [...fromVersionFiles(src, ['.go-version']), ...fromToolVersions(src, 'go')];
  for (const path of src.named('go.mod')) {
    const text = src.text(path) ?? '';
    const directive = /^go\s+(\d[\w.]*)\s*(?:\/\/.*)?$/m.exec(text);
    if (directive) found.push({ version: directive[1] as string, source: `${path}#go` });
    // `toolchain go1.22.1`: the toolchain name, whose version is what follows `go`.
    const toolchain = /^toolchain\s+go(\d[\w.]*)\s*(?:\/\/.*)?$/m.exec(text);
    if (toolchain) found.push({ version: toolchain[1] as string, source: `${path}#toolchain` });
  }
  return found;
}

/**
 * The Java release a pom.xml compiles for. Two regular expressions rather than an XML parser:
 * only `<properties>` and the compiler plugin's `<release>`/`<source>` are read, values are plain
 * text, and a `${property}` reference is resolved against the same file's properties (a version
 * inherited from a parent pom is not in the tree we read, so it is not reported).
 */
function pomJava(text: string): { version: string; field: string } | null {
  const withoutComments = text.replace(/<!--[\s\S]*?-->/g, '');
  const properties = new Map<string, string>();
  const block = /<properties>([\s\S]*?)<\/properties>/.exec(withoutComments)?.[1] ?? '';
  for (const m of block.matchAll(/<([\w.-]+)>\s*([^<]*?)\s*<\/\1>/g))
    properties.set(m[1] as string, m[2] as string);
  const resolve = (value: string | undefined): string | null => {
    if (!value) return null;
    const ref = /^\$\{([\w.-]+)\}$/.exec(value);
    const resolved = ref ? properties.get(ref[1] as string) : value;
    return resolved && !resolved.includes('${') ? resolved : null;
  };
  for (const name of ['maven.compiler.release', 'maven.compiler.source', 'java.version']) {
    const version = resolve(properties.get(name));
    if (version) return { version, field: name };
  }
  const plugin = /<artifactId>maven-compiler-plugin<\/artifactId>([\s\S]*?)<\/plugin>/.exec(
    withoutComments,
  )?.[1];
  for (const name of ['release', 'source']) {
    const value = plugin ? new RegExp(`<${name}>\\s*([^<]+?)\\s*</${name}>`).exec(plugin)?.[1] : undefined;
    const version = resolve(value);
    if (version) return { version, field: `maven-compiler-plugin.${name}` };
  }
  return null;
}

/** The Java version a Gradle build (Groovy or Kotlin DSL) targets: toolchain first, then sourceCompatibility. */
function gradleJava(text: string): { version: string; field: string } | null {
  const toolchain =
    /languageVersion(?:\s*=\s*|\.set\(\s*)JavaLanguageVersion\.of\(\s*['"]?(\d+)['"]?\s*\)/.exec(text);
  if (toolchain) return { version: toolchain[1] as string, field: 'java.toolchain.languageVersion' };
  const kotlin = /\bjvmToolchain\(\s*(\d+)\s*\)/.exec(text);
  if (kotlin) return { version: kotlin[1] as string, field: 'kotlin.jvmToolchain' };
  const compat =
    /\bsourceCompatibility\s*=\s*(?:JavaVersion\.VERSION_(\d+(?:_\d+)?)|['"]?(\d+(?:\.\d+)?)['"]?)/.exec(
      text,
    );
  if (compat) {
    const version = compat[1] ? compat[1].replace('_', '.') : (compat[2] as string);
    return { version, field: 'sourceCompatibility' };
  }
  return null;
}

function java(src: Sources): Found[] {
  const found: Found[] = [...fromVersionFiles(src, ['.java-version']), ...fromToolVersions(src, 'java')];
  for (const path of src.named('.sdkmanrc')) {
    const m = /^\s*java\s*=\s*(\S+)/m.exec(src.text(path) ?? '');
    if (m) found.push({ version: m[1] as string, source: `${path}#java` });
  }
  for (const path of src.named('pom.xml')) {
    const hit = pomJava(src.text(path) ?? '');
    if (hit) found.push({ version: hit.version, source: `${path}#${hit.field}` });
  }
  for (const path of src.named('build.gradle', 'build.gradle.kts')) {
    const hit = gradleJava(src.text(path) ?? '');
    if (hit) found.push({ version: hit.version, source: `${path}#${hit.field}` });
  }
  return found;
}

function rust(src: Sources): Found[] {
  const found: Found[] = [...fromVersionFiles(src, ['rust-toolchain']), ...fromToolVersions(src, 'rust')];
  for (const path of src.named('rust-toolchain.toml')) {
    const channel = stringField(src.toml(path), 'toolchain', 'channel');
    if (channel) found.push({ version: channel, source: `${path}#toolchain.channel` });
  }
  for (const path of src.named('Cargo.toml')) {
    const doc = src.toml(path);
    const version =
      stringField(doc, 'package', 'rust-version') ?? stringField(doc, 'workspace', 'package', 'rust-version');
    if (version) found.push({ version, source: `${path}#package.rust-version` });
  }
  return found;
}

function ruby(src: Sources): Found[] {
  const found: Found[] = [...fromVersionFiles(src, ['.ruby-version']), ...fromToolVersions(src, 'ruby')];
  for (const path of src.named('Gemfile')) {
    const m = /^\s*ruby\s+['"]([^'"]+)['"]/m.exec(src.text(path) ?? '');
    if (m) found.push({ version: m[1] as string, source: `${path}#ruby` });
  }
  return found;
}

function php(src: Sources): Found[] {
  const found: Found[] = [...fromToolVersions(src, 'php')];
  for (const path of src.named('composer.json')) {
    const version = stringField(src.json(path), 'require', 'php');
    if (version) found.push({ version, source: `${path}#require.php` });
  }
  return found;
}

interface RuntimeSpec {
  name: string;
  find: (src: Sources) => Found[];
  /** Manifests that mean the runtime is used. */
  manifests: string[];
  /** Languages whose files mean the runtime is used (JavaScript alone may be for browsers: not node). */
  languages: string[];
  /** Where a version is looked for, for the gap. */
  looked: string;
}

const RUNTIMES: RuntimeSpec[] = [
  {
    name: 'node',
    find: node,
    manifests: ['package.json'],
    languages: [],
    looked: 'package.json#engines.node, package.json#volta.node, .nvmrc, .node-version, .tool-versions',
  },
  {
    name: 'python',
    find: python,
    manifests: ['pyproject.toml', 'setup.cfg', 'setup.py', 'Pipfile', 'requirements.txt'],
    languages: ['python'],
    looked:
      'pyproject.toml#project.requires-python, pyproject.toml#tool.poetry.dependencies.python, setup.cfg#options.python_requires, Pipfile#requires, .python-version, runtime.txt, .tool-versions',
  },
  {
    name: 'go',
    find: go,
    manifests: ['go.mod'],
    languages: ['go'],
    looked: 'go.mod (go, toolchain), .go-version, .tool-versions',
  },
  {
    name: 'java',
    find: java,
    manifests: ['pom.xml', 'build.gradle', 'build.gradle.kts'],
    languages: ['java', 'kotlin'],
    looked:
      'pom.xml (maven.compiler.release, maven.compiler.source, java.version, maven-compiler-plugin), build.gradle(.kts) (toolchain languageVersion, jvmToolchain, sourceCompatibility), .java-version, .sdkmanrc, .tool-versions',
  },
  {
    name: 'rust',
    find: rust,
    manifests: ['Cargo.toml'],
    languages: ['rust'],
    looked: 'Cargo.toml#package.rust-version, rust-toolchain(.toml), .tool-versions',
  },
  {
    name: 'ruby',
    find: ruby,
    manifests: ['Gemfile'],
    languages: ['ruby'],
    looked: 'Gemfile (ruby), .ruby-version, .tool-versions',
  },
  {
    name: 'php',
    find: php,
    manifests: ['composer.json'],
    languages: ['php'],
    looked: 'composer.json#require.php, .tool-versions',
  },
];

/**
 * The runtimes the repository states versions of, files at the root before nested ones; a runtime
 * it uses (a manifest of it, or files of its language) with no version anywhere is a gap.
 */
export function deriveRuntimes(src: Sources, languages: ReadonlyMap<string, number>): KnowledgeRuntime[] {
  const runtimes: KnowledgeRuntime[] = [];
  // Within a runtime: version files, then manifests, each shallowest first (the sort is stable).
  const sourceDepth = (f: Found) => depth(f.source.split('#')[0] as string);
  for (const spec of RUNTIMES) {
    const found = spec.find(src).sort((a, b) => sourceDepth(a) - sourceDepth(b));
    const seen = new Set<string>();
    for (const f of found) {
      const key = `${f.version}\u0000${f.source}`;
      if (seen.has(key)) continue;
      seen.add(key);
      runtimes.push({ name: spec.name, version: f.version, source: f.source, declared: false });
    }
    if (found.length > 0) continue;
    const manifests = src.ownFilesNamed(spec.manifests);
    const files = spec.languages.reduce((n, l) => n + (languages.get(l) ?? 0), 0);
    if (manifests.length === 0 && files === 0) continue;
    const evidence =
      manifests.length > 0
        ? `it has ${manifests.slice(0, 3).join(', ')}`
        : `it has ${files} ${spec.languages[0]} files`;
    src.gaps.push({
      code: 'runtime_version_unknown',
      message: `The repository uses ${spec.name} (${evidence}) but states no ${spec.name} version: looked at ${spec.looked}`,
    });
  }
  return runtimes;
}
