import { useEffect, useRef, useState } from 'preact/hooks';
import type { HostResult } from '../../../host/schemas.js';
import { call } from './api.js';
import { ChildComposer } from './child-composer.js';
import { childComposerState } from './composer-policy.js';
import { ConversationItem } from './conversation-item.js';
import { entryOf, type ConversationEntry, type MessageClass } from './mirror.js';

type ChildInfo = HostResult<'subagent.history'>['child'];

/** How often the view reads the child's new events and state (a child is not on the host's live stream). */
const POLL_MS = 300;

/**
 * A child session under its parent: its conversation (from `subagent.history`, read again every 300 ms from where
 * the last read ended), its state, and the child composer (`subagent.prompt` to send, `subagent.interrupt` to stop).
 */
export const ChildView = ({ parentSessionId, childSessionId }: { parentSessionId: string; childSessionId: string }) => {
  const [entries, setEntries] = useState<readonly ConversationEntry[]>([]);
  const [child, setChild] = useState<ChildInfo | null>(null);
  const [parentAvailable, setParentAvailable] = useState(false);
  const [draft, setDraft] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const after = useRef(-1);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      for (;;) {
        const r = await call('subagent.history', { parentSessionId, childSessionId, after: after.current, limit: 1000 });
        if (stopped) return;
        if (!r.ok) return setNotice(`Could not read the child: ${r.error.message}`);
        const fresh = r.value.events.flatMap(({ event, class: cls }) => entryOf(event, (cls as MessageClass | undefined) ?? null) ?? []);
        if (fresh.length > 0) setEntries((all) => [...all, ...fresh]);
        after.current = r.value.events.at(-1)?.event.seq ?? after.current;
        setChild(r.value.child);
        setParentAvailable(r.value.parentAvailable);
        if (r.value.nextAfter === null) break;
      }
      timer = setTimeout(() => void read(), POLL_MS);
    };
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [parentSessionId, childSessionId]);

  const send = async () => {
    const text = draft;
    if (text.trim() === '') return;
    setDraft('');
    const r = await call('subagent.prompt', { parentSessionId, childSessionId, mode: 'continuable', content: [{ type: 'text', text }] });
    if (!r.ok) {
      setDraft(text);
      setNotice(`Send failed: ${r.error.message}`);
    }
  };
  const stop = async () => {
    const r = await call('subagent.interrupt', { parentSessionId, childSessionId, mode: 'continuable' });
    if (!r.ok) setNotice(`Stop failed: ${r.error.message}`);
  };

  const running = child?.state === 'running';
  return (
    <main class="live child" aria-label={`Child session ${childSessionId}`}>
      <header class="live-header">
        <h1>
          Child <code>{childSessionId}</code> of <a href={`#/live/${encodeURIComponent(parentSessionId)}`}>{parentSessionId}</a>
        </h1>
        <p class="status" role="status" aria-live="polite" data-running={running ? 'true' : 'false'} data-mode={child?.mode ?? ''} data-parent-available={parentAvailable ? 'true' : 'false'}>
          {child ? (
            <>
              {child.mode} child{child.label ? ` “${child.label}”` : ''} · Status: <strong>{child.state === 'absent' ? 'not resident here' : child.state}</strong> · parent{' '}
              {parentAvailable ? 'live' : 'offline'}
            </>
          ) : (
            'Loading…'
          )}
        </p>
        <nav class="header-actions" aria-label="Session actions">
          <a href={`#/audit/${encodeURIComponent(childSessionId)}`}>Audit this child</a>
        </nav>
      </header>
      <ol class="conversation" aria-label="Conversation">
        {entries.map((e) => (
          <ConversationItem key={e.seq} entry={e} />
        ))}
      </ol>
      <div class="notices" role="alert" aria-live="assertive">
        {notice ? <p class="notice">⚠ {notice}</p> : null}
      </div>
      {child ? <ChildComposer state={childComposerState({ mode: child.mode, running }, parentAvailable)} draft={draft} onDraft={setDraft} onSend={() => void send()} onStop={() => void stop()} /> : null}
    </main>
  );
};
