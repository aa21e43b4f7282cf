/**
 * compose.yaml runs what the docs tell operators to configure. No Docker engine runs here, so the
 * file is read as compose reads it (YAML with merge keys) and held to the docs: every variable of
 * the configuration reference's operator tables reaches both services, or is one the image or
 * compose sets (docs/operations.md, "Containers") and is set there; one image is built; the
 * database has no default password; the GitHub key file is mounted read-only.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { codeNames, readDoc, tableRows } from './markdown';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | null>;
  volumes?: string[];
  pull_policy?: string;
}

const compose = parse(readDoc('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
const reference = readDoc('docs/configuration.md');
const operations = readDoc('docs/operations.md');
const dockerfile = readDoc('Dockerfile');
const VARIABLE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;
const OPERATOR_SECTIONS = ['Server and workers', 'GitHub', 'Model providers'];

const svc = compose.services.svc as Service;
const worker = compose.services.worker as Service;

function variablesIn(markdown: string, section: string): string[] {
  return tableRows(markdown, section)
    .flatMap((row) => codeNames(row[0] ?? ''))
    .filter((name) => VARIABLE.test(name));
}

/** The variables the image's final stage sets with ENV. */
const imageEnv = new Set(
  [...(dockerfile.split(/^FROM /m).at(-1) ?? '').matchAll(/^ENV (.+)$/gm)].flatMap((m) =>
    [...(m[1] ?? '').matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((v) => v[1] ?? ''),
  ),
);

describe('compose.yaml', () => {
  const operatorVariables = OPERATOR_SECTIONS.flatMap((section) => variablesIn(reference, section));
  const setByImageOrCompose = new Map(
    tableRows(operations, 'Containers')
      .filter((row) => VARIABLE.test(codeNames(row[0] ?? '')[0] ?? ''))
      .map((row) => [codeNames(row[0] ?? '')[0] ?? '', row[1] ?? '']),
  );
  const forwarded = Object.keys(svc.environment ?? {});

  it('passes every operator variable of the configuration reference to svc, save those it sets', () => {
    expect(operatorVariables).toEqual(
      expect.arrayContaining(['SVC_BOOTSTRAP_KEY', 'LOG_LEVEL', 'GITHUB_API_URL']),
    );
    const missing = operatorVariables.filter(
      (name) => !forwarded.includes(name) && !setByImageOrCompose.has(name),
    );
    expect(missing).toEqual([]);
    // Nothing compose passes is unknown to the reference.
    expect(forwarded.filter((name) => !operatorVariables.includes(name))).toEqual([]);
  });

  it('really sets each variable the docs say the image or compose sets', () => {
    expect(setByImageOrCompose.size).toBeGreaterThan(0);
    for (const [name, by] of setByImageOrCompose) {
      expect(operatorVariables, `${name} is not in the configuration reference`).toContain(name);
      if (by === 'the image') expect(imageEnv, name).toContain(name);
      else if (name === 'SVC_NO_WORKER') expect(svc.command).toContain('--no-worker');
      else expect(svc.environment?.[name], name).toEqual(expect.any(String));
    }
  });

  it('gives the workers the environment and volumes of the API', () => {
    expect(worker.environment).toEqual(svc.environment);
    expect(worker.volumes).toEqual(svc.volumes);
  });

  it('builds one image, which both services run', () => {
    const building = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
    expect(building.map(([name]) => name)).toEqual(['svc']);
    expect(svc.image).toBeTruthy();
    expect(worker.image).toBe(svc.image);
    expect(worker.pull_policy).toBe('never');
  });

  it('has no default database password', () => {
    const postgres = compose.services.postgres as Service;
    const required = /^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/;
    expect(postgres.environment?.POSTGRES_PASSWORD).toMatch(required);
    expect(svc.environment?.DATABASE_URL).toMatch(/:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\//);
    expect(readDoc('compose.yaml')).not.toMatch(/POSTGRES_PASSWORD:-/);
  });

  it('mounts the GitHub key file read-only where GITHUB_PRIVATE_KEY_PATH points, only when one is given', () => {
    const target = /^\$\{GITHUB_PRIVATE_KEY_PATH:\+(\/[^}]+)\}$/.exec(
      svc.environment?.GITHUB_PRIVATE_KEY_PATH ?? '',
    )?.[1];
    expect(target).toBeTruthy();
    const mount = (svc.volumes ?? []).find((volume) => volume.includes(`:${target}:`));
    expect(mount).toMatch(/^\$\{GITHUB_PRIVATE_KEY_PATH:-[^}]+\}:/);
    expect(mount?.endsWith(':ro')).toBe(true);
  });
});
