/**
 * The task runners a CI command may go through before it reaches a tool (`tox -e typing`,
 * `pre-commit run`, `make test`, `just lint`, `nox -s tests`, `task lint`, `hatch run`,
 * `pdm run`), each read from its configuration file at the repository root by its own module
 * under runners/: which targets an invocation selects and the commands each target runs. Nothing
 * is executed, noxfile.py included. Following the chain is task-runners.ts.
 */
import { justRunner } from './runners/just';
import { makeRunner } from './runners/make';
import { noxRunner } from './runners/nox';
import { preCommitRunner } from './runners/pre-commit';
import { pyprojectScriptsRunner } from './runners/pyproject-scripts';
import type { TaskRunner } from './runners/shared';
import { taskfileRunner } from './runners/taskfile';
import { toxRunnerOf } from './runners/tox';
import type { Sources } from './sources';

export { RUNNER_FILES, type Target, type TaskRunner } from './runners/shared';

/** Every task runner the repository configures at its root. */
export function readTaskRunners(src: Sources): TaskRunner[] {
  return [
    toxRunnerOf(src),
    preCommitRunner(src),
    makeRunner(src),
    justRunner(src),
    taskfileRunner(src),
    noxRunner(src),
    pyprojectScriptsRunner(src),
  ].filter((r): r is TaskRunner => r !== null);
}
