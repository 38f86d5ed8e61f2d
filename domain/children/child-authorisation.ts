import * as E from 'fp-ts/lib/Either.js';
import type { SessionCreatedData } from '../events.js';
import { ChildError } from './child-errors.js';

/** The caller of a parent-to-child delivery, as the live registry sees it. */
export interface DeliveringParent {
  readonly sessionId: string;
  /** The caller is the registry's current entry for its id (not a stale object replaced under the same id). */
  readonly isLiveEntry: boolean;
}

/**
 * A parent may deliver to (or resume) a child only when it is the exact live registry entry for its id AND the
 * child's durable header names it as `parentSession`. Checked BEFORE anything of the child's log is folded, so
 * a refused caller learns nothing about the child.
 */
export const authoriseDelivery = (parent: DeliveringParent, childSessionId: string, header: SessionCreatedData): E.Either<ChildError, true> => {
  if (!parent.isLiveEntry) {
    return E.left(new ChildError('subagent-unauthorized', childSessionId, `session ${parent.sessionId} is not the live parent of child ${childSessionId}`));
  }
  if (header.parentSession !== parent.sessionId) {
    return E.left(new ChildError('subagent-unauthorized', childSessionId, `child ${childSessionId} belongs to another parent session`));
  }
  return E.right(true);
};

/** Who asks to interrupt a child: the user through the host (naming the parent), or an ancestor agent. */
export type InterruptAuthority =
  | { readonly kind: 'user'; readonly parentSessionId: string }
  | { readonly kind: 'ancestor'; readonly callerSessionId: string; readonly callerIsLiveEntry: boolean };

/** What the interrupt rule needs of a resident target. */
export interface InterruptTarget {
  readonly childSessionId: string;
  readonly parentSession: string;
  /** The activation's recorded ancestry: parent first, then its parent, up to the root. */
  readonly ancestry: readonly string[];
}

/**
 * The interrupt rule: `ancestor` callers must be live entries and not the target (checked even when the target is
 * absent, so `target === null`); a `user` must name the target's parent; an ancestor must be in its ancestry.
 * An absent target (unknown, one-shot, settled) is an accepted no-op: `E.right(false)`; `E.right(true)` = cancel it.
 */
export const authoriseInterrupt = (authority: InterruptAuthority, childSessionId: string, target: InterruptTarget | null): E.Either<ChildError, boolean> => {
  if (authority.kind === 'ancestor') {
    if (!authority.callerIsLiveEntry || authority.callerSessionId === childSessionId) {
      return E.left(new ChildError('subagent-unauthorized', childSessionId, `session ${authority.callerSessionId} may not interrupt ${childSessionId}`));
    }
  }
  if (target === null) return E.right(false);
  const allowed = authority.kind === 'user' ? authority.parentSessionId === target.parentSession : target.ancestry.includes(authority.callerSessionId);
  return allowed ? E.right(true) : E.left(new ChildError('subagent-unauthorized', childSessionId, `child ${childSessionId} belongs to another parent session`));
};
