/** Stable codes of every refusal the domain can make. Match on `code`, never on the message. */
export type DomainErrorCode =
  | 'invalid-json'
  | 'malformed-envelope'
  | 'unknown-event-type'
  | 'invalid-event-data'
  | 'seq-out-of-order'
  | 'duplicate-pending-id'
  | 'invalid-splice'
  | 'invalid-message'
  | 'impossible-event'
  | 'queue-item-not-found'
  | 'steer-unavailable'
  | 'queue-edit-non-text';

/** Base class of the domain's typed errors: each has a stable `code`. */
export class DomainError extends Error {
  readonly code: DomainErrorCode;
  constructor(code: DomainErrorCode, message: string) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
  }
}

const hasCode = (e: unknown, ...codes: DomainErrorCode[]): boolean =>
  typeof e === 'object' && e !== null && codes.includes((e as { code?: DomainErrorCode }).code as DomainErrorCode);

/** Why an event did not parse: the stable codes of {@link EventParseError}. */
export type EventParseErrorCode = 'invalid-json' | 'malformed-envelope' | 'unknown-event-type' | 'invalid-event-data' | 'seq-out-of-order';

/** Where in the event: a data path reads "at data.x"; an envelope field is named as one (never a bare "at seq"). */
const pathText = (path: string): string => (path === '' ? '' : path === 'data' || path.startsWith('data.') || path.startsWith('data[') ? ` at ${path}` : ` (envelope field "${path}")`);

/** An untrusted log line or envelope that is not a valid event. Names the seq, the type and the failing path when known. */
export class EventParseError extends DomainError {
  declare readonly code: EventParseErrorCode;
  constructor(
    code: EventParseErrorCode,
    readonly seq: number | null,
    readonly eventType: string | null,
    readonly path: string,
    detail: string,
  ) {
    super(code, `${seq === null ? 'event' : `seq ${seq}`}${eventType ? ` (${eventType})` : ''}: ${detail}${pathText(path)}`);
    this.name = 'EventParseError';
  }
}
/** Is this a {@link EventParseError}? (by its stable `code`) */
export const isEventParseError = (e: unknown): e is EventParseError =>
  hasCode(e, 'invalid-json', 'malformed-envelope', 'unknown-event-type', 'invalid-event-data', 'seq-out-of-order');

/** A message id that is already pending in either list (ids are unique across both). */
export class DuplicatePendingIdError extends DomainError {
  declare readonly code: 'duplicate-pending-id';
  constructor(readonly messageId: string) {
    super('duplicate-pending-id', `message "${messageId}" is already pending`);
    this.name = 'DuplicatePendingIdError';
  }
}
/** Is this a {@link DuplicatePendingIdError}? (by its stable `code`) */
export const isDuplicatePendingIdError = (e: unknown): e is DuplicatePendingIdError => hasCode(e, 'duplicate-pending-id');

/** Splice coordinates that do not fit the list (durable splices must be exact; commands are normalized first). */
export class InvalidSpliceError extends DomainError {
  declare readonly code: 'invalid-splice';
  constructor(readonly reason: string) {
    super('invalid-splice', `invalid inbox splice: ${reason}`);
    this.name = 'InvalidSpliceError';
  }
}
/** Is this a {@link InvalidSpliceError}? (by its stable `code`) */
export const isInvalidSpliceError = (e: unknown): e is InvalidSpliceError => hasCode(e, 'invalid-splice');

/** A message that is not a valid UserMessage (or not lossless JSON). */
export class InvalidMessageError extends DomainError {
  declare readonly code: 'invalid-message';
  constructor(readonly path: string, detail: string) {
    super('invalid-message', `invalid message at ${path}: ${detail}`);
    this.name = 'InvalidMessageError';
  }
}
/** Is this a {@link InvalidMessageError}? (by its stable `code`) */
export const isInvalidMessageError = (e: unknown): e is InvalidMessageError => hasCode(e, 'invalid-message');

/** A well-formed event that cannot happen where it stands in the log (a step outside a turn, a second turn/start…). */
export class ImpossibleEventError extends DomainError {
  declare readonly code: 'impossible-event';
  constructor(readonly seq: number, readonly eventType: string, reason: string) {
    super('impossible-event', `seq ${seq} (${eventType}): ${reason}`);
    this.name = 'ImpossibleEventError';
  }
}
/** Is this a {@link ImpossibleEventError}? (by its stable `code`) */
export const isImpossibleEventError = (e: unknown): e is ImpossibleEventError => hasCode(e, 'impossible-event');

/** What the Inbox decider refuses with. */
export type InboxError = DuplicatePendingIdError | InvalidSpliceError | InvalidMessageError;
/** Is this a {@link DomainError}? */
export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
