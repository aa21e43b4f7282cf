/** What operation handlers are given: the process's long-lived services. */
import type { Logger } from 'pino';
import type { CodeHosts } from '../codehost';
import type { Config } from '../config';
import type { Engine } from '../engine/engine';
import type { CheckRecompute } from '../review/disposition';
import type { Database } from '../storage/database';

export interface Services {
  config: Config;
  db: Database;
  engine: Engine;
  codeHosts: CodeHosts;
  logger: Logger;
  /**
   * Recomputes a pull request's `Service / Review` check after a person dismissed or reopened one
   * of its findings. The check lives in automation/, which operations may not import: main.ts
   * hands it in.
   */
  recomputeCheck: CheckRecompute;
}
