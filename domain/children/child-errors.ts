import { DomainError } from '../errors.js';

/**
 * Stable codes of the children's refusals, as the host and the model tools report them. `subagent-cancelled`: the
 * caller's signal aborted before the child's inbox accepted the message (nothing was delivered).
 */
export type ChildErrorCode =
  | 'subagent-not-resumable'
  | 'subagent-unauthorized'
  | 'subagent-parent-unavailable'
  | 'subagent-activation-closing'
  | 'subagent-delivery-unavailable'
  | 'subagent-depth-exceeded'
  | 'subagent-duplicate-child'
  | 'subagent-cancelled';

/** A refusal of a child operation. Match on `code`, never on the message. */
export class ChildError extends Error {
  readonly code: ChildErrorCode;
  /** The child session the refusal is about. */
  readonly childSessionId: string;
  constructor(code: ChildErrorCode, childSessionId: string, message: string) {
    super(message);
    this.name = 'ChildError';
    this.code = code;
    this.childSessionId = childSessionId;
  }
}

const CHILD_CODES: ReadonlySet<string> = new Set<ChildErrorCode>([
  'subagent-not-resumable',
  'subagent-unauthorized',
  'subagent-parent-unavailable',
  'subagent-activation-closing',
  'subagent-delivery-unavailable',
  'subagent-depth-exceeded',
  'subagent-duplicate-child',
  'subagent-cancelled',
]);

/** True for a `ChildError` (by its code, so it holds across module copies). */
export const isChildError = (e: unknown): e is ChildError =>
  typeof e === 'object' && e !== null && !(e instanceof DomainError) && CHILD_CODES.has((e as { code?: string }).code ?? '');

/** Narrows a `ChildError` to one code. */
export const hasChildCode = <C extends ChildErrorCode>(e: unknown, code: C): e is ChildError & { readonly code: C } =>
  isChildError(e) && e.code === code;
