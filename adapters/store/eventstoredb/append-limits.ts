/**
 * The size limits an EventStoreDB server enforces on appends, measured the way the server measures them, and the
 * split of a batch into requests that fit. Pure: no I/O.
 */
import type { WireEventData } from './client-driver.js';
import { EventTooLargeError } from '../../../runtime/ports/store-errors.js';

/** What one server refuses: the bytes of one append request, and of one event. */
export interface EventStoreDbServerLimits {
  /** Largest request (data + metadata + 2 × type, summed over the events of one append call), in bytes. */
  readonly maxAppendSize: number;
  /** Largest single event (data + metadata + 2 × type), in bytes. */
  readonly maxEventSize: number;
}

const MiB = 1024 * 1024;

/**
 * Defaults of the server versions steerlog knows: up to 25.0 a 1 MiB request limit (no separate event limit, so an
 * event can be at most the whole request); from 25.1, 256 MiB per request and 16 MiB per event.
 */
export const ESDB_SERVER_LIMITS = {
  upTo25_0: { maxAppendSize: MiB, maxEventSize: MiB },
  from25_1: { maxAppendSize: 256 * MiB, maxEventSize: 16 * MiB },
} as const satisfies Record<string, EventStoreDbServerLimits>;

/** The bytes the server counts for one event: its data, its custom metadata, and its type twice. */
export const serverEventSize = (e: WireEventData): number => {
  const bytesOf = (v: unknown): number =>
    v === undefined ? 0 : v instanceof Uint8Array ? v.byteLength : Buffer.byteLength(JSON.stringify(v), 'utf8');
  return bytesOf(e.data) + bytesOf(e.metadata) + 2 * Buffer.byteLength(e.type, 'utf8');
};

/**
 * Splits a batch into consecutive requests that each fit `maxAppendSize`, keeping order; refuses an event that
 * alone exceeds `min(maxEventSize, maxAppendSize)` with `EventTooLargeError` (its index, size and the limit).
 */
export const splitToFit = <E extends WireEventData>(events: readonly E[], limits: EventStoreDbServerLimits): E[][] => {
  const eventLimit = Math.min(limits.maxEventSize, limits.maxAppendSize);
  const chunks: E[][] = [];
  let current: E[] = [];
  let size = 0;
  events.forEach((e, i) => {
    const bytes = serverEventSize(e);
    if (bytes > eventLimit) throw new EventTooLargeError(i, bytes, eventLimit);
    if (current.length > 0 && size + bytes > limits.maxAppendSize) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += bytes;
  });
  if (current.length > 0) chunks.push(current);
  return chunks;
};
