/**
 * nox: sessions and their `session.run(...)` calls, read from noxfile.py as text (never run); `nox`
 * alone runs `nox.options.sessions`, or every session.
 */
import type { Sources } from '../sources';
import { flagValues, isExpression, type Target, type TaskRunner, textOf } from './shared';

/** More sessions than any hand-written noxfile has are not read. */
const MAX_SESSIONS = 200;

/** The string literals of a call's arguments, up to the first one that is not a plain literal. */
function literalArgs(call: string): string[] {
  const out: string[] = [];
  for (const arg of call.split(/,(?![^([{]*[)\]}])/)) {
    const m = /^\s*(?:[rb]?)(["'])((?:\\.|(?!\1).)*)\1\s*$/s.exec(arg);
    if (!m) break;
    out.push(m[2] as string);
  }
  return out;
}

/** The text between the parenthesis at `open` and its match. */
function callBody(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length && i < open + 4000; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return '';
}

export function noxRunner(src: Sources): TaskRunner | null {
  const text = textOf(src, 'noxfile.py');
  if (text === null) return null;
  const sessions = new Map<string, Target>();
  // A session: `@nox.session(...)` (or `@session`) then `def name(...)`, its body the indented lines after.
  const re = /^@(?:nox\.)?session\b([\s\S]{0,2000}?)^def\s+([A-Za-z_]\w*)\s*\(/gm;
  for (const m of text.matchAll(re)) {
    if (sessions.size >= MAX_SESSIONS) break;
    const decorator = m[1] as string;
    const name = /\bname\s*=\s*["']([^"']+)["']/.exec(decorator)?.[1] ?? (m[2] as string);
    const start = (m.index ?? 0) + m[0].length;
    const end = text.slice(start).search(/\n(?=[^\s#)])/);
    const body = end === -1 ? text.slice(start) : text.slice(start, start + end);
    const commands: string[] = [];
    for (const call of body.matchAll(/\bsession\.(run|run_always|notify)\s*\(/g)) {
      const args = literalArgs(callBody(body, (call.index ?? 0) + call[0].length - 1));
      if (args.length === 0) continue;
      commands.push(call[1] === 'notify' ? `nox -s ${args[0]}` : args.join(' '));
    }
    sessions.set(name, { at: `noxfile.py#${name}`, label: `noxfile.py session ${name}`, commands });
  }
  const defaults = /nox\.options\.sessions\s*=\s*\[([^\]]{0,2000})\]/.exec(text);
  const defaultNames = defaults ? literalArgs(defaults[1] as string) : [];
  const bySession = (wanted: string) =>
    [...sessions].filter(([n]) => wanted === n || wanted.startsWith(`${n}-`) || wanted.startsWith(`${n}(`));
  return {
    select(word, args) {
      if (word !== 'nox') return null;
      const named = flagValues(args, ['-s', '-e'], ['--session', '--sessions']);
      // `-s a b`: the words after a session flag are more sessions.
      const i = args.findIndex((a) => ['-s', '-e', '--session', '--sessions'].includes(a));
      if (i !== -1) {
        for (const a of args.slice(i + 2)) {
          if (a.startsWith('-')) break;
          named.push(a);
        }
      }
      if (
        named.length === 0 ||
        named.some(isExpression) ||
        flagValues(args, ['-t', '-k'], ['--tags']).length > 0
      ) {
        const chosen = named.length === 0 && defaultNames.length > 0 ? defaultNames : [...sessions.keys()];
        return chosen.flatMap((n) => bySession(n).map(([, t]) => t));
      }
      return [...new Map(named.flatMap(bySession)).values()];
    },
    all: () => [...sessions.values()],
  };
}
