import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/runtime.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { DEFAULT_STORE_SPEC, openStore, type StoreSpec } from './store/open-store.js';

/** Options of {@link openRuntime}: those of `createRuntime`, with the store given as a spec. */
export interface OpenRuntimeOptions extends Omit<RuntimeOptions, 'store'> {
  /**
   * Where sessions live: `'jsonl:./dir'`, `'postgres://…'`, `'esdb://…'`, `'memory:'`, or a store object.
   * @defaultValue 'jsonl:./.steerlog'
   */
  readonly store?: StoreSpec;
}

/** A runtime on the store a spec names; `close()` closes the store when the spec opened it. */
export interface OpenedRuntime extends Runtime {
  close(): Promise<void>;
}

/** The composition root: resolves the store option, then builds the runtime (which only knows the EventStore port). */
export const openRuntime = async (options: OpenRuntimeOptions): Promise<OpenedRuntime> => {
  const spec = options.store ?? DEFAULT_STORE_SPEC;
  const store: EventStore = await openStore(spec);
  const runtime = createRuntime({ ...options, store });
  return { ...runtime, close: async () => (typeof spec === 'string' ? store.close() : undefined) };
};
