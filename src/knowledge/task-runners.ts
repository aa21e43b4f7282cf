/**
 * Follows CI commands through the repository's task runners (runner-configs.ts) to the commands
 * they end up running, so a tool run by `tox -e typing` or `pre-commit run` from CI counts as
 * enforced, with the chain that shows it. Bounded: a depth limit, a guard against targets that
 * reach themselves, and a cap on how many commands one CI file may reach.
 */
import { commandWords, segments } from './commands';
import type { TaskRunner } from './runner-configs';

export interface ReachedCommand {
  command: string;
  /** The targets passed through, outermost first (`tox.ini#testenv:style`, `.pre-commit-config.yaml#hooks.mypy`). */
  via: string[];
  /** `.github/workflows/ci.yml: tox -e typing -> tox.ini [testenv:typing]: mypy`. */
  chain: string;
}

/** Deeper than CI → tox → pre-commit → hook → make → ... is not how repositories are built. */
const MAX_DEPTH = 6;
/** Shared prerequisites can make the walk grow fast; past this, the rest is not followed. */
const MAX_REACHED = 2000;

/** Every command `commands` (the commands of the CI file at `origin`) reach through the task runners. */
export function followRunners(
  origin: string,
  commands: readonly string[],
  runners: readonly TaskRunner[],
): ReachedCommand[] {
  const out: ReachedCommand[] = [];
  if (runners.length === 0) return out;
  const visit = (command: string, via: string[], chain: string, depth: number): void => {
    if (depth >= MAX_DEPTH) return;
    for (const segment of segments(command)) {
      for (const { word, rest } of commandWords(segment)) {
        for (const runner of runners) {
          for (const target of runner.select(word, rest) ?? []) {
            // A target already on the way here (make's `all: test`, `test: all`) is not walked again.
            if (via.includes(target.at)) continue;
            for (const next of target.commands) {
              if (out.length >= MAX_REACHED) return;
              const step = {
                command: next,
                via: [...via, target.at],
                chain: `${chain} -> ${target.label}: ${next}`,
              };
              out.push(step);
              visit(next, step.via, step.chain, depth + 1);
            }
          }
        }
      }
    }
  };
  for (const command of commands) visit(command, [], `${origin}: ${command}`, 0);
  return out;
}
