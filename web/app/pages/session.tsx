// One session, live: the whole history (paged in, shown in a virtualised list so 10,000 events
// stay smooth), then the `sessionEvents` subscription over graphql-sse with text appearing as it
// streams, tool calls with their results, status; send a message, interrupt; budget and wallet.
import { useEffect, useLayoutEffect, useReducer, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { doc, gql, subscribe } from '../../shared/graphql.js';
import { useAction, useAsync } from '../lib/use-async.js';
import { href, navigate } from '../lib/router.js';
import { cents, when } from '../lib/format.js';
import { ErrorNote, Loading, Page } from '../ui.js';
import { Timeline, type Item, type SessionEvent, type TurnTiming } from '../lib/timeline.js';
import {
  HISTORY,
  LIVE,
  SESSION_FIELDS,
  THREAD_HISTORY,
  THREAD_LIVE,
  budgetText,
  forkSession,
  interrupt,
  listThreads,
  sendMessage,
  statusBadge,
  usageText,
  type SessionRow,
} from './session-api.js';
import { SessionMemoryMounts } from './memory-stores.js';
import { SessionOutcomes } from './outcomes.js';

interface Info {
  session: SessionRow;
  wallet: { balance: { amount: string; currency: string } };
}
const INFO = doc`query SessionInfo($id: String!) { session(id: $id) { ${SESSION_FIELDS} } wallet { balance { amount currency } } }`;
const AGENT_NAME = doc`query SessionAgent($id: String!) { agent(id: $id) { displayName } }`;

type Phase = { kind: 'history'; loaded: number } | { kind: 'live' } | { kind: 'stopped'; error: Error };

function useTimeline(sessionId: string, threadId: string | null, onTurnEnd: () => void) {
  const timeline = useRef(new Timeline());
  const [, render] = useReducer((n: number) => n + 1, 0);
  const [phase, setPhase] = useState<Phase>({ kind: 'history', loaded: 0 });
  const onTurnEndRef = useRef(onTurnEnd);
  onTurnEndRef.current = onTurnEnd;

  useEffect(() => {
    timeline.current = new Timeline();
    let cancelled = false;
    let stop: (() => void) | null = null;
    // Streamed chunks arrive many per frame: apply each at once, repaint once per frame.
    let frame = 0;
    const schedule = () => {
      if (!frame)
        frame = requestAnimationFrame(() => {
          frame = 0;
          render();
        });
    };
    (async () => {
      let cursor: string | null = null;
      for (;;) {
        const page: { sessionEventsPage: { cursor: string | null; hasMore: boolean; events: SessionEvent[] } } = await gql(
          threadId ? THREAD_HISTORY : HISTORY,
          {
            id: sessionId,
            cursor,
            ...(threadId ? { thread: threadId } : {}),
          },
        );
        if (cancelled) return;
        timeline.current.apply(page.sessionEventsPage.events);
        setPhase({ kind: 'history', loaded: timeline.current.eventCount });
        schedule();
        if (!page.sessionEventsPage.hasMore || !page.sessionEventsPage.cursor) break;
        cursor = page.sessionEventsPage.cursor;
      }
      setPhase({ kind: 'live' });
      stop = subscribe<{ sessionEvents: SessionEvent }>(
        threadId ? THREAD_LIVE : LIVE,
        { id: sessionId, after: timeline.current.lastEventId, ...(threadId ? { thread: threadId } : {}) },
        {
          next: (d) => {
            if (!timeline.current.apply([d.sessionEvents])) return;
            if (d.sessionEvents.__typename === 'SessionStatusIdleEvent') onTurnEndRef.current();
            schedule();
          },
          error: (error) => setPhase({ kind: 'stopped', error }),
          complete: () => setPhase({ kind: 'stopped', error: new Error('The live stream ended.') }),
        },
      );
    })().catch((error: Error) => !cancelled && setPhase({ kind: 'stopped', error }));
    return () => {
      cancelled = true;
      stop?.();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [sessionId, threadId]);

  return { timeline: timeline.current, phase, render };
}

function pretty(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return text.length > 4000 ? `${text.slice(0, 4000)}\n… (${text.length - 4000} more characters)` : text;
}

/** "Fork from here": a new session with the history up to this item's last event. */
function ForkButton({ item, onFork }: { item: Item; onFork: ((eventId: string) => void) | null }) {
  if (!onFork || !item.eventId) return null;
  const eventId = item.eventId;
  return (
    <button
      type="button"
      className="link fork"
      onClick={() => onFork(eventId)}
      title="A new session with the conversation up to here and a copy of the current files"
    >
      Fork from here
    </button>
  );
}

function ItemView({ item, onFork }: { item: Item; onFork: ((eventId: string) => void) | null }) {
  return (
    <>
      <ItemBody item={item} />
      <ForkButton item={item} onFork={onFork} />
    </>
  );
}

function ItemBody({ item }: { item: Item }) {
  switch (item.kind) {
    case 'user':
      return (
        <div className="bubble user">
          <span className="by">You{item.pending ? ' · sending…' : ''}</span>
          <p>{item.text}</p>
        </div>
      );
    case 'system':
      return (
        <div className="bubble system">
          <span className="by">System</span>
          <p>{item.text}</p>
        </div>
      );
    case 'agent':
      return (
        <div className="bubble agent" data-streaming={item.streaming || undefined}>
          <span className="by">Agent{item.streaming ? ' · writing…' : ''}</span>
          <p>{item.text}</p>
        </div>
      );
    case 'reasoning':
      return (
        <details className="bubble reasoning">
          <summary>Reasoning{item.streaming ? ' · thinking…' : ''}</summary>
          <p>{item.text}</p>
        </details>
      );
    case 'tool':
      return (
        <details className={`bubble tool ${item.status ?? 'pending'}`}>
          <summary>
            Tool <code>{item.toolName}</code> · {item.status === undefined ? 'running…' : item.status === 'ok' ? 'done' : 'failed'}
          </summary>
          <p className="muted">Arguments</p>
          <pre>{pretty(item.args)}</pre>
          {item.result !== undefined ? (
            <>
              <p className="muted">Result</p>
              <pre>{pretty(item.result)}</pre>
            </>
          ) : null}
        </details>
      );
    case 'note':
      return (
        <p className={`note ${item.tone}`}>
          {item.text} <small className="muted">{when(item.at)}</small>
        </p>
      );
  }
}

function Conversation({ items, version, hint, onFork }: { items: Item[]; version: number; hint: string | null; onFork: ((eventId: string) => void) | null }) {
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const virtual = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 72,
    overscan: 6,
    getItemKey: (i) => items[i]!.key,
  });
  // Follow the conversation while the reader is at the bottom; leave them alone when scrolled up.
  useLayoutEffect(() => {
    if (stick.current && items.length) virtual.scrollToIndex(items.length - 1, { align: 'end' });
  }, [version, items.length, virtual]);
  const onScroll = () => {
    const el = scroller.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable log must be reachable by keyboard (axe's scrollable-region-focusable)
    <div ref={scroller} className="timeline" onScroll={onScroll} tabIndex={0} role="log" aria-live="off" aria-label="Conversation">
      {hint && !items.length ? (
        <p className="timeline-empty" data-testid="session-hint">
          {hint}
        </p>
      ) : null}
      <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
        {virtual.getVirtualItems().map((row) => (
          <div
            key={row.key}
            data-index={row.index}
            ref={virtual.measureElement}
            className="row"
            style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${row.start}px)` }}
          >
            <ItemView item={items[row.index]!} onFork={onFork} />
          </div>
        ))}
      </div>
    </div>
  );
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** Where each turn's time went: its model steps and tool calls with their durations (newest turn first). */
function TurnTimings({ turns }: { turns: readonly TurnTiming[] }) {
  if (!turns.length) return null;
  return (
    <details className="card compact turn-timing" data-testid="turn-timing">
      <summary>
        Turn timing ({turns.length} {turns.length === 1 ? 'turn' : 'turns'})
      </summary>
      <ol reversed>
        {[...turns].reverse().map((t) => (
          <li key={t.n} data-testid="turn-timing-turn">
            <strong>Turn {t.n}</strong> · {t.ms === null ? 'running' : seconds(t.ms)}
            {t.stopReason ? <span className="muted"> ({t.stopReason.replace(/_/g, ' ')})</span> : null}
            <ul>
              {t.steps.map((step) => (
                <li key={step.key} data-testid="turn-timing-step">
                  {step.kind === 'model' ? 'model call' : <code>{step.name}</code>} · {seconds(step.ms)}
                  {step.status === 'error' ? <span className="muted"> (error)</span> : null}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
    </details>
  );
}

export function SessionPage({ id }: { id: string }) {
  const info = useAsync(() => gql<Info>(INFO, { id }), [id]);
  // multiagent: the coordinator's threads, shown one at a time (a switcher), live.
  const [threadId, setThreadId] = useState<string | null>(null);
  const threads = useAsync(() => listThreads(id), [id]);
  const reloadThreads = threads.reload;
  const onTurnEnd = () => {
    info.reload();
    reloadThreads();
  };
  const { timeline, phase, render } = useTimeline(id, threadId, onTurnEnd);
  const [text, setText] = useState('');
  const [announce, setAnnounce] = useState('');
  const session = info.data?.session;
  // The agent by name (a deleted agent keeps showing its id).
  const agentId = session?.agentId ?? null;
  const agentName = useAsync(
    () => (agentId ? gql<{ agent: { displayName: string } }>(AGENT_NAME, { id: agentId }).then((d) => d.agent.displayName) : Promise.resolve(null)),
    [agentId],
  );
  const status = threadId ? (session?.status ?? null) : (timeline.status ?? session?.status ?? null);
  // While the session works, its threads (new ones, their status) are looked at again.
  useEffect(() => {
    if (status !== 'running') return;
    const timer = setInterval(reloadThreads, 1500);
    return () => clearInterval(timer);
  }, [status, reloadThreads]);

  // Provisioning ends without an event: look again until the sandbox is ready.
  const reloadInfo = info.reload;
  useEffect(() => {
    if (status !== 'provisioning') return;
    const timer = setInterval(reloadInfo, 1000);
    return () => clearInterval(timer);
  }, [status, reloadInfo]);

  useEffect(() => {
    if (status === 'running') setAnnounce('The agent is working.');
    else if (status === 'idle' && timeline.eventCount) setAnnounce('The agent finished its turn.');
  }, [status, timeline.eventCount]);

  const send = useAction(async (message: string) => {
    const key = `pending:${Date.now()}`;
    timeline.addPending(key, message);
    render();
    try {
      const echoed = await sendMessage(id, message);
      const first = echoed[0];
      if (first) timeline.confirm(key, first);
    } finally {
      render();
    }
  });
  const stop = useAction(async () => interrupt(id));
  const fork = useAction(async (eventId: string) => {
    const made = await forkSession(id, eventId);
    navigate('sessions', made.id);
  });

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const message = text.trim();
    if (!message || send.busy) return;
    setText('');
    void send.run(message);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) submit();
  };

  const live = phase.kind === 'live';
  const closed = status === 'terminated' || status === 'deleted';
  return (
    <Page title={session?.title || 'Session'} actions={status ? <span data-testid="session-status">{statusBadge(status)}</span> : null}>
      <p>
        <a href={href('sessions')}>← All sessions</a>
        {session?.agentId ? (
          <>
            {' '}
            · agent <a href={href('agents', session.agentId)}>{agentName.data ?? <code>{session.agentId}</code>}</a>
          </>
        ) : null}{' '}
        · <code>{id}</code>
        {session?.forkedFrom ? (
          <span data-testid="forked-from">
            {' '}
            · forked from <a href={href('sessions', session.forkedFrom.sessionId)}>{session.forkedFrom.sessionId}</a>
          </span>
        ) : null}
      </p>
      <ErrorNote error={fork.error} prefix="Not forked" />
      <ErrorNote error={info.error} />
      {session ? (
        <dl className="stats card compact">
          <div>
            <dt>Model</dt>
            <dd>{session.llm}</dd>
          </div>
          <div>
            <dt>Budget</dt>
            <dd data-testid="session-budget">{budgetText(session.budget)}</dd>
          </div>
          <div>
            <dt>Usage</dt>
            <dd data-testid="session-usage">{usageText(session.usage)}</dd>
          </div>
          <div>
            <dt>Wallet</dt>
            <dd>{cents(info.data!.wallet.balance.amount, info.data!.wallet.balance.currency)}</dd>
          </div>
          <div>
            <dt>Events</dt>
            <dd>{timeline.eventCount}</dd>
          </div>
        </dl>
      ) : null}
      <SessionMemoryMounts sessionId={id} />
      {threads.data?.length ? (
        <nav className="actions" aria-label="Threads" data-testid="session-threads">
          <button type="button" className={threadId ? 'secondary' : undefined} aria-pressed={!threadId} onClick={() => setThreadId(null)}>
            Coordinator
          </button>
          {threads.data.map((t) => (
            <button
              type="button"
              key={t.id}
              className={threadId === t.id ? undefined : 'secondary'}
              aria-pressed={threadId === t.id}
              onClick={() => setThreadId(t.id)}
              data-thread={t.id}
            >
              {t.agent.name} · {t.status}
            </button>
          ))}
        </nav>
      ) : null}
      <SessionOutcomes sessionId={id} status={status} />
      <TurnTimings turns={timeline.turns} />
      {phase.kind === 'history' ? <Loading what={`history (${phase.loaded} events so far)`} /> : null}
      {phase.kind === 'stopped' ? <ErrorNote error={phase.error} prefix="Live updates stopped" /> : null}
      <p className="visually-hidden" role="status">
        {announce}
      </p>
      <Conversation
        items={timeline.items}
        version={timeline.eventCount + timeline.items.length}
        onFork={live && !closed && !fork.busy ? (eventId) => void fork.run(eventId) : null}
        hint={
          !live
            ? null
            : closed
              ? 'This session is closed and has no messages.'
              : status === 'provisioning'
                ? 'The sandbox is starting. You can write your first message below already: the agent answers once it is ready.'
                : 'No messages yet. Write a first message below and press Send (or Enter): the agent’s reply streams in here, with its tool calls as it works.'
        }
      />
      <form className="composer" onSubmit={submit}>
        <label htmlFor="message">Message</label>
        <textarea
          id="message"
          rows={2}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          onKeyDown={onKey}
          disabled={!live || closed}
          placeholder={closed ? 'This session is closed.' : 'Write to the agent (Enter sends, Shift+Enter for a new line)'}
        />
        <div className="actions">
          <button type="submit" disabled={!live || closed || !text.trim() || send.busy}>
            Send
          </button>
          <button type="button" className="danger secondary" onClick={() => void stop.run()} disabled={status !== 'running' || stop.busy}>
            Interrupt
          </button>
        </div>
        <ErrorNote error={send.error} prefix="Not sent" />
        <ErrorNote error={stop.error} prefix="Not interrupted" />
      </form>
    </Page>
  );
}
