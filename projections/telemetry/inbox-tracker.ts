import type { InboxSplicedData, InboxTarget, LogEvent, SessionCreatedData } from '../../domain/events.js';
import { memberOf } from '../../domain/id-membership.js';
import { SlotDeque } from '../../domain/inbox/slot-deque.js';
import type { MessageFact } from '../../domain/message-facts.js';

/**
 * The inbox facts a span derivation reads (admitted, edited, moved, canceled, claimed), from a log already known to
 * be valid (a live runtime's own events, validated when they were appended): the two pending lists, nothing else,
 * each the domain's `SlotDeque` (a splice anywhere costs O(log n + its own items); the ids of one splice are matched
 * against each other through `memberOf`): every event costs O(1) amortized in the lists' length. It states the same facts as the session's message-fact fold (`stepMessageFacts`) for these
 * five kinds, without their `metadata` (its readers take the actor from the event), at a fraction of its cost, and
 * refuses nothing: it is no check of the log.
 */

/** The light fold: feed it every event of the log, in order, from seq 0. */
export interface InboxTracker {
  /** One event in: the inbox facts it states (none but for a splice after the fork's seed). */
  readonly step: (event: LogEvent) => readonly MessageFact[];
}

const NO_FACTS: readonly MessageFact[] = Object.freeze([]);

/** Creates the light inbox fold of one session. */
export const createInboxTracker = (): InboxTracker => {
  const lists: Record<InboxTarget, SlotDeque> = { 'next-turn': new SlotDeque(), 'next-step': new SlotDeque() };
  let seedLength: number | undefined;
  let openTurn: number | null = null;
  let lastTurn = 0;
  /** Steps the open turn has started. */
  let steps = 0;
  /** The last pure cancellation: a strict steer re-admits its ids into the other list in the next event. */
  let lastCancel: { readonly seq: number; readonly target: InboxTarget; readonly ids: readonly string[] } | null = null;

  const splice = (event: LogEvent, d: InboxSplicedData): readonly MessageFact[] => {
    const { seq, time } = event;
    const target = d.target;
    const list = lists[target];
    // the coordinates as Array.prototype.splice reads them: the log is trusted, never refused, and a bad one must not throw
    const start = Math.min(Math.max(0, d.start), list.size);
    const removedIds = list.splice(start, Math.min(Math.max(0, d.removedCount ?? 0), list.size - start), d.inserted).map((m) => m.id);
    const facts: MessageFact[] = [];
    if (d.removedCount && d.outcome !== 'canceled') {
      const turn = openTurn ?? lastTurn;
      for (const id of removedIds) facts.push({ kind: 'claimed', seq, time, id, target, turn, step: (openTurn === null ? 0 : steps) + 1, batch: removedIds });
      lastCancel = null;
      return facts;
    }
    const reinserted = removedIds.length > 0 && d.inserted.length > 0 ? memberOf(d.inserted.map((m) => m.id), removedIds.length) : null;
    for (const id of removedIds) if (reinserted === null || !reinserted(id)) facts.push({ kind: 'canceled', seq, time, id, target });
    const wasRemoved = reinserted !== null ? memberOf(removedIds, d.inserted.length) : null;
    const moved = lastCancel !== null && lastCancel.seq === seq - 1 && lastCancel.target !== target && d.inserted.length > 0 ? memberOf(lastCancel.ids, d.inserted.length) : null;
    for (const m of d.inserted) {
      const id = m.id;
      if (wasRemoved !== null && wasRemoved(id)) facts.push({ kind: 'edited', seq, time, id, target });
      else if (moved !== null && moved(id)) facts.push({ kind: 'moved', seq, time, id, to: target });
      else facts.push({ kind: 'admitted', seq, time, id, target, source: m.source });
    }
    lastCancel = d.outcome === 'canceled' && d.inserted.length === 0 ? { seq, target, ids: removedIds } : null;
    return facts;
  };

  const step = (event: LogEvent): readonly MessageFact[] => {
    if (event.type === 'turn/start') {
      openTurn = (event.data as { turn: number }).turn;
      lastTurn = openTurn;
      steps = 0;
    } else if (event.type === 'step/start') steps++;
    else if (event.type === 'turn/end') openTurn = null;
    if (event.seq === 0) {
      if (event.type === 'session/created') seedLength = (event.data as SessionCreatedData).seedLength;
      return NO_FACTS;
    }
    // a fork's seed is the parent's history: its inbox is not this session's, which starts empty after it
    if (seedLength !== undefined && event.seq <= seedLength + 1) return NO_FACTS;
    if (event.type === 'agent/inbox/spliced') return splice(event, event.data as InboxSplicedData);
    if (event.type !== 'chain/head' && event.type !== 'session/erased') lastCancel = null;
    return NO_FACTS;
  };

  return { step };
};
