/** What operation handlers are given: the process's long-lived services. */
import type { Logger } from 'pino';
import type { CodeHosts } from '../codehost';
import type { Config } from '../config';
import type { Engine } from '../engine/engine';
import type { Database } from '../storage/database';

export interface Services {
  config: Config;
  db: Database;
  engine: Engine;
  codeHosts: CodeHosts;
  logger: Logger;
}
