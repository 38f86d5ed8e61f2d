/** Stable codes of the runtime's own errors. */
export type RuntimeErrorCode =
  | 'reentrant-append'
  | 'non-json-event'
  | 'invalid-event'
  | 'session-fenced'
  | 'session-closed'
  | 'model-error'
  | 'invalid-pre-step-decision'
  | 'invalid-request-error-decision'
  | 'maintenance-unavailable'
  | 'session-not-found'
  | 'session-corrupt'
  | 'session-live'
  | 'invalid-fork-boundary'
  | 'checkpoint-failed'
  | 'message-too-large'
  | 'invalid-argument';

/** A typed error of the runtime, with a stable `code` (`session-live`, `session-not-found`, `session-fenced`, …). */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RuntimeError';
    this.code = code;
  }
}
const hasCode = (e: unknown, code: RuntimeErrorCode) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
/** Is this a {@link RuntimeError}? */
export const isRuntimeError = (e: unknown): e is RuntimeError => e instanceof RuntimeError;
/** Is this a {@link ReentrantAppendError}? (by its stable `code`) */
export const isReentrantAppendError = (e: unknown): e is RuntimeError => hasCode(e, 'reentrant-append');
/** Is this a {@link SessionFencedError}? (by its stable `code`) */
export const isSessionFencedError = (e: unknown): e is RuntimeError => hasCode(e, 'session-fenced');
/** Is this a {@link ModelError}? (by its stable `code`) */
export const isModelError = (e: unknown): e is ModelError => hasCode(e, 'model-error');

/** The model finished with `error` (or its adapter threw one of these): the turn ends `error` with these facts. */
export class ModelError extends RuntimeError {
  declare readonly code: 'model-error';
  constructor(
    readonly facts: {
      readonly message: string;
      readonly code: string;
      readonly status?: number;
      /** How long the provider asked to wait before a retry (its `Retry-After`), in ms. */
      readonly providerRetryAfterMs?: number;
      /** The provider's id of the failed request. */
      readonly requestId?: string;
    },
  ) {
    super('model-error', facts.message);
    this.name = 'ModelError';
  }
}

/** The message of an error and of its causes, joined. */
export const errorChain = (e: unknown): string => {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let i = 0; cur !== undefined && cur !== null && i < 8; i++) {
    parts.push(cur instanceof Error ? cur.message : String(cur));
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return parts.join(': ');
};

/**
 * An event the runtime was about to log is larger than the store accepts (or than the runtime's lower
 * `maxEventBytes`): refused before it enters the live log, so nothing is logged and the session stays writable.
 * `size` and `limit` are bytes as the store measures them (`eventSizeBytes`).
 */
export class MessageTooLargeError extends RuntimeError {
  declare readonly code: 'message-too-large';
  constructor(
    readonly eventType: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super('message-too-large', `${eventType} would be ${size} bytes; the limit is ${limit}`);
    this.name = 'MessageTooLargeError';
  }
}
/** Is this a {@link MessageTooLargeError}? (by its stable `code`) */
export const isMessageTooLargeError = (e: unknown): e is MessageTooLargeError => hasCode(e, 'message-too-large');
