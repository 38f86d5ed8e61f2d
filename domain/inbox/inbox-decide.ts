import * as E from 'fp-ts/lib/Either.js';
import { InvalidMessageError, InvalidSpliceError, type InboxError } from '../errors.js';
import type { InboxSplicedData, InboxTarget } from '../events.js';
import { fastEventData } from '../fast-event-data.js';
import { deepFreeze, describeValue, snapshotJson } from '../json.js';
import { UserMessageSchema, type UserMessage } from '../message.js';
import * as L from './pending-list.js';
import { listOf, locate, type InboxState } from './inbox-state.js';
import { validateSplice } from './inbox-evolve.js';
import { normalizeSplice } from './splice-coordinates.js';

/** What a caller may ask of the Inbox. Coordinates are normalized like Array.prototype.splice. */
export type InboxCommand =
  | { readonly kind: 'splice'; readonly target: InboxTarget; readonly start: number; readonly deleteCount?: number; readonly insert: readonly UserMessage[] }
  | { readonly kind: 'append'; readonly target: InboxTarget; readonly message: UserMessage }
  | { readonly kind: 'prepend'; readonly target: InboxTarget; readonly message: UserMessage }
  | { readonly kind: 'replace'; readonly id: string; readonly message: UserMessage }
  | { readonly kind: 'remove'; readonly id: string }
  | { readonly kind: 'clear' }
  | { readonly kind: 'claim'; readonly target: InboxTarget };

/**
 * The durable events to append (none for a no-op) and the removed messages: for `splice` what Array.prototype.splice
 * would return, for `replace`/`remove` the one message (empty when the id was not pending), for `clear` next-step's
 * items then next-turn's, and for `claim` the claimed batch (every next-step item FIFO, then the next-turn head).
 */
export interface InboxDecision {
  readonly events: readonly InboxSplicedData[];
  readonly removed: readonly UserMessage[];
}

const NOTHING: InboxDecision = Object.freeze({ events: Object.freeze([]), removed: Object.freeze([]) });

/**
 * The snapshot the log keeps of a caller's message: validated, detached and deep-frozen, so the inbox never
 * holds the caller's object. Refuses anything that is not a UserMessage in lossless JSON.
 */
export const admitMessage = (message: unknown, path = 'message'): E.Either<InvalidMessageError, UserMessage> => {
  // one read of every property (a throwing getter or Proxy trap is a refusal, never a raw throw); the copy is what is checked
  const snapshot = snapshotJson(message);
  if (!snapshot.ok) return E.left(new InvalidMessageError(snapshot.path.replace(/^\$/, path), snapshot.problem));
  // the common shape is checked by hand on the copy, which is ours (a strict subset of the schema, frozen in place)
  if (fastEventData('user/message', snapshot.value, { inPlace: true }) !== null) return E.right(snapshot.value as UserMessage);
  const parsed = UserMessageSchema.safeParse(snapshot.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return E.left(new InvalidMessageError([path, ...issue.path].join('.'), issue.message));
  }
  // a stored-form sidecar (no reader state) is the runtime's to write: given, it would claim ciphertext it never sealed
  if (parsed.data.sealed !== undefined && parsed.data.sealed.state === undefined) {
    return E.left(new InvalidMessageError(`${path}.sealed`, 'sealed content is written by the runtime, never given'));
  }
  return E.right(deepFreeze(parsed.data as UserMessage));
};

const admitAll = (messages: readonly unknown[]): E.Either<InvalidMessageError, UserMessage[]> => {
  const out: UserMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = admitMessage(messages[i], `insert[${i}]`);
    if (E.isLeft(m)) return m;
    out.push(m.right);
  }
  return E.right(out);
};

/** The canonical durable splice for an ordinary (non-claim) mutation with exact coordinates. */
const ordinarySplice = (target: InboxTarget, start: number, deleteCount: number, inserted: readonly UserMessage[]): InboxSplicedData => ({
  target,
  start,
  ...(deleteCount > 0 ? { removedCount: deleteCount } : {}),
  inserted,
  ...(deleteCount > 0 ? { outcome: 'canceled' as const } : {}),
});

const decideSplice = (
  state: InboxState,
  target: InboxTarget,
  start: number,
  deleteCount: number | undefined,
  insert: readonly unknown[],
): E.Either<InboxError, InboxDecision> => {
  const admitted = admitAll(insert);
  if (E.isLeft(admitted)) return admitted;
  const list = listOf(state, target);
  const c = normalizeSplice(L.size(list), start, deleteCount);
  if (c.deleteCount === 0 && admitted.right.length === 0) return E.right(NOTHING);
  const event = ordinarySplice(target, c.start, c.deleteCount, admitted.right);
  const invalid = validateSplice(state, event);
  if (invalid) return E.left(invalid);
  return E.right({ events: [event], removed: L.slice(list, c.start, c.deleteCount) });
};

/** A claim: every next-step item (FIFO), then, for target next-turn, the next-turn head. Pure deletions, no outcome. */
const decideClaim = (state: InboxState, target: InboxTarget): InboxDecision => {
  const events: InboxSplicedData[] = [];
  const removed: UserMessage[] = [];
  const steps = L.size(state.nextStep);
  if (steps > 0) {
    events.push({ target: 'next-step', start: 0, removedCount: steps, inserted: [] });
    removed.push(...L.toArray(state.nextStep));
  }
  if (target === 'next-turn' && L.size(state.nextTurn) > 0) {
    events.push({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    removed.push(L.at(state.nextTurn, 0)!);
  }
  return events.length === 0 ? NOTHING : { events, removed };
};

const decideClear = (state: InboxState): InboxDecision => {
  const events: InboxSplicedData[] = [];
  const removed: UserMessage[] = [];
  for (const target of ['next-step', 'next-turn'] as const) {
    const list = listOf(state, target);
    const n = L.size(list);
    if (n > 0) {
      events.push(ordinarySplice(target, 0, n, []));
      removed.push(...L.toArray(list));
    }
  }
  return events.length === 0 ? NOTHING : { events, removed };
};

const TARGETS: readonly unknown[] = ['next-turn', 'next-step'];

/** The Inbox's decide: pure; returns the events to append, or a typed refusal. */
export const decideInbox = (command: InboxCommand, state: InboxState): E.Either<InboxError, InboxDecision> => {
  if ('target' in command && !TARGETS.includes(command.target)) {
    return E.left(new InvalidSpliceError(`target must be 'next-turn' or 'next-step', got ${describeValue(command.target)}`));
  }
  if ('start' in command && typeof command.start !== 'number') return E.left(new InvalidSpliceError(`start must be a number, got ${describeValue(command.start)}`));
  if ('deleteCount' in command && command.deleteCount !== undefined && typeof command.deleteCount !== 'number') {
    return E.left(new InvalidSpliceError(`deleteCount must be a number, got ${describeValue(command.deleteCount)}`));
  }
  if ('insert' in command && !Array.isArray(command.insert)) return E.left(new InvalidSpliceError('insert must be an array of messages'));
  switch (command.kind) {
    case 'splice':
      return decideSplice(state, command.target, command.start, command.deleteCount, command.insert);
    case 'append':
      return decideSplice(state, command.target, L.size(listOf(state, command.target)), 0, [command.message]);
    case 'prepend':
      return decideSplice(state, command.target, 0, 0, [command.message]);
    case 'replace': {
      const at = locate(state, command.id);
      return at ? decideSplice(state, at.target, at.index, 1, [command.message]) : E.right(NOTHING);
    }
    case 'remove': {
      const at = locate(state, command.id);
      return at ? decideSplice(state, at.target, at.index, 1, []) : E.right(NOTHING);
    }
    case 'clear':
      return E.right(decideClear(state));
    case 'claim':
      return E.right(decideClaim(state, command.target));
    default: {
      const never: never = command;
      throw new Error(`unknown inbox command ${JSON.stringify(never)}`);
    }
  }
};
