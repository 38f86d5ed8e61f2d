/**
 * The PostgreSQL store's encoding of events: a batch of new events into the column arrays `append_events` takes
 * (refusing text PostgreSQL cannot store), cut into chunks by size, and a stored row back into a RecordedEvent.
 */
import { globalPosition, streamRevision, type NewEvent, type RecordedEvent } from '../../../runtime/ports/event-store.js';
import { InvalidEventError } from '../../../runtime/ports/store-errors.js';
import { checkedForm } from '../../../runtime/ports/checked-events.js';
import { deepFreeze } from '../../../domain/json.js';
import { sealedOf } from '../../../domain/sealed-content.js';
import { searchableText } from '../../../audit/session-search.js';

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Text as the text index stores it: PostgreSQL text holds neither U+0000 (a space instead, which no search word
 * holds) nor a lone surrogate (U+FFFD instead). Search words are normalized the same way.
 */
export const indexableText = (text: string): string => text.replace(new RegExp(NUL.source, 'g'), ' ').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd');

/** A batch of new events as the column arrays `append_events` takes, and its approximate size (see {@link chunkBySize}). */
export interface EncodedBatch {
  readonly ids: string[];
  readonly types: string[];
  readonly times: number[];
  readonly data: string[];
  readonly ignorable: boolean[];
  readonly metadata: (string | null)[];
  readonly hashes: (string | null)[];
  /** The text search reads in each event, lower-cased (null: none, or sealed): the rows of the text index. */
  readonly texts: (string | null)[];
  /** Whether each event carries sealed content (indexed as such: its text is never stored in clear). */
  readonly sealed: boolean[];
  readonly bytes: number;
}

/** What one event adds to a statement, about: its texts in UTF-16 code units plus a fixed allowance for the rest of the row. */
const rowBytes = (data: string, id: string, type: string, metadata: string | null | undefined): number =>
  data.length + id.length + type.length + (metadata?.length ?? 0) + 96;

/**
 * Encodes a validated batch into the column arrays of `append_events`.
 * PostgreSQL text cannot hold U+0000, and UTF-8 cannot hold a lone surrogate: refuse such ids and types rather
 * than let the driver alter them. `data` is kept as JSON text, where both survive as `\u` escapes.
 * @throws InvalidEventError naming the first event whose id or type cannot be stored
 */
export const encodeBatch = (events: readonly NewEvent[]): EncodedBatch => {
  const batch = {
    ids: [] as string[],
    types: [] as string[],
    times: [] as number[],
    data: [] as string[],
    ignorable: [] as boolean[],
    metadata: [] as (string | null)[],
    hashes: [] as (string | null)[],
    texts: [] as (string | null)[],
    sealed: [] as boolean[],
    bytes: 0,
  };
  events.forEach((e, i) => {
    for (const [field, value] of [['id', e.id], ['type', e.type]] as const) {
      if (NUL.test(value)) throw new InvalidEventError(i, `${field} contains U+0000, which PostgreSQL text cannot store`);
      if (LONE_SURROGATE.test(value)) throw new InvalidEventError(i, `${field} is not valid UTF-16 (lone surrogate)`);
    }
    const data = checkedForm(e)?.dataJson ?? JSON.stringify(e.data);
    batch.ids.push(e.id);
    batch.types.push(e.type);
    batch.times.push(e.time);
    batch.data.push(data);
    batch.ignorable.push(e.ignorable === true);
    const metadata = e.metadata === undefined ? null : JSON.stringify(e.metadata);
    batch.metadata.push(metadata);
    batch.hashes.push(e.hash ?? null);
    const sealed = sealedOf(e.type, e.data).length > 0;
    const text = sealed ? '' : searchableText(e.type, e.data);
    batch.texts.push(text === '' ? null : indexableText(text.toLowerCase()));
    batch.sealed.push(sealed);
    batch.bytes += rowBytes(data, e.id, e.type, metadata) + text.length;
  });
  return batch;
};

/**
 * Cuts `batch` into consecutive chunks of about `maxBytes` at most (one event per chunk when an event alone is
 * larger), in order; the whole batch as one chunk when it fits.
 */
export const chunkBySize = (batch: EncodedBatch, maxBytes: number): EncodedBatch[] => {
  if (batch.bytes <= maxBytes) return [batch];
  const chunks: EncodedBatch[] = [];
  let start = 0;
  let bytes = 0;
  const cut = (end: number): void => {
    chunks.push({
      ids: batch.ids.slice(start, end),
      types: batch.types.slice(start, end),
      times: batch.times.slice(start, end),
      data: batch.data.slice(start, end),
      ignorable: batch.ignorable.slice(start, end),
      metadata: batch.metadata.slice(start, end),
      hashes: batch.hashes.slice(start, end),
      texts: batch.texts.slice(start, end),
      sealed: batch.sealed.slice(start, end),
      bytes,
    });
    start = end;
    bytes = 0;
  };
  for (let i = 0; i < batch.ids.length; i++) {
    const size = rowBytes(batch.data[i]!, batch.ids[i]!, batch.types[i]!, batch.metadata[i]) + (batch.texts[i]?.length ?? 0);
    if (i > start && bytes + size > maxBytes) cut(i);
    bytes += size;
  }
  cut(batch.ids.length);
  return chunks;
};

/** A row of the events table as PostgreSQL's text output (the read statements' columns). */
export interface EventRow {
  readonly position: string;
  readonly stream: string;
  readonly revision: string;
  readonly id: string;
  readonly type: string;
  readonly time: string;
  readonly data: string;
  readonly ignorable: string;
  readonly metadata: string | null;
  readonly hash: string | null;
}

/** Decodes a row of the events table (in PostgreSQL's text output, see RAW_TYPES) into a frozen RecordedEvent. */
export const toRecorded = (row: EventRow): RecordedEvent =>
  deepFreeze({
    stream: row.stream,
    revision: streamRevision(BigInt(row.revision)),
    position: globalPosition(BigInt(row.position)),
    id: row.id,
    type: row.type,
    time: Number(row.time),
    data: JSON.parse(row.data) as unknown,
    ...(row.ignorable === 't' ? { ignorable: true as const } : {}),
    ...(row.metadata !== null ? { metadata: JSON.parse(row.metadata) as Record<string, unknown> } : {}),
    ...(row.hash !== null ? { hash: row.hash } : {}),
  });
