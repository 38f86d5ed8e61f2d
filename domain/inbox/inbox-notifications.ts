import type { InboxNotification, InboxSplicedData } from '../events.js';
import type { UserMessage } from '../message.js';
import * as L from './pending-list.js';
import { listOf, type InboxState } from './inbox-state.js';

/**
 * The live notifications one durable splice implies, in commit order (docs/protocol.md §2), computed from the
 * state it applies to: an ordinary removal gives `discarded` per removed item, then `inserted` per inserted item;
 * a claim (pure deletion) gives `claimed` per removed item with the open turn.
 */
export const notificationsOfSplice = (before: InboxState, splice: InboxSplicedData, turn: number): InboxNotification[] =>
  notificationsOfRemoval(splice, splice.removedCount ? L.slice(listOf(before, splice.target), splice.start, splice.removedCount) : [], turn);

/**
 * The same notifications from the messages the splice removed (as `applySpliceRemoving` returns them), without
 * reading any inbox state: O(k) for k removed and inserted messages.
 */
export const notificationsOfRemoval = (splice: InboxSplicedData, removed: readonly UserMessage[], turn: number): InboxNotification[] => {
  const out: InboxNotification[] = [];
  if (splice.removedCount && splice.outcome !== 'canceled') {
    for (let i = 0; i < removed.length; i++) out.push({ type: 'agent/inbox/claimed', message: removed[i]!, turn });
    return out;
  }
  // (indexed loops: no iterator per splice)
  for (let i = 0; i < removed.length; i++) out.push({ type: 'agent/inbox/discarded', message: removed[i]! });
  const inserted = splice.inserted;
  for (let i = 0; i < inserted.length; i++) out.push({ type: 'agent/inbox/inserted', message: inserted[i]! });
  return out;
};
