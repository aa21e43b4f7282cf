/**
 * The builtin rules, read and compiled in the background once a process that runs reviews has
 * started (`svc serve` with its worker, `svc worker`), so the first review does not do it on the
 * server's thread while /healthz and API reads wait (reviewers/builtin/engine.ts,
 * `prepareBuiltinSkills`). A failure here only costs that head start: the review reads and
 * compiles the rules itself, and reports what is wrong with them.
 */
import type { Logger } from 'pino';

export function prepareAnalysisInBackground(logger: Logger): void {
  void Promise.all([import('../reviewers/builtin/engine'), import('../skills/catalog')])
    .then(([engine, catalog]) => engine.prepareBuiltinSkills(catalog.loadCatalog))
    .catch((error: unknown) =>
      logger.warn({ err: error }, 'could not prepare the builtin rules ahead of the first review'),
    );
}
