/**
 * Which runtime version a repository targets, read from what its knowledge records as written
 * (`>=20.12`, `3.11`, `lts/iron`, `>=3.9,<4`, `go 1.22`'s `1.22`), and whether a rule that only
 * applies to some versions (`runtime: { name, min?, max? }`) applies to it. Pure: no I/O.
 *
 * A statement is read as the **lowest version it allows** (`>=3.9,<4` → 3.9.0, `^18` → 18.0.0,
 * `3.11` → 3.11.0, `lts/iron` → 20.0.0). A runtime stated several times (engines and .nvmrc,
 * package.json files of a monorepo) targets the lowest of them: the oldest version the code
 * must still run on. A rule applies when that floor is within its `min`..`max` (`max` inclusive
 * as a prefix: `3.13` covers every 3.13.x). Nothing readable (no statement, or only `lts/*`,
 * `latest`, `system`): the version is unknown and a rule with a `runtime` does not run, so a
 * version-dependent rule never guesses.
 */
import semver from 'semver';
import type { RuleRuntime } from '../../skills/catalog';

/** What the rule engine is told of a runtime: as the repository knowledge records it. */
export interface RuntimeStatement {
  /** `node`, `python`, `go`, ... */
  name: string;
  /** As written: a range or a version. */
  version: string;
  /** Where it was read (`pyproject.toml#project.requires-python`). */
  source?: string;
}

/** The versions a rule is right for (its `runtime`); `min` and `max` are `1`, `1.2` or `1.2.3`. */
export type RuntimeApplicability = RuleRuntime;

/** Node.js LTS lines by codename, as nvm, fnm and volta accept them (`lts/iron`). */
export const NODE_LTS_CODENAMES: Readonly<Record<string, number>> = {
  argon: 4,
  boron: 6,
  carbon: 8,
  dubnium: 10,
  erbium: 12,
  fermium: 14,
  gallium: 16,
  hydrogen: 18,
  iron: 20,
  jod: 22,
  krypton: 24,
};

/** `>3.8` in PEP 440 allows 3.8.1; node-semver reads a partial `>3.8` as `>=3.9.0`. */
const padStrictGreater = (clause: string) =>
  clause.replace(/^>\s*(\d+(?:\.\d+)?)$/, (_, v: string) => `>${v}${'.0'.repeat(3 - v.split('.').length)}`);

/**
 * One clause list (`>=3.9,<4`, `~=3.10`, `~> 3.2`, `==3.11.*`) in node-semver's syntax: comma
 * separated clauses (PEP 440, Gemfile) joined by spaces, `~=`/`~>` (compatible release: at least
 * this version) as `>=`, `==`/`===` as `=`; `!=` clauses are dropped (they hardly move the floor).
 */
function toSemverRange(text: string): string {
  if (text.includes('||')) return text;
  return text
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && !c.startsWith('!='))
    .map((c) =>
      padStrictGreater(
        c
          .replace(/^(~=|~>)\s*/, '>=')
          .replace(/^===?\s*/, '=')
          .replace(/^=\s*/, ''),
      ),
    )
    .join(' ');
}

const plain = (v: semver.SemVer) => `${v.major}.${v.minor}.${v.patch}`;

/**
 * The lowest version one statement allows, as `major.minor.patch`; null when it names no version
 * (`lts/*`, `node`, `latest`, `stable`, `system`, an empty or unreadable text). Pre-release tags
 * are dropped (`1.21rc1` → 1.21.0).
 */
export function lowestAllowed(written: string): string | null {
  let text = written.trim().toLowerCase();
  const lts = /^lts\/([a-z]+)$/.exec(text);
  if (lts) {
    const major = NODE_LTS_CODENAMES[lts[1] as string];
    return major === undefined ? null : `${major}.0.0`;
  }
  // `v20.11.0`, toolchain `go1.22.1`, Heroku `python-3.11.4`, pyenv `pypy3.10-7.3.12`.
  text = text.replace(/^(?:v|go|python-?|cpython-?|pypy)(?=\d)/, '');
  if (!/\d/.test(text)) return null;
  const range = semver.validRange(toSemverRange(text), { loose: true });
  if (range !== null) {
    try {
      const min = semver.minVersion(range, { loose: true });
      if (min) return plain(min);
    } catch {
      // an unsatisfiable range (`>=4 <3`): no version
      return null;
    }
  }
  // One version with a suffix semver does not read: `1.21rc1`, `3.12-dev`, `20.11.0-alpine`.
  if (/^\d+(\.\d+)*[-a-z+_]*[\w.+-]*$/.test(text)) {
    const coerced = semver.coerce(text);
    return coerced ? plain(coerced) : null;
  }
  return null;
}

export interface RuntimeFloor {
  /** The lowest version the repository's statements of the runtime allow. */
  version: string;
  /** The statement it comes from. */
  statement: RuntimeStatement;
}

/** The lowest version any readable statement of `name` allows; null when none is readable. */
export function runtimeFloor(runtimes: readonly RuntimeStatement[], name: string): RuntimeFloor | null {
  let floor: RuntimeFloor | null = null;
  for (const statement of runtimes) {
    if (statement.name !== name) continue;
    const version = lowestAllowed(statement.version);
    if (version === null) continue;
    if (floor === null || semver.lt(version, floor.version)) floor = { version, statement };
  }
  return floor;
}

/** The semver range a rule's `min`/`max` stand for (`>=3.12 <=3.13`: every 3.12.x and 3.13.x). */
export const applicabilityRange = (a: RuntimeApplicability) =>
  [a.min ? `>=${a.min}` : '', a.max ? `<=${a.max}` : ''].filter(Boolean).join(' ') || '*';

/** Whether a rule for `applicability` applies to a repository whose floor is `floor`. */
export function floorWithin(applicability: RuntimeApplicability, floor: RuntimeFloor | null): boolean {
  if (floor === null) return false;
  return semver.satisfies(floor.version, applicabilityRange(applicability));
}

/** The applicability in words, for a finding: `python 3.12 and later`, `node 16 to 24`. */
export function describeApplicability(a: RuntimeApplicability): string {
  if (a.min && a.max) return `${a.name} ${a.min} to ${a.max}`;
  if (a.min) return `${a.name} ${a.min} and later`;
  if (a.max) return `${a.name} up to ${a.max}`;
  return a.name;
}

/**
 * Floors by runtime name, computed once per review: a rule asks `applies(rule.runtime)`, and a
 * finding says why with `because(rule.runtime)`.
 */
export class RuntimeTargets {
  private readonly floors = new Map<string, RuntimeFloor | null>();

  constructor(private readonly runtimes: readonly RuntimeStatement[] = []) {}

  floor(name: string): RuntimeFloor | null {
    if (!this.floors.has(name)) this.floors.set(name, runtimeFloor(this.runtimes, name));
    return this.floors.get(name) ?? null;
  }

  applies(applicability: RuntimeApplicability): boolean {
    return floorWithin(applicability, this.floor(applicability.name));
  }

  /** One sentence naming the rule's versions and the statement the repository's floor came from. */
  because(applicability: RuntimeApplicability): string {
    const floor = this.floor(applicability.name);
    if (!floor) return '';
    const { statement } = floor;
    const where = statement.source ? ` (${statement.source})` : '';
    return `This rule applies to ${describeApplicability(applicability)}; the repository targets ${applicability.name} \`${statement.version}\`${where}, lowest version ${floor.version}.`;
  }
}
