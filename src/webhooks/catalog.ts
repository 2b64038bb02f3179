// The events an outbound webhook endpoint can subscribe to.
export const WEBHOOK_EVENT_TYPES = [
  'session.status_running', 'session.status_idle', 'session.error', 'session.status_terminated', 'session.deleted',
  'routine_run.succeeded', 'routine_run.failed', 'routine.paused',
  'agent.created', 'agent.updated', 'agent.archived', 'agent.deleted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const SESSION_WEBHOOK_EVENTS = new Set<string>(WEBHOOK_EVENT_TYPES.filter((t) => t.startsWith('session.')));
