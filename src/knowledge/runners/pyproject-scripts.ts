/**
 * hatch env scripts (`hatch run env:script`, `hatch test`, `hatch fmt`) and pdm scripts (`pdm run
 * x`, composites) from pyproject.toml.
 */
import { field, isObject, type Json, type Sources } from '../sources';
import { positional, type Target, type TaskRunner, textOf } from './shared';

export function pyprojectScriptsRunner(src: Sources): TaskRunner | null {
  const doc = textOf(src, 'pyproject.toml') !== null ? src.toml('pyproject.toml') : null;
  if (!doc) return null;
  const hatch = new Map<string, Target>();
  for (const [env, body] of Object.entries(
    isObject(field(doc, 'tool', 'hatch', 'envs')) ? (field(doc, 'tool', 'hatch', 'envs') as Json) : {},
  )) {
    const scripts = field(body, 'scripts');
    for (const [name, value] of Object.entries(isObject(scripts) ? scripts : {})) {
      const list = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
      hatch.set(`${env}:${name}`, {
        at: `pyproject.toml#tool.hatch.envs.${env}.scripts.${name}`,
        label: `pyproject.toml [tool.hatch.envs.${env}.scripts] ${name}`,
        commands: list,
      });
    }
  }
  const pdm = new Map<string, Target>();
  const pdmScripts = field(doc, 'tool', 'pdm', 'scripts');
  const strings = (list: unknown[]) => list.filter((v): v is string => typeof v === 'string');
  for (const [name, value] of Object.entries(isObject(pdmScripts) ? pdmScripts : {})) {
    let commands: string[] = [];
    if (typeof value === 'string') commands = [value];
    else if (isObject(value) && typeof value.cmd === 'string') commands = [value.cmd];
    else if (isObject(value) && Array.isArray(value.cmd)) commands = [strings(value.cmd).join(' ')];
    else if (isObject(value) && typeof value.shell === 'string') commands = [value.shell];
    // A composite's entries are scripts (or commands) pdm runs in turn.
    else if (isObject(value) && Array.isArray(value.composite))
      commands = strings(value.composite).map((c) => `pdm run ${c}`);
    if (commands.length === 0) continue;
    pdm.set(name, {
      at: `pyproject.toml#tool.pdm.scripts.${name}`,
      label: `pyproject.toml [tool.pdm.scripts] ${name}`,
      commands,
    });
  }
  const builtin = (word: string, commands: string[]): Target => ({
    at: 'pyproject.toml',
    label: `hatch ${word} (hatch's own command)`,
    commands,
  });
  return {
    select(word, args) {
      const words = positional(args, new Set(['-e', '--env']));
      if (word === 'hatch') {
        if (words[0] === 'test') return [builtin('test', ['pytest'])];
        if (words[0] === 'fmt') return [builtin('fmt', ['ruff check', 'ruff format'])];
        if (words[0] !== 'run') return [];
        const name = words.find((w, i) => i > 0 && !w.startsWith('+')) ?? '';
        const t = hatch.get(name.includes(':') ? name : `default:${name}`);
        return t ? [t] : [];
      }
      if (word === 'pdm') {
        const name = words[0] === 'run' ? words[1] : words[0];
        const t = name ? pdm.get(name) : undefined;
        return t ? [t] : [];
      }
      return null;
    },
    all: () => [...hatch.values(), ...pdm.values()],
  };
}
