import { globalPosition, streamRevision, type GlobalPosition, type NewEvent, type RecordedEvent } from '../../../runtime/ports/event-store.js';
import type { ActualRevision } from '../../../runtime/ports/store-errors.js';

/**
 * What the EventStoreDB/KurrentDB store knows about the ids its streams hold, to decide an append's idempotency
 * (every id stored, in order: a no-op; only some: refused) without rereading the stream: per stream, each stored
 * id's revision, the last revision indexed and its position. The server alone cannot tell a repeated batch.
 *
 * Kept for the `limit` most recently used streams (the oldest forgotten first); a forgotten stream is read again
 * from its start the next time an append needs it. Brought up to date by reading only the events after the last
 * indexed one, so another writer's appends are seen at the next refresh.
 */
export interface StreamIds {
  readonly revisionOfId: Map<string, bigint>;
  /** Revision of the last indexed event, -1 when none. */
  last: bigint;
  lastPosition: GlobalPosition;
}

/** The actual revision a stream's ids say it is at. */
export const actualOf = (ids: StreamIds): ActualRevision => (ids.last < 0n ? 'no_stream' : streamRevision(ids.last));

/** The id index of the most recently used streams. */
export class IdIndex {
  readonly #streams = new Map<string, StreamIds>();
  readonly #limit: number;
  /** Reads a stream's events from a revision on (throwing `StreamDeletedError` for a tombstoned stream). */
  readonly #readFrom: (stream: string, from: bigint) => AsyncIterable<RecordedEvent>;

  constructor(readFrom: (stream: string, from: bigint) => AsyncIterable<RecordedEvent>, limit: number) {
    this.#readFrom = readFrom;
    this.#limit = Math.max(1, limit);
  }

  /** The stream's ids, brought up to date by reading only the events after the last indexed one. */
  async refresh(stream: string): Promise<StreamIds> {
    let ids = this.#streams.get(stream);
    if (ids) this.#streams.delete(stream); // re-insert: most recently used last
    else ids = { revisionOfId: new Map(), last: -1n, lastPosition: globalPosition(-1) };
    this.#streams.set(stream, ids);
    while (this.#streams.size > this.#limit) this.#streams.delete(this.#streams.keys().next().value!);
    for await (const e of this.#readFrom(stream, ids.last + 1n)) {
      if (e.revision <= ids.last) continue; // a concurrent refresh got there first
      ids.revisionOfId.set(e.id, e.revision);
      ids.last = e.revision;
      ids.lastPosition = e.position;
    }
    return ids;
  }

  /** Records this store's own append (ending at revision `next`), unless someone else wrote in between. */
  recordAppend(stream: string, events: readonly NewEvent[], next: bigint, position: GlobalPosition): void {
    const ids = this.#streams.get(stream);
    const first = next - BigInt(events.length) + 1n;
    if (!ids || ids.last !== first - 1n) return; // someone else wrote in between: the next refresh reads it
    events.forEach((e, i) => ids.revisionOfId.set(e.id, first + BigInt(i)));
    ids.last = next;
    ids.lastPosition = position;
  }

  /** Forgets a stream (deleted). */
  delete(stream: string): void {
    this.#streams.delete(stream);
  }

  /** Forgets every stream (the store closed). */
  clear(): void {
    this.#streams.clear();
  }
}
