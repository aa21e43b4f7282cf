/** The declaration: every /api/v1 operation, in one list, from one file per resource area. */
import { operations as collections } from './collections';
import { operations as dashboards } from './dashboards';
import { operations as findingEvents } from './finding-events';
import { operations as installations } from './installations';
import { operations as keys } from './keys';
import { operations as ledgerCollections } from './ledger-collections';
import { operations as metricRecords } from './metric-records';
import { operations as plans } from './plans';
import { operations as preferences } from './preferences';
import { operations as projects } from './projects';
import type { Operation } from './registry';
import { operations as repoKnowledge } from './repo-knowledge';
import { operations as reviewDiff } from './review-diff';
import { operations as reviewers } from './reviewers';
import { operations as reviews } from './reviews';
import { operations as scorecards } from './scorecards';
import { operations as settings } from './settings';
import { operations as swarms } from './swarms';
import { tasksEvents } from './task-events';
import { operations as tasks } from './tasks';
import { operations as timeline } from './timeline';

export const OPERATIONS: Operation[] = [
  ...projects,
  ...settings,
  ...keys,
  ...installations,
  ...tasks,
  tasksEvents,
  ...reviews,
  ...reviewers,
  ...ledgerCollections,
  ...reviewDiff,
  ...findingEvents,
  ...plans,
  ...repoKnowledge,
  ...scorecards,
  ...timeline,
  ...swarms,
  ...dashboards,
  ...metricRecords,
  ...preferences,
  ...collections,
];
