import type { NewEvent } from './event-store.js';

/**
 * What the session log already knows about an event it built and checked, so that a store need not work it out
 * again: the event's size as `eventSizeBytes` measures it, and its data serialized by `JSON.stringify` (the bytes a
 * store writes for it).
 */
export interface CheckedForm {
  /** `eventSizeBytes` of the event (UTF-8 bytes of its data's JSON, its type, its id and its metadata's JSON). */
  readonly size: number;
  /** `JSON.stringify(event.data)`. */
  readonly dataJson: string;
}

/** The brand: only this module makes instances, and only a `#form` check recognizes one (it cannot be forged). */
class CheckedEvent {
  readonly #form: CheckedForm;
  constructor(form: CheckedForm) {
    this.#form = form;
  }
  static formOf(event: object): CheckedForm | undefined {
    return #form in event ? event.#form : undefined;
  }
}

/**
 * The frozen event with these fields, marked as one the session log built: its data was validated against its
 * type's schema, its data and metadata are lossless JSON, deep-frozen, and its hash is the chain's. A store may then
 * skip its own lossless-JSON walk, size measurement, defensive copy and serialization of the data for this very
 * object (see `checkedForm`); every event it was not given this way it still checks in full. Unmarked (a plain
 * frozen copy) unless the data and metadata are frozen (a frozen object's fields cannot change after the check).
 * @internal only the session log calls this, for events it validated itself
 */
export const checkedEvent = (fields: NewEvent, form: CheckedForm): NewEvent => {
  const frozen = (v: unknown): boolean => typeof v !== 'object' || v === null || Object.isFrozen(v);
  return Object.freeze(frozen(fields.data) && frozen(fields.metadata) ? Object.assign(new CheckedEvent(form), fields) : { ...fields });
};

/** The checked form of an event the session log made (`checkedEvent`), or undefined for any other object. */
export const checkedForm = (event: NewEvent): CheckedForm | undefined => CheckedEvent.formOf(event);
