import { MemoryEventStore } from './memory/memory-event-store.js';
import type { EventStore } from '../../runtime/ports/event-store.js';

/**
 * Where sessions live, as one option: a store object, or a string —
 * `memory:` · `jsonl:<directory>` · `postgres://…` / `postgresql://…` (optional `?schema=<name>`) · `esdb://…` / `esdb+discover://…`.
 */
export type StoreSpec = EventStore | string;

/** The default store of the runtime and the CLI: the embedded JSONL store under ./.steerlog. */
export const DEFAULT_STORE_SPEC = 'jsonl:./.steerlog';

/** A store spec that names no known store. */
export class InvalidStoreSpecError extends Error {
  readonly code = 'invalid-store-spec' as const;
  constructor(readonly spec: string, reason: string) {
    super(`invalid store "${spec}": ${reason}`);
    this.name = 'InvalidStoreSpecError';
  }
}
export const isInvalidStoreSpecError = (e: unknown): e is InvalidStoreSpecError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'invalid-store-spec';

const isStore = (x: unknown): x is EventStore =>
  typeof x === 'object' && x !== null && typeof (x as EventStore).append === 'function' && typeof (x as EventStore).read === 'function';

/** How `openStore` opens a store. */
export interface OpenStoreOptions {
  /**
   * Open for reading only (audit, export, store check): nothing is created, migrated, repaired or written. A
   * `jsonl:` directory must already hold a store (else `store-io`); a PostgreSQL schema must already be at this
   * code's version; `memory:` is refused (a new memory store holds nothing to read). @defaultValue false
   */
  readonly readOnly?: boolean;
}

/** Opens the store a spec names (adapters are loaded only when used). A store object is returned as it is. */
export const openStore = async (spec: StoreSpec, options: OpenStoreOptions = {}): Promise<EventStore> => {
  const readOnly = options.readOnly === true;
  if (isStore(spec)) return spec;
  if (typeof spec !== 'string') throw new InvalidStoreSpecError(String(spec), 'expected a store object or a string');
  if (spec === 'memory' || spec === 'memory:') {
    if (readOnly) throw new InvalidStoreSpecError(spec, 'a memory: store lives inside one process; there is nothing to read from here');
    return new MemoryEventStore();
  }
  if (spec.startsWith('jsonl:')) {
    const dir = spec.slice('jsonl:'.length);
    if (dir === '') throw new InvalidStoreSpecError(spec, 'jsonl: needs a directory, e.g. jsonl:./.steerlog');
    const { openJsonlEventStore } = await import('./jsonl/index.js');
    return openJsonlEventStore(dir, { readOnly });
  }
  if (/^postgres(ql)?:\/\//.test(spec)) {
    const url = new URL(spec);
    const schema = url.searchParams.get('schema') ?? undefined;
    url.searchParams.delete('schema');
    const { openPostgresEventStore } = await import('./postgres/index.js');
    return openPostgresEventStore({ connectionString: url.toString(), readOnly, ...(readOnly ? { listen: false } : {}), ...(schema ? { schema } : {}) });
  }
  if (/^esdb(\+discover)?:\/\//.test(spec)) {
    const { openEventStoreDbStore } = await import('./eventstoredb/index.js');
    return openEventStoreDbStore({ connectionString: spec });
  }
  throw new InvalidStoreSpecError(spec, 'expected memory:, jsonl:<dir>, postgres://… or esdb://…');
};
