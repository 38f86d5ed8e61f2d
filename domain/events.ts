import type { z } from 'zod';
import type { EventId } from './brand.js';
import type { EventMetadata } from './event-metadata.js';
import { UserMessageSchema, type UserMessage } from './message.js';
import {
  SubagentDescriptorDataSchema,
  SubagentEndDataSchema,
  SubagentStartDataSchema,
  type SubagentDescriptorData,
  type SubagentEndData,
  type SubagentStartData,
} from './children/subagent-events.js';
import {
  AssistantChunkDataSchema,
  AssistantMessageDataSchema,
  RequestErrorDataSchema,
  type AssistantChunkData,
  type AssistantMessageData,
  type RequestErrorData,
} from './events/assistant-events.js';
import { ChainHeadDataSchema, type ChainHeadData } from './events/chain-events.js';
import { RequestContextDataSchema, RequestHeaderDataSchema, type RequestContextData, type RequestHeaderData } from './events/request-events.js';
import { InboxSplicedDataSchema, type InboxSplicedData } from './events/inbox-events.js';
import {
  EndSeedDataSchema,
  SessionCreatedDataSchema,
  SessionErasedDataSchema,
  type EndSeedData,
  type SessionCreatedData,
  type SessionErasedData,
} from './events/session-events.js';
import { ToolCallDataSchema, ToolResultDataSchema, type ToolCallData, type ToolResultData } from './events/tool-events.js';
import {
  StepDataSchema,
  TurnEndDataSchema,
  TurnStartDataSchema,
  type StepData,
  type TurnEndData,
  type TurnStartData,
} from './events/turn-events.js';

/**
 * The log's events: the catalogue of every durable event type with the schema of its data, the envelope, and the
 * guards that tell known events from ignored ones. The data schemas live by family in domain/events/ (and
 * domain/children/subagent-events.ts); this module re-exports them.
 */
export * from './events/session-events.js';
export * from './events/inbox-events.js';
export * from './events/turn-events.js';
export * from './events/assistant-events.js';
export * from './events/tool-events.js';
export * from './events/chain-events.js';
export * from './events/request-events.js';

// ---- the catalogue ---------------------------------------------------------------------------------------------
/** Every durable event type steerlog reads, with the schema of its data. */
export const EVENT_DATA_SCHEMAS = {
  'session/created': SessionCreatedDataSchema,
  'session/end-seed': EndSeedDataSchema,
  'agent/inbox/spliced': InboxSplicedDataSchema,
  'turn/start': TurnStartDataSchema,
  'turn/end': TurnEndDataSchema,
  'step/start': StepDataSchema,
  'step/end': StepDataSchema,
  'user/message': UserMessageSchema,
  'assistant/chunk': AssistantChunkDataSchema,
  'assistant/message': AssistantMessageDataSchema,
  'tool/call': ToolCallDataSchema,
  'tool/result': ToolResultDataSchema,
  'subagent/descriptor': SubagentDescriptorDataSchema,
  'subagent/start': SubagentStartDataSchema,
  'subagent/end': SubagentEndDataSchema,
  'chain/head': ChainHeadDataSchema,
  'session/erased': SessionErasedDataSchema,
  'request/error': RequestErrorDataSchema,
  'request/header': RequestHeaderDataSchema,
  'request/context': RequestContextDataSchema,
} as const satisfies Record<string, z.ZodTypeAny>;

/** The data type of each known event type. */
export interface EventDataByType {
  'session/created': SessionCreatedData;
  'session/end-seed': EndSeedData;
  'agent/inbox/spliced': InboxSplicedData;
  'turn/start': TurnStartData;
  'turn/end': TurnEndData;
  'step/start': StepData;
  'step/end': StepData;
  'user/message': UserMessage;
  'assistant/chunk': AssistantChunkData;
  'assistant/message': AssistantMessageData;
  'tool/call': ToolCallData;
  'tool/result': ToolResultData;
  'subagent/descriptor': SubagentDescriptorData;
  'subagent/start': SubagentStartData;
  'subagent/end': SubagentEndData;
  'chain/head': ChainHeadData;
  'session/erased': SessionErasedData;
  'request/error': RequestErrorData;
  'request/header': RequestHeaderData;
  'request/context': RequestContextData;
}
/** The name of a known event type. */
export type EventType = keyof EventDataByType;
/** Every event type steerlog knows, in catalogue order. */
export const EVENT_TYPES = Object.keys(EVENT_DATA_SCHEMAS) as readonly EventType[];
/** Is this a {@link EventType}? (by its stable `code`) */
export const isEventType = (type: string): type is EventType => EVENT_TYPE_SET.has(type);

/**
 * The catalogue's types as a set: a log's type strings are new ones per event (JSON.parse makes them), which a
 * property lookup would look up in the engine's string table first, and a set only hashes.
 */
const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The durable envelope: `seq` is 0-based and contiguous per stream. `metadata` says who and what caused the event;
 * `hash` links it to the previous event of its stream (see event-chain.ts). Logs written before the chain have none.
 */
export interface Envelope<T extends string, D> {
  readonly seq: number;
  readonly id: EventId;
  readonly time: number;
  readonly type: T;
  readonly data: D;
  readonly ignorable?: true;
  readonly metadata?: EventMetadata;
  readonly hash?: string;
}

/** A typed durable session event. */
export type SessionEvent = { [T in EventType]: Envelope<T, EventDataByType[T]> }[EventType];
/** The typed event of one known type, e.g. `EventOf<'turn/end'>`. */
export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;
/** An event of a type steerlog does not know, marked `ignorable: true`: kept, never interpreted. */
export type IgnoredEvent = Envelope<string, unknown> & { readonly ignorable: true };
/**
 * What a log line parses to: a typed {@link SessionEvent}, or an {@link IgnoredEvent} of a type steerlog does not
 * know. An ignored event's `type` is any string, so comparing `event.type` with a known type does not narrow a
 * `LogEvent`: guard first (`if (!isKnownEvent(event)) return …`), then `switch (event.type)` narrows `event.data`.
 * Custom projections receive known events only (`ProjectionEvent`); ignored ones reach `evolveIgnored`.
 */
export type LogEvent = SessionEvent | IgnoredEvent;
/** Is this an event of a type steerlog knows? Narrows a {@link LogEvent} to a {@link SessionEvent}. */
export const isKnownEvent = (e: LogEvent): e is SessionEvent => isEventType(e.type);
/** Is this an ignorable event of a type steerlog does not know? Narrows a {@link LogEvent} to an {@link IgnoredEvent}. */
export const isIgnoredEvent = (e: LogEvent): e is IgnoredEvent => !isEventType(e.type);

