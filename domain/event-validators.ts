import { schemaRefinements } from './compiled-schema.js';
import { COMPILED_EVENT_TYPES, COMPILED_REFINEMENTS, makeEventValidators } from './event-validators.generated.js';
import { EVENT_DATA_SCHEMAS, EVENT_TYPES } from './events.js';

/**
 * The compiled predicate of each event type's data (`event-validators.generated.ts`, made by `npm run validators`
 * from the zod schemas), for lossless JSON (JSON.parse output or a snapshot): true only for data the type's schema
 * accepts and returns unchanged, then left deep-frozen, so a caller may keep the data as it is; false sends the data
 * to zod (a refused value may be left partly frozen), which decides and names the failing path. When the generated file does
 * not match the catalogue (a type added or a refinement changed without regenerating; the test suite fails then),
 * there is no predicate at all and every event goes to zod: a stale file costs speed, never correctness of the
 * type list.
 */
export const EVENT_VALIDATORS: Readonly<Record<string, (v: unknown) => boolean>> | null = (() => {
  const refinements = schemaRefinements(EVENT_TYPES.map((t) => EVENT_DATA_SCHEMAS[t]));
  const current = COMPILED_EVENT_TYPES.length === EVENT_TYPES.length && COMPILED_EVENT_TYPES.every((t, i) => t === EVENT_TYPES[i]) && refinements.length === COMPILED_REFINEMENTS;
  return current ? makeEventValidators(refinements) : null;
})();

/** The compiled predicate of a known event type's data, or null (unknown type, or no current generated file). */
export const compiledEventValidator = (type: string): ((v: unknown) => boolean) | null => (EVENT_VALIDATORS !== null && Object.hasOwn(EVENT_VALIDATORS, type) ? EVENT_VALIDATORS[type]! : null);
