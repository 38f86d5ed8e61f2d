import { useEffect, useRef, useState } from 'preact/hooks';
import type { ActorAction } from '../../../domain/actor-actions.js';
import type { FateEntry, MessageFate } from '../../../domain/message-fate.js';
import type { AuditInput, SessionAudit } from '../../../host/session-audit.js';
import { fetchAudit } from './api.js';
import { VirtualList } from './virtual-list.js';

const time = (t: number) => new Date(t).toISOString().replace('T', ' ').replace('Z', ' UTC');

/** Who did it, in words: `by alice (user)`, or `no actor recorded` for an event that names none (never a guess). */
export const describeActor = (a: { readonly actor: string | null; readonly actorKind: string | null }): string =>
  a.actor === null ? 'no actor recorded' : `by ${a.actor}${a.actorKind === null ? '' : ` (${a.actorKind})`}`;

/** One fate entry in words. */
export const describeFate = (e: FateEntry): string => {
  switch (e.kind) {
    case 'admitted':
      return `admitted to ${e.target}, ${describeActor(e)}`;
    case 'edited':
      return `edited in place (${e.target}), ${describeActor(e)}`;
    case 'moved':
      return `moved to ${e.to} (a strict steer), ${describeActor(e)}`;
    case 'canceled':
      return `canceled (removed before it ran), ${describeActor(e)}`;
    case 'claimed':
      return `claimed by turn ${e.turn}`;
    case 'entered':
      return `entered turn ${e.turn ?? '?'}, step ${e.step ?? '?'} as ${e.class}`;
    case 'dropped':
      return `dropped by the pre-step of turn ${e.turn}, step ${e.step}`;
    case 'not-run':
      return `never ran: turn ${e.turn} ended ${e.reason}`;
  }
};

const PendingList = ({ title, items }: { title: string; items: readonly AuditInput[] }) => (
  <section class="pending" aria-label={title}>
    <h3>
      {title} ({items.length})
    </h3>
    {items.length === 0 ? (
      <p class="empty">empty</p>
    ) : (
      <VirtualList items={items} rowHeight={26} height={160} label={title} render={(i) => <span data-pending-id={i.id}><code>{i.id}</code> [{i.source}] {i.preview}</span>} />
    )}
  </section>
);

const FatePanel = ({ fate }: { fate: MessageFate | null | undefined }) => {
  if (fate === undefined) return <p>Choose an input to see what happened to it.</p>;
  if (fate === null) return <p>This id does not appear in the log up to this seq.</p>;
  return (
    <div data-fate={fate.id}>
      <p>
        <code>{fate.id}</code> [{fate.source}] {fate.preview}
      </p>
      <ol class="fate">
        {fate.entries.map((e, i) => (
          <li key={i}>
            seq {e.seq} · {time(e.time)} · <strong>{describeFate(e)}</strong>
          </li>
        ))}
      </ol>
    </div>
  );
};

/** One admission or control action in words: what, on which message or turn, and by whom. */
export const describeAction = (a: ActorAction): string => {
  const what = a.id !== null ? `${a.kind} ${a.id}` : a.turn !== null ? `${a.kind} turn ${a.turn}` : a.kind;
  return `${what}, ${describeActor(a)}`;
};

/** The audit view: turn timeline, consumed-work verdict, time-travel scrubber over both pending lists and the classification, and each input's fate. */
export const AuditView = ({ sessionId }: { sessionId: string }) => {
  const [audit, setAudit] = useState<SessionAudit | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState<number | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [fate, setFate] = useState<MessageFate | null | undefined>(undefined);
  const latest = useRef(0);

  useEffect(() => {
    const ticket = ++latest.current;
    const timer = setTimeout(() => {
      fetchAudit(sessionId, at ?? undefined, selected ?? undefined).then(
        (a) => {
          if (ticket !== latest.current) return;
          setAudit(a);
          setFate(selected === null ? undefined : (a.message ?? null));
          setError(null);
        },
        (e: unknown) => ticket === latest.current && setError(e instanceof Error ? e.message : String(e)),
      );
    }, 60);
    return () => clearTimeout(timer);
  }, [sessionId, at, selected]);

  if (error) return <main><p role="alert">{error}</p></main>;
  if (!audit) return <main><p role="status">Folding the log…</p></main>;
  const r = audit.report;
  const seq = audit.at;
  const cw = r.consumedWork;
  return (
    <main class="audit" aria-label={`Audit of ${sessionId}`}>
      <header>
        <h1>
          Audit <code>{sessionId}</code>
        </h1>
        <p>
          {audit.lastSeq + 1} events · {r.ok ? 'valid log' : `invalid: ${r.errors.map((e) => e.message).join('; ')}`} · <a href={`#/live/${encodeURIComponent(sessionId)}`}>Open live</a>
        </p>
      </header>
      <section class="scrubber" aria-label="Time travel">
        <h2>State at seq {seq}</h2>
        <label for="seq-range">Seq</label>
        <input id="seq-range" type="range" min={-1} max={audit.lastSeq} value={seq} onInput={(e) => setAt(Number((e.currentTarget as HTMLInputElement).value))} />
        <label for="seq-number">Go to seq</label>
        <input id="seq-number" type="number" min={-1} max={audit.lastSeq} value={seq} onChange={(e) => setAt(Number((e.currentTarget as HTMLInputElement).value))} />
        <button type="button" onClick={() => setAt(Math.max(-1, seq - 1))} aria-label="Previous seq">
          ◀
        </button>
        <button type="button" onClick={() => setAt(Math.min(audit.lastSeq, seq + 1))} aria-label="Next seq">
          ▶
        </button>
        <div class="pending-lists" data-at={seq}>
          <PendingList title="next-turn" items={audit.pending.nextTurn} />
          <PendingList title="next-step" items={audit.pending.nextStep} />
        </div>
        <section aria-label="Classification">
          <h3>Classification ({r.messages.length} messages entered)</h3>
          <VirtualList
            items={r.messages}
            rowHeight={26}
            height={200}
            label="Classified messages"
            render={(m) => (
              <span data-class-id={m.id}>
                seq {m.seq} <code>{m.id}</code>: <strong>{m.class}</strong>
              </span>
            )}
          />
        </section>
      </section>
      <section aria-label="Turns">
        <h2>Turns ({r.turns.length})</h2>
        <p data-consumed-work>
          Consumed work: {cw.endSeq === null ? 'no turn closed yet' : `last turn ${cw.endTurn} closed at seq ${cw.endSeq}`}
          {cw.droppedUnrun ? ' · some input was dropped unrun' : ' · nothing dropped unrun'}
        </p>
        <VirtualList
          items={r.turns}
          rowHeight={28}
          height={220}
          label="Turn timeline"
          render={(t) => (
            <span data-turn={t.turn}>
              turn {t.turn}: seq {t.startSeq}–{t.endSeq ?? 'open'} · {t.steps} step{t.steps === 1 ? '' : 's'} · ended {t.reason ?? '(open)'} · claimed {t.claimed.join(', ') || 'nothing'}
            </span>
          )}
        />
      </section>
      <section class="inputs" aria-label="Inputs">
        <h2>What happened to this input?</h2>
        <div class="inputs-grid">
          <VirtualList
            items={audit.inputs}
            rowHeight={30}
            height={260}
            label="Inputs"
            render={(i) => (
              <button type="button" class={i.id === selected ? 'selected' : ''} aria-pressed={i.id === selected} onClick={() => setSelected(i.id)}>
                <code>{i.id}</code> [{i.source}] {i.last ?? ''}{i.actor !== null ? ` · ${i.actor}` : ''}
              </button>
            )}
          />
          <div class="fate-panel" aria-live="polite">
            <FatePanel fate={fate} />
          </div>
        </div>
      </section>
      <section aria-label="Actions">
        <h2>Who did what ({audit.actions.length})</h2>
        <VirtualList
          items={audit.actions}
          rowHeight={26}
          height={200}
          label="Admissions and control actions"
          render={(a) => (
            <span data-action-seq={a.seq} data-actor={a.actor ?? ''}>
              seq {a.seq} · {time(a.time)} · {describeAction(a)}
            </span>
          )}
        />
      </section>
    </main>
  );
};
