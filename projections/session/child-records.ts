import { Observable, type OperatorFunction } from 'rxjs';
import { evolveChildren, initialChildrenState, type ChildRecord } from '../../domain/children/child-edges.js';
import type { LogEvent } from '../../domain/events.js';

/**
 * Session events → a session's children as its log tells them: emits a child's record each time it changes (an
 * epoch starts or ends, a report or a settlement account is admitted), in the order the children first appeared.
 * The fold is `evolveChildren`, the same one the audit's `children` section uses, so a projection and the audit of
 * the same log always agree. Only the children the event names are compared: O(1) per event however many children
 * the session has.
 */
export const childRecords = (): OperatorFunction<LogEvent, ChildRecord> => (source) =>
  new Observable<ChildRecord>((subscriber) => {
    let state = initialChildrenState();
    /** Each child's place in the order of first appearance. */
    const order = new Map<string, number>();
    return source.subscribe({
      next: (event) => {
        const next = evolveChildren(state, event);
        if (next !== state) {
          const named = childrenNamedBy(event);
          const before = named.map((id) => state.children.get(id));
          const after = named.map((id) => next.children.get(id));
          const changed: { readonly at: number; readonly record: ChildRecord }[] = [];
          for (let i = 0; i < named.length; i++) {
            const record = after[i];
            if (record === undefined || record === before[i]) continue;
            const id = named[i]!;
            if (!order.has(id)) order.set(id, order.size);
            changed.push({ at: order.get(id)!, record });
          }
          if (changed.length > 1) changed.sort((a, b) => a.at - b.at);
          for (const c of changed) subscriber.next(c.record);
        }
        state = next;
      },
      error: (e: unknown) => subscriber.error(e),
      complete: () => subscriber.complete(),
    });
  });

/** The children an event can change (each once): the child of a subagent/start or end, the senders of a splice's reports. */
const childrenNamedBy = (event: LogEvent): readonly string[] => {
  switch (event.type) {
    case 'subagent/start':
    case 'subagent/end':
      return [(event.data as { childSessionId: string }).childSessionId];
    case 'agent/inbox/spliced': {
      const ids = new Set<string>();
      for (const m of (event.data as { inserted: readonly { source: { senderSessionId?: unknown } }[] }).inserted) {
        if (typeof m.source.senderSessionId === 'string') ids.add(m.source.senderSessionId);
      }
      return [...ids];
    }
    default:
      return [];
  }
};
