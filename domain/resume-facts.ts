import { isKnownEvent, type LogEvent } from './events.js';
import type { RequestContextData } from './events/request-events.js';

/**
 * What a resume needs to know of a session's whole log besides its fold state (session-fold.ts), folded event by
 * event so that a fold snapshot can carry it: whether the log holds a `request/header` and which route its last
 * `request/context` names (the request provenance the next step writes depends on both), and whether any sub-agent
 * event is in it (a parent's children are derived from its whole log; such a session is resumed from its whole log).
 * Pure.
 */
export interface ResumeFacts {
  /** The log holds a `request/header`. */
  readonly requestHeader: boolean;
  /** The route of the last `request/context` (null: none). */
  readonly route: RequestContextData | null;
  /** The log holds a `subagent/*` event (a parent or a child of a run). */
  readonly subagents: boolean;
}

/** The facts of an empty log. */
export const initialResumeFacts: ResumeFacts = Object.freeze({ requestHeader: false, route: null, subagents: false });

/** The facts after one more event: O(1), the same object when the event changes none. */
export const stepResumeFacts = (facts: ResumeFacts, event: LogEvent): ResumeFacts => {
  if (event.type.startsWith('subagent/')) return facts.subagents ? facts : { ...facts, subagents: true };
  if (!isKnownEvent(event)) return facts;
  if (event.type === 'request/header') return facts.requestHeader ? facts : { ...facts, requestHeader: true };
  if (event.type === 'request/context') return { ...facts, route: event.data };
  return facts;
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The facts a snapshot's JSON holds, or undefined when it is not one (the snapshot is then not used). */
export const resumeFactsFromJson = (value: unknown): ResumeFacts | undefined => {
  if (!isObject(value)) return undefined;
  const { requestHeader, route, subagents } = value;
  if (typeof requestHeader !== 'boolean' || typeof subagents !== 'boolean') return undefined;
  if (!(route === null || (isObject(route) && typeof route.provider === 'string' && typeof route.model === 'string'))) return undefined;
  return { requestHeader, route: route as RequestContextData | null, subagents };
};
