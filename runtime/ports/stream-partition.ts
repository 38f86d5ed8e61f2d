/**
 * Streams spread over partitions by a stable hash of their id: what projection workers split their work by, and
 * what a store can filter its global read by (`ReadAllOptions.partition`), so that a worker reads only the events of
 * the partitions it holds.
 */

const UTF8 = new TextEncoder();

/**
 * FNV-1a (32-bit, unsigned) of the stream id's UTF-8 bytes. The PostgreSQL store computes the same function in SQL
 * (`<schema>.stream_hash(text)`, kept in each event row's `stream_hash` column).
 */
export const streamHashOf = (stream: string): number => {
  let h = 0x811c9dc5;
  // an ASCII id (the usual one) is its own UTF-8: hashed without encoding it
  let ascii = true;
  for (let i = 0; i < stream.length; i++) {
    const c = stream.charCodeAt(i);
    if (c >= 0x80) {
      ascii = false;
      break;
    }
    h ^= c;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  if (ascii) return h;
  h = 0x811c9dc5;
  for (const byte of UTF8.encode(stream)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
};

/**
 * The stable partition of a stream: {@link streamHashOf} modulo `partitions` (0 when `partitions` ≤ 1). The same
 * stream always lands in the same partition for a given count, on every machine.
 */
export const partitionOf = (stream: string, partitions: number): number => (partitions <= 1 ? 0 : streamHashOf(stream) % partitions);

/**
 * {@link partitionOf} for one partition count, remembering each stream's answer (a reader routing every event of a
 * global read meets the same streams again and again; at most `limit` streams are remembered, then it starts over).
 */
export const partitionCache = (partitions: number, limit = 100_000): ((stream: string) => number) => {
  if (partitions <= 1) return () => 0;
  const known = new Map<string, number>();
  return (stream) => {
    let partition = known.get(stream);
    if (partition === undefined) {
      partition = partitionOf(stream, partitions);
      if (known.size >= limit) known.clear();
      known.set(stream, partition);
    }
    return partition;
  };
};

/**
 * Keep only the events of streams whose {@link partitionOf}`(stream, count)` is one of `keep`: a read filter. The
 * PostgreSQL, JSONL and memory stores apply it (PostgreSQL and JSONL without decoding the events they leave out); a
 * store that cannot (EventStoreDB) ignores it, so a reader still checks the partition of each event it gets.
 */
export interface StreamPartitionFilter {
  /** How many partitions the streams are spread over (an integer ≥ 1). */
  readonly count: number;
  /** The partitions to keep (integers in `[0, count)`). */
  readonly keep: readonly number[];
}

/** Does `filter` keep every stream (none given, one partition, or every partition kept)? Then a store reads unfiltered. */
export const keepsEveryStream = (filter: StreamPartitionFilter | undefined): boolean => {
  if (filter === undefined || filter.count <= 1) return true;
  const keep = new Set(filter.keep);
  for (let p = 0; p < filter.count; p++) if (!keep.has(p)) return false;
  return true;
};

/** A predicate for `filter` (every stream when it is undefined), caching the answer per stream id. */
export const streamPartitionTest = (filter: StreamPartitionFilter | undefined): ((stream: string) => boolean) => {
  if (filter === undefined || keepsEveryStream(filter)) return () => true;
  const keep = new Set(filter.keep);
  const known = new Map<string, boolean>();
  return (stream) => {
    let kept = known.get(stream);
    if (kept === undefined) {
      kept = keep.has(partitionOf(stream, filter.count));
      if (known.size > 100_000) known.clear();
      known.set(stream, kept);
    }
    return kept;
  };
};
