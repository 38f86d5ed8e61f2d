import type { EventStore } from '../../runtime/ports/event-store.js';

/**
 * A store whose appends wait for the replay's go-ahead. The runtime yields to the outside world only where it waits:
 * on the model, a tool, a hook, or the store (a checkpoint's flush). A replay that holds the store's writes knows
 * the runtime is waiting there, and can re-admit a recorded input exactly where the recording has it.
 */
export interface GatedStore {
  readonly store: EventStore;
  /** Appends waiting for the go-ahead. */
  readonly held: () => number;
  /** Lets every held append through. */
  readonly release: () => void;
  /** Lets every held append through, and every later one at once. */
  readonly open: () => void;
  /**
   * Makes the next append that goes through with an event whose id is `eventId` fail with `error` (a recorded store
   * failure), writing nothing.
   */
  readonly failWith: (eventId: string, error: Error) => void;
}

/** Options of {@link gatedStore}. */
export interface GatedStoreOptions {
  /**
   * The streams the runtime may read; reading another one throws (an error that is not the store's own "not found"),
   * as a store the runtime cannot reach would. @defaultValue every stream
   */
  readonly readable?: (stream: string) => boolean;
}

/** Wraps `store` so that its appends wait for `release()`. */
export const gatedStore = (store: EventStore, options: GatedStoreOptions = {}): GatedStore => {
  const { readable } = options;
  let waiting: (() => void)[] = [];
  let opened = false;
  let failing: { readonly eventId: string; readonly error: Error } | null = null;
  const append = (...args: Parameters<EventStore['append']>): ReturnType<EventStore['append']> => {
    if (failing === null || !args[1].some((e) => e.id === failing!.eventId)) return store.append(...args);
    const { error } = failing;
    failing = null;
    return Promise.reject(error);
  };
  const gated: EventStore = new Proxy(store, {
    get(target, property) {
      if (property === 'append') {
        return (...args: Parameters<EventStore['append']>) =>
          opened ? append(...args) : new Promise<void>((go) => waiting.push(go)).then(() => append(...args));
      }
      if (property === 'read' && readable) {
        return (...args: Parameters<EventStore['read']>) => {
          if (!readable(args[0])) throw new Error(`stream ${args[0]} is not part of the replay`);
          return target.read(...args);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const release = (): void => {
    const go = waiting;
    waiting = [];
    for (const g of go) g();
  };
  return {
    store: gated,
    held: () => waiting.length,
    release,
    open: () => {
      opened = true;
      release();
    },
    failWith: (eventId, error) => {
      failing = { eventId, error };
    },
  };
};
