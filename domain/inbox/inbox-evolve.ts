import * as E from 'fp-ts/lib/Either.js';
import { DuplicatePendingIdError, InvalidSpliceError, type InboxError } from '../errors.js';
import type { InboxSplicedData } from '../events.js';
import type { UserMessage } from '../message.js';
import * as L from './pending-list.js';
import { listOf, withList, type InboxState } from './inbox-state.js';

const other = (target: InboxSplicedData['target']) => (target === 'next-turn' ? 'next-step' : 'next-turn');

/** Splices inserting more than this many messages check their ids for repeats through a set. */
const SEEN_BY_SET_FROM = 8;

/** Does `inserted[i]`'s id occur before `i`? */
const repeats = (inserted: readonly UserMessage[], i: number): boolean => {
  const id = inserted[i]!.id;
  for (let j = 0; j < i; j++) if (inserted[j]!.id === id) return true;
  return false;
};

/**
 * Checks a durable splice against the state it would apply to: exact coordinates that fit the target list and
 * ids that stay unique across both lists (an id the same splice removes may be re-inserted). Returns null when valid.
 * O(k log n) for k inserted messages.
 */
export const validateSplice = (state: InboxState, splice: InboxSplicedData): InboxError | null => {
  const list = listOf(state, splice.target);
  const length = L.size(list);
  const { start } = splice;
  const removed = splice.removedCount ?? 0;
  if (!Number.isSafeInteger(start) || start < 0 || start > length) {
    return new InvalidSpliceError(`start ${start} is outside ${splice.target} (length ${length})`);
  }
  if (!Number.isSafeInteger(removed) || removed < 0 || start + removed > length) {
    return new InvalidSpliceError(`removing ${removed} from ${start} does not fit ${splice.target} (length ${length})`);
  }
  if (splice.removedCount === 0) return new InvalidSpliceError('removedCount is written only when at least one item is removed');
  const otherList = listOf(state, other(splice.target));
  const inserted = splice.inserted;
  // a few inserted ids are compared pairwise (no set made per splice), more through a set
  const seen = inserted.length > SEEN_BY_SET_FROM ? new Set<string>() : null;
  for (let i = 0; i < inserted.length; i++) {
    const m = inserted[i]!;
    if (seen !== null ? seen.has(m.id) : repeats(inserted, i)) return new DuplicatePendingIdError(m.id);
    if (L.has(otherList, m.id)) return new DuplicatePendingIdError(m.id);
    seen?.add(m.id);
    const at = L.indexOf(list, m.id);
    if (at >= 0 && (at < start || at >= start + removed)) return new DuplicatePendingIdError(m.id);
  }
  return null;
};

/** The state after a splice and the messages it removed (in list order). */
export interface AppliedSplice {
  readonly state: InboxState;
  readonly removed: readonly UserMessage[];
}

/**
 * Applies one durable splice after validating it and returns the messages it removed, so that whoever derives
 * notifications or classification from the splice never reads the state it applied to (that state stays valid
 * and unchanged, but reading it again after the newer one costs a walk back). O(k log n) for k moved items.
 * `consume` (default false): the caller never reads `state` again and holds no other version of its lists, which
 * are then changed in place (`spliceRemoving`'s `consume`); an invalid splice changes nothing either way.
 */
export const applySpliceRemoving = (state: InboxState, splice: InboxSplicedData, consume = false): E.Either<InboxError, AppliedSplice> => {
  const invalid = validateSplice(state, splice);
  if (invalid) return E.left(invalid);
  const spliced = L.spliceRemoving(listOf(state, splice.target), splice.start, splice.removedCount ?? 0, splice.inserted, consume);
  return E.right({ state: withList(state, splice.target, spliced.list), removed: spliced.removed });
};

/** Applies one durable splice after validating it; the state passed in is never changed. */
export const applySplice = (state: InboxState, splice: InboxSplicedData): E.Either<InboxError, InboxState> => {
  const applied = applySpliceRemoving(state, splice);
  return E.isLeft(applied) ? applied : E.right(applied.right.state);
};

/**
 * The Inbox's evolve: one durable splice into the next state. A splice that does not fit is a corrupt log:
 * this throws the typed error (use `applySplice` for an Either).
 */
export const evolveInbox = (state: InboxState, splice: InboxSplicedData): InboxState => {
  const invalid = validateSplice(state, splice);
  if (invalid) throw invalid;
  const list = listOf(state, splice.target);
  return withList(state, splice.target, L.spliceExact(list, splice.start, splice.removedCount ?? 0, splice.inserted));
};

/** Folds every splice in order (the caller passes only events after the seed boundary). */
export const replayInbox = (splices: Iterable<InboxSplicedData>, from: InboxState): E.Either<InboxError & { readonly index: number }, InboxState> => {
  let state = from;
  let index = 0;
  for (const s of splices) {
    const next = applySplice(state, s);
    if (E.isLeft(next)) return E.left(Object.assign(next.left, { index }));
    state = next.right;
    index++;
  }
  return E.right(state);
};
