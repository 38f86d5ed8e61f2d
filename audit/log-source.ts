import type { EventStore } from '../runtime/ports/event-store.js';
import type { FormatOption } from './log-format.js';

/**
 * Where a use case reads one session's log: a file (steerlog's envelope log, a JSONL store's stream file, or the
 * harness's session log, by `format`) or a session of a store the front door has opened. A front door opens what it
 * reads (a store from its spec, read-only) and hands the use case the source; the use case decides.
 */
export type LogSource = FileLogSource | StoreLogSource;

/** A log file. */
export interface FileLogSource {
  readonly kind: 'file';
  readonly path: string;
  /** How to read it. @defaultValue 'auto' (recognised by its first bytes) */
  readonly format?: FormatOption;
}

/** One session of an opened store (seq = stream revision). */
export interface StoreLogSource {
  readonly kind: 'store';
  readonly store: EventStore;
  readonly session: string;
}

/** A file as a {@link LogSource}; `format` defaults to `auto`. */
export const fileSource = (path: string, format: FormatOption = 'auto'): FileLogSource => ({ kind: 'file', path, format });

/** A session of an opened store as a {@link LogSource}. */
export const storeSource = (store: EventStore, session: string): StoreLogSource => ({ kind: 'store', store, session });
