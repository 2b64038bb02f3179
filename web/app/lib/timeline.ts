// Turns a session's events (history pages, then the live subscription) into what the session
// page shows: one item per message (streamed chunks joined until the final one replaces them),
// one per tool call with its result, and one line per status change, interrupt or error.
// Events are applied once each (deduplicated by id), so history and live may overlap.
import { USAGE_FIELDS, usageText, type Usage } from './format.js';

export type Part =
  | { __typename: 'TextPart'; text: string; streamId?: string | null }
  | { __typename: 'ReasoningPart'; text: string; redacted: boolean; streamId?: string | null }
  | { __typename: 'ToolCallPart'; callId: string; toolName: string; args: unknown }
  | { __typename: 'ToolResultPart'; callId: string; toolName: string; status: 'ok' | 'error'; result: unknown }
  | { __typename: 'StatusPart'; level: string; statusText: string | null }
  | { __typename: 'ErrorPart'; code: string; message: string }
  | { __typename: 'FilePart' | 'ImagePart' | 'VideoPart'; mediaType?: string; name?: string; uri?: string | null };

interface Base {
  id: string;
  at: string;
}
export type SessionEvent = Base &
  (
    | { __typename: 'UserMessageEvent'; content: { __typename: string; text?: string }[] }
    | { __typename: 'SystemMessageEvent'; content: { text: string }[] }
    | { __typename: 'AgentMessageEvent'; messageId: string; text: string; final: boolean | null }
    | { __typename: 'AgentReasoningEvent'; final: boolean | null; part: Part }
    | { __typename: 'AgentToolUseEvent' | 'AgentToolResultEvent' | 'AgentStatusEvent'; part: Part }
    | { __typename: 'UserInterruptEvent'; by: string }
    | { __typename: 'SessionStatusIdleEvent'; stopReason: { type: string }; usage: (Usage & { durationMs: number }) | null }
    | { __typename: 'SessionCompactedEvent'; replacedEvents: number; trigger: string; tokensBefore: number; tokensAfter: number }
    | { __typename: 'UserCompactEvent'; by: string }
    | { __typename: 'SessionErrorEvent'; error: { type: string; message: string; retryStatus: string; attempt: number | null } }
    | { __typename: 'SessionStatusRunningEvent' | 'SessionStatusTerminatedEvent' | 'SessionDeletedEvent' }
    // multiagent: what a coordinator's threads do, on the session's stream
    | { __typename: 'ThreadStartedEvent'; threadId: string; agent: { name: string } }
    | { __typename: 'ThreadMessageEvent'; threadId: string; agent: { name: string }; text: string }
    | { __typename: 'ThreadIdleEvent'; threadId: string; agent: { name: string }; stopReason: { type: string } }
  );

/** The GraphQL selection that fills SessionEvent (fragment spreads on every union member). */
export const EVENT_FIELDS = `
  __typename
  ... on UserMessageEvent { id at content { __typename ... on TextBlock { text } } }
  ... on SystemMessageEvent { id at content { text } }
  ... on AgentMessageEvent { id at messageId text final }
  ... on AgentReasoningEvent { id at final part { ...PartFields } }
  ... on AgentToolUseEvent { id at part { ...PartFields } }
  ... on AgentToolResultEvent { id at part { ...PartFields } }
  ... on AgentStatusEvent { id at part { ...PartFields } }
  ... on UserInterruptEvent { id at by }
  ... on SessionStatusRunningEvent { id at }
  ... on SessionStatusIdleEvent { id at stopReason { type } usage { ${USAGE_FIELDS} durationMs } }
  ... on SessionCompactedEvent { id at replacedEvents trigger tokensBefore tokensAfter }
  ... on UserCompactEvent { id at by }
  ... on SessionErrorEvent { id at error { type message retryStatus attempt } }
  ... on SessionStatusTerminatedEvent { id at }
  ... on SessionDeletedEvent { id at }
  ... on ThreadStartedEvent { id at threadId agent { name } }
  ... on ThreadMessageEvent { id at threadId text agent { name } }
  ... on ThreadIdleEvent { id at threadId agent { name } stopReason { type } }`;

export const PART_FRAGMENT = `fragment PartFields on MessagePart {
  __typename
  ... on TextPart { text streamId }
  ... on ReasoningPart { text redacted streamId }
  ... on ToolCallPart { callId toolName args }
  ... on ToolResultPart { callId toolName status result }
  ... on StatusPart { level statusText: text }
  ... on ErrorPart { code message }
  ... on FilePart { name mediaType uri }
  ... on ImagePart { mediaType uri }
  ... on VideoPart { mediaType uri }
}`;

/** `eventId`: the last event the item shows (where "fork from here" cuts); null while a sent message is pending. */
export type Item = { eventId: string | null } & (
  | { kind: 'user'; key: string; at: string; text: string; pending?: boolean }
  | { kind: 'system'; key: string; at: string; text: string }
  | { kind: 'agent'; key: string; at: string; text: string; streaming: boolean }
  | { kind: 'reasoning'; key: string; at: string; text: string; streaming: boolean }
  | { kind: 'tool'; key: string; at: string; toolName: string; args: unknown; result?: unknown; status?: 'ok' | 'error' }
  | { kind: 'note'; key: string; at: string; tone: 'plain' | 'warn' | 'bad'; text: string }
);
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export type SessionStatus = 'idle' | 'running' | 'provisioning' | 'terminated' | 'deleted';

/**
 * Where a turn's time went, read from its events' timestamps (the same moments the turn's trace
 * spans cover): each model step runs from the turn's start or the last tool result to the next
 * tool call or the final message; each tool call from its call to its result.
 */
export interface TurnTiming {
  n: number;
  startedAt: string;
  /** Milliseconds from the turn's start to its idle event (null while it runs). */
  ms: number | null;
  stopReason: string | null;
  /** `key`: the id of the event that ends the step. */
  steps: { key: string; kind: 'model' | 'tool'; name: string; ms: number; status?: 'ok' | 'error' }[];
}

const msBetween = (from: string, to: string) => Math.max(0, Date.parse(to) - Date.parse(from));

export class Timeline {
  readonly items: Item[] = [];
  status: SessionStatus | null = null;
  lastEventId: string | null = null;
  eventCount = 0;
  /** Per-turn timing, oldest first (see TurnTiming). */
  readonly turns: TurnTiming[] = [];
  private seen = new Set<string>();
  private byKey = new Map<string, number>();
  /** The running turn's last boundary (its start, a tool call or result) and its calls' start times. */
  private turnCursor: string | null = null;
  private callsStarted = new Map<string, string>();

  /** The event being applied (its id becomes the new or updated item's `eventId`). */
  private current: string | null = null;

  private push(item: DistributiveOmit<Item, 'eventId'>): void {
    this.byKey.set(item.key, this.items.length);
    this.items.push({ ...item, eventId: this.current } as Item);
  }

  private find<K extends Item['kind']>(key: string): Extract<Item, { kind: K }> | undefined {
    const i = this.byKey.get(key);
    if (i === undefined) return undefined;
    const item = this.items[i] as Extract<Item, { kind: K }>;
    item.eventId = this.current; // found to be updated by the event being applied
    return item;
  }

  /** A message this page just sent: shown at once, confirmed when its event arrives. */
  addPending(key: string, text: string): void {
    this.push({ kind: 'user', key, at: new Date().toISOString(), text, pending: true });
  }

  /** Applies events in order; returns whether anything changed. */
  apply(events: readonly SessionEvent[]): boolean {
    let changed = false;
    for (const e of events) {
      if (this.seen.has(e.id)) continue;
      this.seen.add(e.id);
      this.eventCount++;
      this.lastEventId = e.id;
      this.time(e);
      this.current = e.id;
      this.one(e);
      this.current = null;
      changed = true;
    }
    return changed;
  }

  /** A user message echoed by the send mutation replaces its pending copy. */
  confirm(pendingKey: string, event: SessionEvent): void {
    const i = this.byKey.get(pendingKey);
    if (i !== undefined) {
      this.byKey.delete(pendingKey);
      this.byKey.set(`evt:${event.id}`, i);
      const item = this.items[i] as Extract<Item, { kind: 'user' }>;
      this.items[i] = { ...item, key: `evt:${event.id}`, pending: false, at: event.at, eventId: event.id };
      this.seen.add(event.id);
      this.eventCount++;
    } else {
      this.apply([event]);
    }
  }

  private time(e: SessionEvent): void {
    const turn = this.turns.at(-1);
    const open = turn && turn.ms === null ? turn : null;
    switch (e.__typename) {
      case 'SessionStatusRunningEvent':
        this.turns.push({ n: this.turns.length + 1, startedAt: e.at, ms: null, stopReason: null, steps: [] });
        this.turnCursor = e.at;
        this.callsStarted.clear();
        return;
      case 'AgentToolUseEvent':
        if (!open || e.part.__typename !== 'ToolCallPart') return;
        if (this.turnCursor) open.steps.push({ key: e.id, kind: 'model', name: 'model', ms: msBetween(this.turnCursor, e.at) });
        this.callsStarted.set(e.part.callId, e.at);
        this.turnCursor = e.at;
        return;
      case 'AgentToolResultEvent': {
        if (!open || e.part.__typename !== 'ToolResultPart') return;
        const from = this.callsStarted.get(e.part.callId) ?? this.turnCursor ?? e.at;
        open.steps.push({ key: e.id, kind: 'tool', name: e.part.toolName, ms: msBetween(from, e.at), status: e.part.status });
        this.turnCursor = e.at;
        return;
      }
      case 'AgentMessageEvent':
        if (!open || !e.final || !this.turnCursor) return;
        open.steps.push({ key: e.id, kind: 'model', name: 'model', ms: msBetween(this.turnCursor, e.at) });
        this.turnCursor = e.at;
        return;
      case 'SessionStatusIdleEvent':
        if (!open) return;
        open.ms = msBetween(open.startedAt, e.at);
        open.stopReason = e.stopReason.type;
        this.turnCursor = null;
        return;
      default:
        return;
    }
  }

  private one(e: SessionEvent): void {
    switch (e.__typename) {
      case 'UserMessageEvent': {
        const text = e.content.map((b) => b.text ?? `[${b.__typename.replace(/Block$/, '').toLowerCase()}]`).join('\n');
        return this.push({ kind: 'user', key: `evt:${e.id}`, at: e.at, text });
      }
      case 'SystemMessageEvent':
        return this.push({ kind: 'system', key: `evt:${e.id}`, at: e.at, text: e.content.map((b) => b.text).join('\n') });
      case 'AgentMessageEvent': {
        const key = `msg:${e.messageId}`;
        const item = this.find<'agent'>(key);
        if (!item) return this.push({ kind: 'agent', key, at: e.at, text: e.text, streaming: e.final === false });
        if (e.final === false) item.text += e.text;
        else {
          item.text = e.text;
          item.streaming = false;
        }
        return;
      }
      case 'AgentReasoningEvent': {
        const part = e.part as Extract<Part, { __typename: 'ReasoningPart' }>;
        const key = `reason:${part.streamId ?? e.id}`;
        const item = this.find<'reasoning'>(key);
        const text = part.redacted ? '(redacted reasoning)' : part.text;
        if (!item) return this.push({ kind: 'reasoning', key, at: e.at, text, streaming: e.final === false });
        if (e.final === false) item.text += text;
        else {
          item.text = text;
          item.streaming = false;
        }
        return;
      }
      case 'AgentToolUseEvent': {
        const part = e.part as Extract<Part, { __typename: 'ToolCallPart' }>;
        return this.push({ kind: 'tool', key: `tool:${part.callId}`, at: e.at, toolName: part.toolName, args: part.args });
      }
      case 'AgentToolResultEvent': {
        const part = e.part as Extract<Part, { __typename: 'ToolResultPart' }>;
        const item = this.find<'tool'>(`tool:${part.callId}`);
        if (item) {
          item.result = part.result;
          item.status = part.status;
        } else this.push({ kind: 'tool', key: `tool:${part.callId}`, at: e.at, toolName: part.toolName, args: null, result: part.result, status: part.status });
        return;
      }
      case 'AgentStatusEvent': {
        const part = e.part as Extract<Part, { __typename: 'StatusPart' }>;
        return this.push({
          kind: 'note',
          key: `evt:${e.id}`,
          at: e.at,
          tone: 'plain',
          text: `Agent ${part.level}${part.statusText ? `: ${part.statusText}` : ''}`,
        });
      }
      case 'UserInterruptEvent':
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'warn', text: `Interrupted by ${e.by}` });
      case 'SessionStatusRunningEvent':
        this.status = 'running';
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'plain', text: 'Turn started' });
      case 'SessionStatusIdleEvent':
        this.status = 'idle';
        this.endStreams();
        return this.push({
          kind: 'note',
          key: `evt:${e.id}`,
          at: e.at,
          tone: e.stopReason.type === 'end_turn' ? 'plain' : 'warn',
          text: `Turn ended (${e.stopReason.type.replace(/_/g, ' ')})${e.usage ? ` · ${usageText(e.usage)} · ${(e.usage.durationMs / 1000).toFixed(1)} s` : ''}`,
        });
      case 'UserCompactEvent':
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'plain', text: `Compaction asked by ${e.by}` });
      case 'SessionCompactedEvent':
        return this.push({
          kind: 'note',
          key: `evt:${e.id}`,
          at: e.at,
          tone: 'plain',
          text: `Conversation compacted (${e.trigger}): ${e.replacedEvents} earlier events summarised, about ${e.tokensBefore.toLocaleString('en-US')} → ${e.tokensAfter.toLocaleString('en-US')} tokens`,
        });
      case 'SessionErrorEvent':
        return this.push({
          kind: 'note',
          key: `evt:${e.id}`,
          at: e.at,
          tone: 'bad',
          text: `Error ${e.error.type}: ${e.error.message}${e.error.retryStatus === 'retrying' ? ' (retrying)' : ''}`,
        });
      case 'SessionStatusTerminatedEvent':
        this.status = 'terminated';
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'warn', text: 'Session terminated' });
      case 'SessionDeletedEvent':
        this.status = 'deleted';
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'bad', text: 'Session deleted' });
      case 'ThreadStartedEvent':
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'plain', text: `Delegated to ${e.agent.name} (thread ${e.threadId})` });
      case 'ThreadMessageEvent':
        return this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'plain', text: `${e.agent.name} replied: ${e.text}` });
      case 'ThreadIdleEvent':
        return e.stopReason.type === 'end_turn'
          ? undefined
          : this.push({ kind: 'note', key: `evt:${e.id}`, at: e.at, tone: 'warn', text: `${e.agent.name}'s thread stopped: ${e.stopReason.type}` });
    }
  }

  /** An interrupted stream never gets its final event: stop showing it as streaming. */
  private endStreams(): void {
    for (const item of this.items) if ((item.kind === 'agent' || item.kind === 'reasoning') && item.streaming) item.streaming = false;
  }
}
