import { useEffect, useReducer, useRef, useState } from 'preact/hooks';
import { call, type CallError } from './api.js';
import { openStream } from './stream.js';
import { composerIntent } from './composer-policy.js';
import { admissionsOf, entryOf, initialMirror, reduceMirror, runningStepOf, type ConversationEntry, type MessageClass, type MirrorRow, type MirrorState } from './mirror.js';
import { QueueDock } from './queue-dock.js';
import { ConversationItem, CopyButton } from './conversation-item.js';

/** The two refusals a steer can meet by losing a race: the console stays silent on them. */
const RACE_CODES: ReadonlySet<string> = new Set(['queue-item-not-found', 'steer-unavailable']);

const loadHistory = async (sessionId: string): Promise<{ entries: ConversationEntry[]; lastSeq: number; current: ReturnType<typeof runningStepOf>; admitted: (readonly [string, number])[] } | CallError> => {
  const entries: ConversationEntry[] = [];
  const admitted: (readonly [string, number])[] = [];
  const step: { type: string; data?: unknown }[] = [];
  let after = -1;
  let lastSeq = -1;
  for (;;) {
    const page = await call('session.history', { sessionId, after, limit: 1000 });
    if (!page.ok) return page.error;
    for (const { event, class: cls } of page.value.events) {
      const entry = entryOf(event, (cls as MessageClass | undefined) ?? null);
      if (entry) entries.push(entry);
      admitted.push(...admissionsOf(event as { time?: number; type: string; data?: unknown }));
      if (event.type === 'step/start') step.length = 0;
      step.push(event);
    }
    lastSeq = page.value.lastSeq;
    if (page.value.nextAfter === null) return { entries, lastSeq, current: runningStepOf(step), admitted };
    after = page.value.nextAfter;
  }
};

const Conversation = ({ state }: { state: MirrorState }) => {
  const steering = state.rows.filter((r) => r.placement === 'steering');
  return (
    <ol class="conversation" aria-label="Conversation">
      {state.conversation.map((e) => (
        <ConversationItem key={e.seq} entry={e} details />
      ))}
      {state.streaming ? (
        <li class="bubble assistant streaming" data-streaming>
          <div class="meta">assistant · streaming (turn {state.streaming.turn}, step {state.streaming.step})</div>
          <div class="text">{state.streaming.text}</div>
        </li>
      ) : null}
      {state.running ? (
        <li class="status-row" data-running-step>
          {state.step ? `Running turn ${state.step.turn}, step ${state.step.step}` : 'Running…'}
          {state.step && state.step.tools.length > 0 ? (
            <ul class="tool-calls" aria-label="Tool calls of the running step">
              {state.step.tools.map((t) => (
                <li key={t.callId} data-tool-call={t.name} data-tool-state={t.state}>
                  tool <code>{t.name}</code>: {t.state === 'running' ? 'running…' : t.state === 'done' ? 'done' : 'failed'}
                </li>
              ))}
            </ul>
          ) : null}
        </li>
      ) : null}
      {steering.map((r) => (
        <li key={`pending-${r.id}`} class="bubble user pending" data-pending-steering={r.id}>
          <div class="meta">
            <span class="class-label class-steering">steering (pending)</span>
            <span data-pending-why>enters at the next step boundary</span>
            {r.actor !== null ? <span>· {r.actor}</span> : null} <CopyButton text={r.text ?? r.preview} />
          </div>
          <div class="text">{r.text ?? r.preview}</div>
        </li>
      ))}
    </ol>
  );
};

/** The live session view: the conversation, the pending steering bubbles, the QueueDock, the composer, Stop and Wake. */
export const LiveView = ({ sessionId }: { sessionId: string }) => {
  const [state, dispatch] = useReducer(reduceMirror, sessionId, initialMirror);
  const stateRef = useRef(state);
  stateRef.current = state;
  const [notices, setNotices] = useState<readonly { id: number; text: string }[]>([]);
  const [draft, setDraft] = useState('');
  const [busyEnter, setBusyEnter] = useState<'queue' | 'steer'>('queue');
  const [streamKey, setStreamKey] = useState(0);
  const noticeId = useRef(0);
  const notify = (text: string) => setNotices((n) => [...n.slice(-4), { id: noticeId.current++, text }]);

  const refreshHistory = async () => {
    const h = await loadHistory(sessionId);
    if ('code' in h) return notify(`Could not load the session: ${h.message}`);
    // a status frame that arrives while session.get is answered is newer than its `running`
    const statusFramesAt = stateRef.current.statusFrames;
    const got = await call('session.get', { sessionId });
    dispatch({ kind: 'history', entries: h.entries, lastSeq: h.lastSeq, current: h.current, admitted: h.admitted, ...(got.ok ? { running: got.value.running, statusFramesAt } : {}) });
  };

  useEffect(() => {
    void refreshHistory();
  }, [sessionId]);

  useEffect(() => {
    const stream = openStream([sessionId], (frame) => {
      dispatch({ kind: 'frame', frame });
      if (frame.type === 'session/event' && frame.event.type === 'user/message' && frame.sessionId === sessionId) {
        const seq = frame.event.seq;
        void call('session.history', { sessionId, after: seq - 1, limit: 1 }).then((r) => {
          const cls = r.ok ? r.value.events[0]?.class : undefined;
          if (cls) dispatch({ kind: 'classified', seq, class: cls });
        });
      }
    });
    return () => stream.close();
  }, [sessionId, streamKey]);

  useEffect(() => {
    if (state.gap) void refreshHistory();
  }, [state.gap]);

  const send = async (mode: 'queue' | 'steer') => {
    const text = draft;
    if (text.trim() === '') return;
    setDraft('');
    const r = await call('session.prompt', { sessionId, mode, content: [{ type: 'text', text }], clientTimeZone: Intl.DateTimeFormat().resolvedOptions().timeZone });
    if (!r.ok) {
      setDraft(text);
      notify(`Send failed: ${r.error.message}`);
    }
  };

  const steerRow = async (row: MirrorRow): Promise<boolean> => {
    const r = await call('session.updateQueue', { sessionId, itemId: row.id, action: { kind: 'steer' } });
    if (r.ok) return true;
    if (!RACE_CODES.has(r.error.code)) notify(`Steer failed: ${r.error.message}`);
    return false;
  };

  const steerAll = async () => {
    // re-read the snapshot at the moment of the gesture, then steer each queued row in FIFO order
    const queued = stateRef.current.rows.filter((r) => r.placement === 'queued');
    for (const row of queued) if (!(await steerRow(row))) return;
  };

  const actions = {
    edit: async (row: MirrorRow, text: string) => {
      const r = await call('session.updateQueue', { sessionId, itemId: row.id, action: { kind: 'edit', content: [{ type: 'text', text }] } });
      if (!r.ok) notify(`Edit failed: ${r.error.message}`);
    },
    remove: async (row: MirrorRow) => {
      const r = await call('session.updateQueue', { sessionId, itemId: row.id, action: { kind: 'remove' } });
      if (!r.ok) notify(`Remove failed: ${r.error.message}`);
    },
    steer: async (row: MirrorRow) => void (await steerRow(row)),
  };

  const stop = async () => {
    const r = await call('session.cancel', { sessionId });
    if (!r.ok) notify(`Stop failed: ${r.error.message}`);
  };
  const wake = async () => {
    const r = await call('session.wake', { sessionId });
    if (!r.ok) notify(`Wake failed: ${r.error.message}`);
  };

  const queuedCount = state.rows.filter((r) => r.placement === 'queued').length;
  const parked = !state.running && state.rows.length > 0;
  const placeholder = state.running
    ? `Enter ${busyEnter}s, Cmd/Ctrl+Enter ${busyEnter === 'queue' ? 'steers' : 'queues'}, Shift+Enter newline${queuedCount > 0 ? '; empty draft + Cmd/Ctrl+Enter steers all queued' : ''}`
    : 'Enter queues a prompt, Shift+Enter newline';

  return (
    <main class="live" aria-label={`Live session ${sessionId}`}>
      <header class="live-header">
        <h1>
          Session <code>{sessionId}</code>
        </h1>
        <p class="status" role="status" aria-live="polite" data-running={state.running ? 'true' : 'false'}>
          Status: <strong>{state.running ? 'running' : parked ? 'idle — work parked' : 'idle'}</strong> ·{' '}
          <span data-connections={state.generation}>
            {state.generation === 0 ? 'live stream connecting…' : state.generation === 1 ? 'live stream connected' : `live stream connected (reconnected ${state.generation - 1}×)`}
          </span>
          {state.streamError ? ` · stream error: ${state.streamError}` : ''}
        </p>
        <nav class="header-actions" aria-label="Session actions">
          <a class="button-link" href={`#/audit/${encodeURIComponent(sessionId)}`}>
            Audit this session
          </a>
          <span class="spacer" aria-hidden="true" />
          <button type="button" onClick={() => setStreamKey((k) => k + 1)}>
            Reconnect stream
          </button>
        </nav>
      </header>
      <Conversation state={state} />
      <div class="notices" role="alert" aria-live="assertive">
        {notices.map((n) => (
          <p key={n.id} class="notice">
            ⚠ {n.text}{' '}
            <button type="button" aria-label="Dismiss notice" onClick={() => setNotices((all) => all.filter((x) => x.id !== n.id))}>
              ×
            </button>
          </p>
        ))}
      </div>
      <QueueDock rows={state.rows} running={state.running} actions={actions} admittedAt={state.admittedAt} />
      {parked ? (
        <p class="parked">
          Queued work is parked (nothing runs it until the next send).{' '}
          <button type="button" onClick={() => void wake()}>
            Wake
          </button>
        </p>
      ) : null}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send('queue');
        }}
      >
        <label for="composer-input">Message</label>
        <textarea
          id="composer-input"
          rows={3}
          value={draft}
          placeholder={placeholder}
          onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            const intent = composerIntent(e, { running: state.running, busyEnter, draftEmpty: draft.trim() === '', queuedCount });
            if (intent === 'none' && e.key === 'Enter' && !e.isComposing) e.preventDefault();
            if (intent === 'queue' || intent === 'steer') {
              e.preventDefault();
              void send(intent);
            } else if (intent === 'steer-all') {
              e.preventDefault();
              void steerAll();
            }
          }}
        />
        <div class="composer-actions">
          <label>
            Enter while running{' '}
            <select value={busyEnter} onChange={(e) => setBusyEnter((e.currentTarget as HTMLSelectElement).value === 'steer' ? 'steer' : 'queue')}>
              <option value="queue">queues</option>
              <option value="steer">steers</option>
            </select>
          </label>
          <button type="submit">Send</button>
          {state.running ? (
            <button type="button" class="primary stop" onClick={() => void stop()}>
              Stop
            </button>
          ) : null}
        </div>
      </form>
    </main>
  );
};
