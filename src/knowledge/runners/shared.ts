/**
 * What every task runner reader shares: the target a runner runs, the runner's interface, which
 * files are read, the bounds on them, and reading a command's flags and words.
 */
import type { Sources } from '../sources';

export interface Target {
  /** Evidence as `path#name` (`tox.ini#testenv:typing`), listed in a tool's `enforced_in`. */
  at: string;
  /** How the chain names it (`tox.ini [testenv:typing]`). */
  label: string;
  /** Its shell commands; a prerequisite is a command of its runner (`make lint`). */
  commands: string[];
}

export interface TaskRunner {
  /** The targets a command runs, given its command word and the words after it; null: not this runner. */
  select(word: string, args: string[]): Target[] | null;
  /** Every target it defines. */
  all(): Target[];
}

/** Configuration files of task runners, read at the repository root only (CI runs them from there). */
export const RUNNER_FILES = [
  'tox.toml',
  '.pre-commit-config.yaml',
  '.pre-commit-config.yml',
  'noxfile.py',
  'Makefile',
  'makefile',
  'GNUmakefile',
  'justfile',
  'Justfile',
  '.justfile',
  'Taskfile.yml',
  'Taskfile.yaml',
  'taskfile.yml',
];

/** A larger configuration file is not read for targets (a generated Makefile says nothing useful). */
export const MAX_TEXT = 256 * 1024;
/**
 * Lines, lists and sessions longer or more numerous than any hand-written configuration are
 * skipped: the patterns below are then linear in the file, whatever the repository committed.
 */
export const MAX_LINE = 2000;

export const positional = (args: string[], valueFlags: ReadonlySet<string>) => {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    if (a.startsWith('-')) {
      if (valueFlags.has(a)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
};

/** The value of a flag (`-e x`, `-ex`, `--env=x`), every occurrence. */
export function flagValues(args: string[], short: string[], long: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') break;
    if ([...short, ...long].includes(a)) out.push(args[++i] ?? '');
    else if (long.some((l) => a.startsWith(`${l}=`))) out.push(a.slice(a.indexOf('=') + 1));
    else if (short.some((s) => a.startsWith(s) && !a.startsWith('--') && a.length > s.length))
      out.push(a.slice(2).replace(/^=/, ''));
  }
  return out;
}

/** A value only known when CI runs (`${{ matrix.env }}`, `$ENV`): it may be any target. */
export const isExpression = (value: string) => value === '' || /[$%{]/.test(value);

export function textOf(src: Sources, path: string): string | null {
  const text = src.has(path) ? src.text(path) : null;
  return text !== null && text.length <= MAX_TEXT ? text : null;
}
