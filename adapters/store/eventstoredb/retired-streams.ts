/**
 * Which streams are tombstoned, for the `$all` readers of the EventStoreDB/KurrentDB store.
 *
 * The server keeps a tombstoned (hard-deleted) stream's events in `$all` until a scavenge removes them — `$all`
 * reads bypass the stream index that knows about deletions — and appends the `$streamDeleted` tombstone after them.
 * A read of the stream itself answers "stream deleted" at once. The port's `readAll` and `subscribeAll` must not
 * show a deleted stream's events, and a `$all` reader meets them *before* the tombstone, so the adapter asks the
 * stream the first time a read meets it (one backwards read of one event).
 *
 * A tombstone is irreversible: a stream found deleted is remembered for the store's lifetime (up to `limit` names,
 * the oldest forgotten first, to be asked again). A stream found live is remembered only by the read that asked,
 * since another writer may delete it afterwards.
 */
export class RetiredStreams {
  readonly #deleted = new Set<string>();
  readonly #probe: (stream: string) => Promise<boolean>;
  readonly #limit: number;

  /** `probe` asks the server whether a stream (the port's name) is tombstoned. */
  constructor(probe: (stream: string) => Promise<boolean>, limit: number) {
    this.#probe = probe;
    this.#limit = Math.max(1, limit);
  }

  /** Is this stream known to be deleted (no server call)? */
  has(stream: string): boolean {
    return this.#deleted.has(stream);
  }

  /** Records a deletion (this store's own, or one a server answer revealed). */
  add(stream: string): void {
    this.#deleted.delete(stream);
    this.#deleted.add(stream);
    bound(this.#deleted, this.#limit);
  }

  /**
   * The check for one read (or one subscription): resolves true for a deleted stream. Each stream is asked about
   * once per read, the first time the read meets it; a deletion after that does not hide the read's later events.
   */
  forRead(): (stream: string) => Promise<boolean> {
    const live = new Set<string>();
    return async (stream) => {
      if (this.#deleted.has(stream)) return true;
      if (live.has(stream)) return false;
      if (await this.#probe(stream)) {
        this.add(stream);
        return true;
      }
      live.add(stream);
      bound(live, this.#limit);
      return false;
    };
  }
}

/**
 * Asks `check` about each distinct stream of `streams`, at most `concurrency` at a time (one server read each for
 * a stream the check has not met), so that the answers are known before the events are yielded.
 */
export const askEach = async (check: (stream: string) => Promise<boolean>, streams: Iterable<string>, concurrency = 16): Promise<void> => {
  const distinct = [...new Set(streams)];
  for (let i = 0; i < distinct.length; i += concurrency) await Promise.all(distinct.slice(i, i + concurrency).map(check));
};

/** Forgets the oldest names past `limit` (a forgotten stream is asked about again). */
const bound = (set: Set<string>, limit: number): void => {
  while (set.size > limit) set.delete(set.values().next().value!);
};
