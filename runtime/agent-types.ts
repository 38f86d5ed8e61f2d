import type * as E from 'fp-ts/lib/Either.js';
import type { MessageId } from '../domain/brand.js';
import type { InvalidMessageError } from '../domain/errors.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { InboxTarget } from '../domain/events.js';
import type { InboxState } from '../domain/inbox/inbox-state.js';
import type { ContentBlock, UserMessage } from '../domain/message.js';
import type { QueueEditError } from '../domain/queue-edit.js';
import type { MessageTooLargeError } from './errors.js';
import type { ActorOption } from './provenance.js';

/** The child lifecycle events an agent may be asked to record. */
export type ChildEventType = 'subagent/descriptor' | 'subagent/start' | 'subagent/end';

/** The read-and-edit view of an agent's Inbox. Every edit is one durable splice, decided by the pure Inbox decider. */
export interface AgentInbox {
  readonly nextTurn: readonly UserMessage[];
  readonly nextStep: readonly UserMessage[];
  /** The persistent inbox state (cheap to keep: it never changes). */
  readonly state: InboxState;
  /**
   * Removes and inserts pending items like `Array.prototype.splice` on the target list, as one durable splice;
   * returns the removed items. As in JavaScript, only an *omitted* `deleteCount` removes everything from `start`:
   * `splice(target, 0, undefined, m)` removes nothing (undefined counts as 0), `splice(target, 0)` clears the list.
   */
  splice(target: InboxTarget, start: number, deleteCount?: number, ...insert: UserMessage[]): UserMessage[];
  append(target: InboxTarget, message: UserMessage): void;
  prepend(target: InboxTarget, message: UserMessage): void;
  /** Replaces the pending item with this id (next-turn searched first); false if it is not pending. */
  replace(id: string, message: UserMessage): boolean;
  /** Cancels the pending item with this id; false if it is not pending. */
  remove(id: string): boolean;
  /** Cancels everything pending: next-step first, then next-turn. */
  clear(): UserMessage[];
}

/** Options of an input or control call (`followup`, `steer`, `inject`, `send`, `accept`, queue edits, `cancel`, `wake`). */
export interface InputOptions {
  /**
   * Who does it: recorded as `metadata.actor` and `metadata.actorKind` of the event the call appends (the splice
   * that admits, edits or cancels input; the `turn/end` of a turn it stops; the `turn/start` of a turn it wakes).
   * A string is the id of a `user`; `{id, kind}` names a plugin, a parent or child session, or the system.
   * @defaultValue `metadata.actor` when given, else the runtime's `actor`, else none
   */
  readonly actor?: ActorOption;
  /**
   * Provenance of the input, stored (and hashed) with the splice that admits, edits or cancels it: `actor` (who, as
   * the host authenticated them), `correlationId`, `causationId`, and any key of the deployment's. @defaultValue none
   */
  readonly metadata?: EventMetadata;
}

/** Options of `wake`: who wakes, and whether an idle agent starts a turn with nothing pending. */
export interface WakeOptions extends InputOptions {
  /**
   * An idle agent starts a turn even when nothing is pending: the turn claims nothing, and (unless a `pre-step`
   * listener enters messages) ends `completed` without a step — as a turn does whose waking input was canceled
   * before it started. How a replay reproduces such a recorded turn. While a turn or maintenance runs, the wake is
   * the same as without it. @defaultValue false: with nothing pending, nothing runs
   */
  readonly evenIfEmpty?: boolean;
}

/** What `accept` resolves with: the message id, the seq of its splice, and the list it landed in (a waking send after an abort lands in next-turn). */
export interface DurableReceipt {
  readonly messageId: MessageId;
  readonly seq: number;
  readonly target: InboxTarget;
}

/**
 * Why a queue edit was refused: the item is gone or steering is unavailable (`QueueEditError`), the new content is
 * not content (`invalid-message`), or the edited message would be larger than the store accepts (`message-too-large`).
 */
export type QueueEditRefusal = QueueEditError | InvalidMessageError | MessageTooLargeError;

/** Queue edits by message id (`agent.queue`): each returns a typed refusal instead of throwing; claim wins every race. */
export interface QueueEdits {
  /** Replaces a pending item's content (text only), keeping its id and source. */
  edit(id: string, content: string | readonly ContentBlock[], options?: InputOptions): E.Either<QueueEditRefusal, { readonly accepted: true }>;
  /** Cancels a pending item. */
  remove(id: string, options?: InputOptions): E.Either<QueueEditRefusal, { readonly accepted: true }>;
  /** Strict steer: moves a next-turn item to next-step while the agent is running. */
  steer(id: string, options?: InputOptions): E.Either<QueueEditRefusal, { readonly accepted: true }>;
}
