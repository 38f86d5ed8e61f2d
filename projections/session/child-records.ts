import { Observable, type OperatorFunction } from 'rxjs';
import { evolveChildren, initialChildrenState, type ChildRecord } from '../../domain/children/child-edges.js';
import type { LogEvent } from '../../domain/events.js';

/**
 * Session events → a session's children as its log tells them: emits a child's record each time it changes (an
 * epoch starts or ends, a report or a settlement account is admitted). The fold is `evolveChildren`, the same one
 * the audit's `children` section uses, so a projection and the audit of the same log always agree.
 */
export const childRecords = (): OperatorFunction<LogEvent, ChildRecord> => (source) =>
  new Observable<ChildRecord>((subscriber) => {
    let state = initialChildrenState();
    return source.subscribe({
      next: (event) => {
        const next = evolveChildren(state, event);
        if (next !== state) {
          for (const [id, record] of next.children) if (state.children.get(id) !== record) subscriber.next(record);
        }
        state = next;
      },
      error: (e: unknown) => subscriber.error(e),
      complete: () => subscriber.complete(),
    });
  });
