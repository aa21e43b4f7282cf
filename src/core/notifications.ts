/**
 * What a person is notified of: the few timeline events they should act on, not the timeline.
 * Each caller picks among these kinds in their preferences (`notify`); the default is all of them.
 * Run bookkeeping (queued, claimed, completed), settings edits and the like stay on the timeline only.
 */
export const NOTIFICATION_KINDS = [
  'new_p0',
  'run_failed',
  'plan_awaiting_approval',
  'quick_action_result',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const NOTIFICATION_DOCS: Record<NotificationKind, string> = {
  new_p0:
    'A review opened a new P0 finding on a pull request (the `review_status_changed` event with `counts.opened_p0` > 0).',
  run_failed: 'A run failed (a `run` event of kind `failed`).',
  plan_awaiting_approval:
    'A plan was reviewed and awaits approval (a `plan` event `reviewed` with `requires_approval`).',
  quick_action_result:
    "A quick action's run ended, done or not (a `run` event `completed`, `failed` or `canceled` of a `quick_action` task).",
};
