/** Reading a runtime version as written into the lowest version it allows, and rule ranges. */
import { describe, expect, it } from 'vitest';
import {
  describeApplicability,
  floorWithin,
  lowestAllowed,
  NODE_LTS_CODENAMES,
  RuntimeTargets,
  runtimeFloor,
} from '../../../src/reviewers/builtin/runtime-version';

describe('lowestAllowed', () => {
  it.each([
    // exact versions and X-ranges
    ['3.11', '3.11.0'],
    ['3.12.4', '3.12.4'],
    ['20', '20.0.0'],
    ['18.x', '18.0.0'],
    ['3.11.*', '3.11.0'],
    ['v20.11.0', '20.11.0'],
    // npm ranges
    ['>=20.12', '20.12.0'],
    ['>= 20.12', '20.12.0'],
    ['^18', '18.0.0'],
    ['~3.10', '3.10.0'],
    ['>=18 <21 || >=22', '18.0.0'],
    ['^16 || ^18', '16.0.0'],
    // PEP 440 (requires-python, Pipfile) and Poetry
    ['>=3.9,<4', '3.9.0'],
    ['>=3.8.1, <4.0', '3.8.1'],
    ['~=3.10', '3.10.0'],
    ['==3.11.*', '3.11.0'],
    ['>3.8', '3.8.1'],
    ['!=3.9.0,>=3.9', '3.9.0'],
    ['^3.10', '3.10.0'],
    // Gemfile
    ['~> 3.2', '3.2.0'],
    // go.mod `go`/`toolchain`, .python-version flavours, Heroku's runtime.txt
    ['1.22', '1.22.0'],
    ['go1.22.1', '1.22.1'],
    ['1.21rc1', '1.21.0'],
    ['3.12-dev', '3.12.0'],
    ['pypy3.10-7.3.12', '3.10.0'],
    ['python-3.11.4', '3.11.4'],
    // an upper bound only: every version below it, so nothing above 0
    ['<4', '0.0.0'],
  ])('reads %j as %s', (written, lowest) => {
    expect(lowestAllowed(written)).toBe(lowest);
  });

  it('maps every known Node LTS codename to its major version', () => {
    expect(lowestAllowed('lts/iron')).toBe('20.0.0');
    expect(lowestAllowed('lts/Hydrogen')).toBe('18.0.0');
    expect(lowestAllowed('lts/krypton')).toBe('24.0.0');
    for (const [name, major] of Object.entries(NODE_LTS_CODENAMES))
      expect(lowestAllowed(`lts/${name}`)).toBe(`${major}.0.0`);
  });

  it.each([
    'lts/*',
    'lts/-1',
    'lts/unknowncodename',
    'node',
    'latest',
    'stable',
    'system',
    '*',
    '',
    '>=4 <3',
  ])('reads %j as no version', (written) => {
    expect(lowestAllowed(written)).toBeNull();
  });
});

describe('runtimeFloor', () => {
  it('takes the lowest of every readable statement of the runtime', () => {
    const floor = runtimeFloor(
      [
        { name: 'node', version: '>=20.12', source: 'package.json#engines.node' },
        { name: 'node', version: '18', source: 'packages/legacy/package.json#engines.node' },
        { name: 'node', version: 'lts/*', source: '.nvmrc' },
        { name: 'python', version: '3.8' },
      ],
      'node',
    );
    expect(floor).toEqual({
      version: '18.0.0',
      statement: { name: 'node', version: '18', source: 'packages/legacy/package.json#engines.node' },
    });
  });

  it('is null when the runtime is not stated or no statement is readable', () => {
    expect(runtimeFloor([{ name: 'python', version: '3.12' }], 'node')).toBeNull();
    expect(runtimeFloor([{ name: 'node', version: 'lts/*' }], 'node')).toBeNull();
    expect(runtimeFloor([], 'go')).toBeNull();
  });
});

describe('floorWithin', () => {
  const floor = (version: string) => ({ version, statement: { name: 'python', version } });

  it('applies from min, and up to max as a prefix (3.13 covers 3.13.x)', () => {
    const deprecated = { name: 'python', min: '3.10', max: '3.13' };
    expect(floorWithin(deprecated, floor('3.9.18'))).toBe(false);
    expect(floorWithin(deprecated, floor('3.10.0'))).toBe(true);
    expect(floorWithin(deprecated, floor('3.13.7'))).toBe(true);
    expect(floorWithin(deprecated, floor('3.14.0'))).toBe(false);
    expect(floorWithin({ name: 'python', min: '3.14' }, floor('3.14.0'))).toBe(true);
    expect(floorWithin({ name: 'node', min: '18.13' }, floor('18.12.1'))).toBe(false);
    expect(floorWithin({ name: 'node', min: '18.13' }, floor('18.13.0'))).toBe(true);
    expect(floorWithin({ name: 'go', max: '1.15' }, floor('1.15.9'))).toBe(true);
  });

  it('never applies to an unknown version', () => {
    expect(floorWithin({ name: 'python', min: '3.12' }, null)).toBe(false);
    expect(floorWithin({ name: 'python', max: '3.12' }, null)).toBe(false);
  });
});

describe('RuntimeTargets', () => {
  it('answers per runtime and says which statement made a rule apply', () => {
    const targets = new RuntimeTargets([
      { name: 'python', version: '>=3.12', source: 'pyproject.toml#project.requires-python' },
    ]);
    const rule = { name: 'python', min: '3.12' };
    expect(targets.applies(rule)).toBe(true);
    expect(targets.applies({ name: 'node', min: '16' })).toBe(false);
    expect(targets.because(rule)).toBe(
      'This rule applies to python 3.12 and later; the repository targets python `>=3.12` (pyproject.toml#project.requires-python), lowest version 3.12.0.',
    );
    expect(describeApplicability({ name: 'node', min: '16', max: '24' })).toBe('node 16 to 24');
    expect(describeApplicability({ name: 'go', max: '1.15' })).toBe('go up to 1.15');
  });
});
