import * as E from 'fp-ts/lib/Either.js';
import { DomainError, InvalidMessageError } from './errors.js';
import type { InboxCommand } from './inbox/inbox-decide.js';
import { locate, type InboxState } from './inbox/inbox-state.js';
import * as L from './inbox/pending-list.js';
import { describeValue, snapshotJson } from './json.js';
import { freezeMessage, parseContent, type ContentBlock, type UserMessage } from './message.js';

/** Why a queue edit was refused: the stable codes of {@link QueueEditError}. */
export type QueueEditErrorCode = 'queue-item-not-found' | 'steer-unavailable' | 'queue-edit-non-text';

/** A refused queue edit: the item is no longer pending (claim won), steering is unavailable, or the edit is not text. */
export class QueueEditError extends DomainError {
  declare readonly code: QueueEditErrorCode;
  constructor(
    code: QueueEditErrorCode,
    readonly messageId: string,
    message: string,
  ) {
    super(code, message);
    this.name = 'QueueEditError';
  }
}
const QUEUE_CODES: readonly string[] = ['queue-item-not-found', 'steer-unavailable', 'queue-edit-non-text'];
/** Is this a {@link QueueEditError}? (by its stable `code`) */
export const isQueueEditError = (e: unknown): e is QueueEditError =>
  typeof e === 'object' && e !== null && QUEUE_CODES.includes((e as { code?: string }).code ?? '');

/** A queue edit of one pending item by id: edit its text, remove it, or steer it to the next step. */
export type QueueEditAction =
  | { readonly kind: 'edit'; readonly id: string; readonly content: string | readonly ContentBlock[] }
  | { readonly kind: 'remove'; readonly id: string }
  | { readonly kind: 'steer'; readonly id: string };

const notFound = (id: unknown) =>
  new QueueEditError('queue-item-not-found', typeof id === 'string' ? id : describeValue(id), `queued item ${describeValue(id)} is no longer pending`);

/**
 * The queue edits of docs/protocol.md §10 as a pure decision over the inbox state and the public status:
 * the inbox command to run (and, for a strict steer, the message to steer again), or a typed refusal. Content that
 * is not a string or content blocks (or cannot be read) is refused with `invalid-message`.
 */
export const decideQueueEdit = (
  state: InboxState,
  status: 'idle' | 'running',
  action: QueueEditAction,
): E.Either<QueueEditError | InvalidMessageError, { readonly command: InboxCommand; readonly message: UserMessage }> => {
  const at = locate(state, action.id);
  if (!at) return E.left(notFound(action.id));
  const message = L.at(at.target === 'next-turn' ? state.nextTurn : state.nextStep, at.index)!;
  switch (action.kind) {
    case 'edit': {
      const copied = snapshotJson(action.content);
      if (!copied.ok) return E.left(new InvalidMessageError(copied.path.replace(/^\$/, 'content'), copied.problem));
      const parsed = parseContent(copied.value);
      if (!parsed.ok) return E.left(new InvalidMessageError('content', parsed.problem));
      const content: readonly ContentBlock[] = parsed.blocks;
      if (!content.every((b) => b.type === 'text')) {
        return E.left(new QueueEditError('queue-edit-non-text', action.id, 'a queued item can be edited with text blocks only'));
      }
      return E.right({ command: { kind: 'replace', id: action.id, message: freezeMessage({ ...message, content }) }, message });
    }
    case 'remove':
      return E.right({ command: { kind: 'remove', id: action.id }, message });
    case 'steer':
      if (at.target !== 'next-turn' || status !== 'running') {
        return E.left(new QueueEditError('steer-unavailable', action.id, 'current turn no longer accepts steering'));
      }
      return E.right({ command: { kind: 'remove', id: action.id }, message });
  }
};
