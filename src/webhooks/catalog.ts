// The events an outbound webhook endpoint can subscribe to.
export const WEBHOOK_EVENT_TYPES = [
  'session.status_running',
  'session.status_idle',
  'session.error',
  'session.status_terminated',
  'session.deleted',
  'session.requires_action',
  'routine_run.succeeded',
  'routine_run.failed',
  'routine.paused',
  'agent.created',
  'agent.updated',
  'agent.archived',
  'agent.deleted',
  'memory.created',
  'memory.updated',
  'memory.deleted',
  'outcome.ended',
  // Multiagent (issue #32): a coordinator's thread started, a thread's turn ended (stored on the session's stream).
  'thread.started',
  'thread.idle',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

// Stored session event types delivered as themselves. `session.requires_action` is derived: one
// delivery per agent.tool_use awaiting a confirmation, carrying that event's id.
export const SESSION_WEBHOOK_EVENTS = new Set<string>(
  WEBHOOK_EVENT_TYPES.filter((t) => (t.startsWith('session.') && t !== 'session.requires_action') || t.startsWith('thread.')),
);
