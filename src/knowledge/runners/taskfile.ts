/**
 * Taskfile (go-task): a task, its deps and `task:` commands; `task` alone runs `default`.
 */
import { commandLines } from '../ci';
import { field, isObject, type Sources } from '../sources';
import { flagValues, positional, type Target, type TaskRunner, textOf } from './shared';

export function taskfileRunner(src: Sources): TaskRunner | null {
  const file = ['Taskfile.yml', 'Taskfile.yaml', 'taskfile.yml'].find((f) => textOf(src, f) !== null);
  const tasks = file ? field(src.yaml(file), 'tasks') : null;
  if (!file || !isObject(tasks)) return null;
  const asCommand = (entry: unknown): string | null => {
    if (typeof entry === 'string') return entry;
    if (isObject(entry) && typeof entry.cmd === 'string') return entry.cmd;
    if (isObject(entry) && typeof entry.task === 'string') return `task ${entry.task}`;
    return null;
  };
  const target = (name: string): Target | null => {
    const t = tasks[name];
    if (t === undefined) return null;
    const cmds = Array.isArray(t) ? t : isObject(t) ? (Array.isArray(t.cmds) ? t.cmds : [t.cmd]) : [];
    const deps = isObject(t) && Array.isArray(t.deps) ? t.deps : [];
    return {
      at: `${file}#tasks.${name}`,
      label: `${file} task ${name}`,
      commands: [
        ...deps.flatMap((d) => {
          const n = typeof d === 'string' ? d : field(d, 'task');
          return typeof n === 'string' ? [`task ${n}`] : [];
        }),
        ...cmds.flatMap((c) => commandLines(asCommand(c))),
      ],
    };
  };
  return {
    select(word, args) {
      if (!['task', 'go-task'].includes(word)) return null;
      if (flagValues(args, ['-d', '-t'], ['--dir', '--taskfile']).length > 0) return [];
      const names = positional(args, new Set());
      return (names.length > 0 ? names : ['default']).flatMap((n) => target(n) ?? []);
    },
    all: () => Object.keys(tasks).flatMap((n) => target(n) ?? []),
  };
}
