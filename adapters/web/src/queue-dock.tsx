import { useEffect, useState } from 'preact/hooks';
import type { MirrorRow } from './mirror.js';

/** What the dock asks its owner to do with a row. */
export interface QueueDockActions {
  edit(row: MirrorRow, text: string): Promise<void>;
  remove(row: MirrorRow): Promise<void>;
  steer(row: MirrorRow): Promise<void>;
}

/** How long a row has waited since the log admitted it (`now` and `since` in ms). */
export const ageOf = (since: number, now: number): string => {
  const s = Math.max(0, Math.round((now - since) / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
};

const QueueRowView = ({ row, running, actions, onEditing, admittedAt, now }: { row: MirrorRow; running: boolean; actions: QueueDockActions; onEditing: (id: string, on: boolean) => void; admittedAt?: number | undefined; now: number }) => {
  const [draft, setDraft] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const holding = draft !== null || busy;
  useEffect(() => {
    onEditing(row.id, holding);
    return () => onEditing(row.id, false);
  }, [holding]);
  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    try {
      await f();
    } finally {
      setBusy(false);
    }
  };
  const stopEditing = () => setDraft(null);
  const save = () => {
    if (draft === null || draft.trim() === '') return;
    const text = draft;
    setDraft(null);
    void run(() => actions.edit(row, text));
  };
  return (
    <li class="queue-row" data-queue-row={row.id}>
      <span class="glyph" aria-hidden="true">≡</span>
      {draft === null ? (
        <>
          <span class="preview">{row.preview}</span>
          <span class="age" data-queue-actor={row.actor ?? ''}>
            {row.actor ?? 'no actor'}
            {admittedAt !== undefined ? (
              <span data-admitted-at={admittedAt} title={`admitted ${new Date(admittedAt).toISOString().replace('T', ' ').replace('Z', ' UTC')}`}>
                {` · waiting ${ageOf(admittedAt, now)}`}
              </span>
            ) : null}
          </span>
        </>
      ) : (
        <input
          class="edit-input"
          aria-label={`Edit queued message ${row.preview}`}
          value={draft}
          autoFocus
          onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.isComposing) return;
            if (e.key === 'Enter') {
              e.preventDefault();
              save();
            } else if (e.key === 'Escape') {
              e.preventDefault();
              stopEditing();
            }
          }}
        />
      )}
      <span class="row-actions">
        {draft === null ? (
          <>
            <button
              type="button"
              disabled={row.text === null || busy}
              title={row.text === null ? 'Only text messages can be edited' : undefined}
              aria-label={`Edit queued message ${row.preview}`}
              onClick={() => {
                setDraft(row.text ?? '');
              }}
            >
              Edit
            </button>
            <button type="button" disabled={busy} aria-label={`Remove queued message ${row.preview}`} onClick={() => void run(() => actions.remove(row))}>
              Remove
            </button>
            <button
              type="button"
              disabled={!running || busy}
              title={running ? 'Steer queued message into the current turn' : 'Steer unavailable: the session is not running'}
              aria-label={`Steer queued message ${row.preview}${running ? '' : ' (unavailable while idle)'}`}
              onClick={() => void run(() => actions.steer(row))}
            >
              Steer
            </button>
          </>
        ) : (
          <>
            <button type="button" disabled={draft.trim() === ''} onClick={save}>
              Save
            </button>
            <button type="button" onClick={stopEditing}>
              Cancel
            </button>
          </>
        )}
      </span>
    </li>
  );
};

/**
 * The QueueDock: only `queued` rows; nothing when empty; one row inline; two or more under a collapsible count
 * header (collapsed by default, held open while a row is being edited or an action is in flight).
 */
export const QueueDock = ({ rows, running, actions, admittedAt }: { rows: readonly MirrorRow[]; running: boolean; actions: QueueDockActions; admittedAt?: ReadonlyMap<string, number> }) => {
  const queued = rows.filter((r) => r.placement === 'queued');
  // the ages tick once a second while rows wait
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (queued.length === 0) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [queued.length === 0]);
  const [open, setOpen] = useState(false);
  const [holding, setHolding] = useState<ReadonlySet<string>>(new Set());
  const onEditing = (id: string, on: boolean) =>
    setHolding((s) => {
      if (s.has(id) === on) return s;
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  if (queued.length === 0) return null;
  const list = (
    <ul class="queue-rows" aria-label="Queued messages">
      {queued.map((row) => (
        <QueueRowView key={row.id} row={row} running={running} actions={actions} onEditing={onEditing} admittedAt={admittedAt?.get(row.id)} now={now} />
      ))}
    </ul>
  );
  const expanded = open || holding.size > 0;
  return (
    <section class="queue-dock" aria-label="Queue">
      {queued.length === 1 ? (
        list
      ) : (
        <>
          <button type="button" class="queue-header" aria-expanded={expanded} onClick={() => setOpen(!open)}>
            {expanded ? '▾' : '▸'} {queued.length} queued
          </button>
          {expanded ? list : null}
        </>
      )}
    </section>
  );
};
