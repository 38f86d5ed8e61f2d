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

/** An incremental {@link messageFates}: push events in seq order, read the fates so far at any point. */
export interface FateFold {
  /** Folds one more event; false (and nothing changes) when the session fold refuses it, and from then on. */
  push(event: LogEvent): boolean;
  readonly fates: ReadonlyMap<string, MessageFate>;
  readonly error: DomainError | null;
}

/**
 * "What happened to this input?": folds the log with the session fold (the one the audit uses) and records, per
 * message id, its admission, in-place edits, cancellation, claim (turn), entry (turn, step, class), and — for input
 * claimed by a turn that ended blocked, aborted, error or interrupted before the input entered — that it never ran.
 */
export const createFateFold = (): FateFold => {
  const fates = new Map<string, { id: string; source: string; preview: string; entries: FateEntry[] }>();
  const at = (id: string, source: string, preview: string) => {
    let f = fates.get(id);
    if (!f) fates.set(id, (f = { id, source, preview, entries: [] }));
    f.preview = preview;
    return f;
  };
  let state: SessionState = initialSessionState();
  let error: DomainError | null = null;
  return {
    get fates() {
      return fates;
    },
    get error() {
      return error;
    },
    push(event) {
      if (error) return false;
      const before = state;
      const step = stepSession(state, event);
      if (E.isLeft(step)) {
        error = step.left;
        return false;
      }
      state = step.right.state;
      const { seq, time } = event;
      if (event.type === 'agent/inbox/spliced') {
        const target = (event.data as { target: 'next-turn' | 'next-step' }).target;
        const notes = step.right.notifications;
        for (const n of notes) {
          const f = at(n.message.id, n.message.source.kind, previewOf(n.message.content));
          const replaced = (type: 'agent/inbox/inserted' | 'agent/inbox/discarded') => notes.some((o) => o.type === type && o.message.id === n.message.id);
          if (n.type === 'agent/inbox/claimed') f.entries.push({ kind: 'claimed', seq, time, turn: n.turn });
          else if (n.type === 'agent/inbox/inserted') f.entries.push({ kind: replaced('agent/inbox/discarded') ? 'edited' : 'admitted', seq, time, target });
          else if (!replaced('agent/inbox/inserted')) f.entries.push({ kind: 'canceled', seq, time });
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
      return true;
    },
  };
};

/** {@link createFateFold} over a whole log: every message's fate, and the first event the fold refused, if any. */
export const messageFates = (events: Iterable<LogEvent>): { readonly fates: ReadonlyMap<string, MessageFate>; readonly error: DomainError | null } => {
  const fold = createFateFold();
  for (const event of events) if (!fold.push(event)) break;
  return { fates: fold.fates, error: fold.error };
};
