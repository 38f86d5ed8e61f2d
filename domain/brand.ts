/** A nominal type: `Brand<string, 'MessageId'>` is a string the compiler will not mix up with other strings. */
export type Brand<T, Name extends string> = T & { readonly __brand: Name };

/** The stable identity of a UserMessage. Non-empty. */
export type MessageId = Brand<string, 'MessageId'>;
/** Identity of a durable event (a UUID when steerlog creates it). */
export type EventId = Brand<string, 'EventId'>;
/** Identity of a session, and of its stream in a store. */
export type SessionId = Brand<string, 'SessionId'>;

/** Brands a string as a {@link MessageId} (no check: for ids that come from a trusted source). */
export const asMessageId = (id: string): MessageId => id as MessageId;
/** Brands a string as an {@link EventId} (no check: for ids that come from a trusted source). */
export const asEventId = (id: string): EventId => id as EventId;
/** Brands a string as a {@link SessionId} (no check: for ids that come from a trusted source). */
export const asSessionId = (id: string): SessionId => id as SessionId;
