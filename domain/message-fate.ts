import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from './events.js';
import type { DomainError } from './errors.js';
import type { MessageClass } from './history-classification.js';
import { initialSessionState, stepSession, type SessionState } from './session-fold.js';

/** One thing that happened to a pending input, at the seq and time of the event that did it. */
export type FateEntry =
  | { readonly kind: 'admitted'; readonly seq: number; readonly time: number; readonly target: 'next-turn' | 'next-step' }
  | { readonly kind: 'edited'; readonly seq: number; readonly time: number; readonly target: 'next-turn' | 'next-step' }
  | { readonly kind: 'canceled'; readonly seq: number; readonly time: number }
  | { readonly kind: 'claimed'; readonly seq: number; readonly time: number; readonly turn: number }
  | { readonly kind: 'entered'; readonly seq: number; readonly time: number; readonly turn: number | null; readonly step: number | null; readonly class: MessageClass }
  | { readonly kind: 'not-run'; readonly seq: number; readonly time: number; readonly turn: number; readonly reason: string };

/** Everything the log says happened to one message id, in seq order (an id may be re-admitted after it left). */
export interface MessageFate {
  readonly id: string;
  readonly source: string;
  readonly preview: string;
  readonly entries: readonly FateEntry[];
}

const previewOf = (content: readonly { readonly type: string; readonly text?: string }[]): string => {
  const text = content.map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join(' ').replace(/\s+/g, ' ').trim();
  const chars = [...text];
  return chars.length > 200 ? `${chars.slice(0, 200).join('')}…` : text;
};

/**
 * "What happened to this input?": folds the log with the session fold (the one the audit uses) and records, per
 * message id, its admission, in-place edits, cancellation, claim (turn), entry (turn, step, class), and — for input
 * claimed by a turn that ended blocked, aborted, error or interrupted before the input entered — that it never ran.
 * Stops at the first event the fold refuses and returns it as `error`.
 */
export const messageFates = (events: Iterable<LogEvent>): { readonly fates: ReadonlyMap<string, MessageFate>; readonly error: DomainError | null } => {
  const fates = new Map<string, { id: string; source: string; preview: string; entries: FateEntry[] }>();
  const at = (id: string, source: string, preview: string) => {
    let f = fates.get(id);
    if (!f) fates.set(id, (f = { id, source, preview, entries: [] }));
    f.preview = preview;
    return f;
  };
  let state: SessionState = initialSessionState();
  for (const event of events) {
    const before = state;
    const step = stepSession(state, event);
    if (E.isLeft(step)) return { fates, error: step.left };
    state = step.right.state;
    const { seq, time } = event;
    if (event.type === 'agent/inbox/spliced') {
      const target = (event.data as { target: 'next-turn' | 'next-step' }).target;
      const discarded = new Set(step.right.notifications.filter((n) => n.type === 'agent/inbox/discarded').map((n) => n.message.id));
      for (const n of step.right.notifications) {
        const f = at(n.message.id, n.message.source.kind, previewOf(n.message.content));
        if (n.type === 'agent/inbox/claimed') f.entries.push({ kind: 'claimed', seq, time, turn: n.turn });
        else if (n.type === 'agent/inbox/inserted') f.entries.push({ kind: discarded.has(n.message.id) ? 'edited' : 'admitted', seq, time, target });
        else if (!step.right.notifications.some((o) => o.type === 'agent/inbox/inserted' && o.message.id === n.message.id)) f.entries.push({ kind: 'canceled', seq, time });
      }
    } else if (event.type === 'user/message' && step.right.messageClass) {
      const message = event.data as { id: string; source: { kind: string }; content: { type: string; text?: string }[] };
      const f = at(message.id, message.source.kind, previewOf(message.content));
      f.entries.push({ kind: 'entered', seq, time, turn: before.turns.openTurn?.turn ?? null, step: state.turns.openStep, class: step.right.messageClass });
    }
    const closed = step.right.closedTurn;
    if (closed && closed.reason && closed.reason.kind !== 'completed' && closed.reason.kind !== 'max-tokens') {
      for (const id of closed.claimed) {
        const f = fates.get(id);
        const last = f?.entries.at(-1);
        if (f && last?.kind === 'claimed' && last.turn === closed.turn) f.entries.push({ kind: 'not-run', seq, time, turn: closed.turn, reason: closed.reason.kind });
      }
    }
  }
  return { fates, error: null };
};
