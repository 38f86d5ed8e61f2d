/**
 * Derived caches: a store that can keep, beside a stream, what a reader derived from the stream's first events (the
 * web console's timeline of a stored session), and tell whether those events are still stored byte for byte. A
 * cache, never data: a missing, torn or damaged file costs a full read of the log, nothing else. A reader uses a
 * cache only after {@link DerivedCacheSource.storedDigest} of the events it claims equals the digest it was saved with.
 */

/** A store that keeps derived caches beside its streams. */
export interface DerivedCacheSource {
  /**
   * SHA-256 (hex) over the stored bytes of the stream's first `count` events (and whatever the store keeps before
   * them: a header). Any change to those bytes changes it. Null when the stream does not hold `count` complete
   * events, or the store cannot tell.
   */
  storedDigest(stream: string, count: number): Promise<string | null>;
  /** The cache `name` kept for `stream`, as saved; null when there is none or it cannot be read. */
  loadDerived(stream: string, name: string): Promise<string | null>;
  /** Replaces the cache `name` of `stream` (best effort: a failing write keeps nothing and resolves anyway). */
  saveDerived(stream: string, name: string, text: string): Promise<void>;
}
