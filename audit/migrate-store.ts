/**
 * `steerlog store migrate`'s use case: copies every stream of one store into another, empty one, through the
 * target's own `append`, then verifies the copy against the source.
 */
import type { EventStore, NewEvent, RecordedEvent, StreamRevision } from '../runtime/ports/event-store.js';
import { streamRevision } from '../runtime/ports/event-store.js';
import { optionalEventFields } from '../runtime/ports/recorded-envelope.js';
import { readAllPages, readStreamPages } from '../runtime/ports/paged-reads.js';

/** The stable codes of a refused or failed migration. */
export type MigrateErrorCode = 'migrate-same-store' | 'migrate-target-not-empty' | 'migrate-mismatch';

/**
 * A migration refused before it wrote anything (`migrate-same-store`, `migrate-target-not-empty`), or a copy that
 * does not equal its source (`migrate-mismatch`: the source changed during the copy, or the target did not keep an
 * event as given). The message is one line.
 */
export class MigrateError extends Error {
  constructor(
    readonly code: MigrateErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'MigrateError';
  }
}
/** Is this a {@link MigrateError}? (by its stable `code`) */
export const isMigrateError = (e: unknown): e is MigrateError =>
  typeof e === 'object' && e !== null && ['migrate-same-store', 'migrate-target-not-empty', 'migrate-mismatch'].includes((e as { code?: unknown }).code as string);

/** Options of {@link migrateStore}. */
export interface MigrateStoreOptions {
  /** The most events one `append` of the target carries (a run of one stream's consecutive events). @defaultValue 1000 */
  readonly batchSize?: number;
  /** Told the number of events copied so far, after every append (progress). */
  readonly onCopied?: (events: number) => void;
}

/** What `steerlog store migrate --json` prints (and {@link migrateStore} resolves). */
export interface MigrateReport {
  readonly format: 'steerlog-store-migration';
  readonly version: 1;
  /** Streams copied (the source's live streams: a deleted stream has no events to copy). */
  readonly streams: number;
  /** Events copied. */
  readonly events: number;
  /** Streams whose last event carries a chain hash (their chain head, verified equal in the target). */
  readonly chainHeads: number;
  /** Appends made to the target. */
  readonly appends: number;
  /**
   * `kept`: every event has the same global position in the target as in the source. `renumbered`: the target
   * numbered them afresh, in the same order (the source had gaps, e.g. the positions of deleted streams).
   */
  readonly positions: 'kept' | 'renumbered';
  /** Every target stream was read back and found equal to its source stream, event by event, chain head included. */
  readonly verified: true;
}

/** What migrate copies of an event: every field but the places the target assigns (stream, revision, position). */
const newEventOf = (e: RecordedEvent): NewEvent => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...optionalEventFields(e) });

/** The fields two stores must agree on for an event, as one comparable text (revision included; position not). */
const verbatim = (e: RecordedEvent): string =>
  JSON.stringify([String(e.revision), e.id, e.type, e.time, e.data, e.ignorable === true, e.metadata ?? null, e.hash ?? null]);

/** One copied stream: its events, its last revision and its chain head (the last event's hash). */
interface Copied {
  count: number;
  next: StreamRevision | 'no_stream';
  head: string | null;
}

/**
 * Copies every event of `source` into the empty store `target`, in the source's global order, through the target's
 * `append` with expected revisions (a run of one stream's consecutive events per append): ids, times, types, data,
 * metadata, `ignorable` and chain hashes as they are, so every stream keeps its revisions and its chain. Then reads
 * every target stream back beside its source stream and compares them event by event, and compares the number of
 * events in the whole target. The source is only read.
 *
 * Not resumable: a target that holds any event is refused before anything is written, so a migration that stopped
 * part way leaves a target the next run refuses (`migrate-target-not-empty`); remove it and run again.
 * @throws MigrateError `migrate-same-store` (source and target are one object), `migrate-target-not-empty`, or
 *   `migrate-mismatch` after the copy (the target then holds the copy as far as it went)
 * @throws StoreError from either store as it is (e.g. `event-too-large` when the target's limit is smaller)
 */
export const migrateStore = async (source: EventStore, target: EventStore, options: MigrateStoreOptions = {}): Promise<MigrateReport> => {
  if (source === target) throw new MigrateError('migrate-same-store', 'the source and the target are the same store');
  for await (const page of readAllPages(target, { maxCount: 1 })) {
    const first = page[0];
    if (first !== undefined) {
      throw new MigrateError(
        'migrate-target-not-empty',
        `the target store is not empty (stream "${first.stream}" has events): migrate copies into an empty store only, and does not resume a copy that stopped part way; remove the target and run again`,
      );
    }
  }
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 1000));
  const streams = new Map<string, Copied>();
  let events = 0;
  let appends = 0;
  let positionsKept = true;
  let batch: NewEvent[] = [];
  let batchStream = '';
  let batchLast: RecordedEvent | undefined;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const copied = streams.get(batchStream)!;
    const result = await target.append(batchStream, batch, copied.next);
    appends++;
    const expectedLast = batchLast!.revision;
    if (result.nextExpectedRevision !== expectedLast) {
      throw new MigrateError('migrate-mismatch', `stream "${batchStream}": the target stored revisions up to ${result.nextExpectedRevision}, the source's are up to ${expectedLast}`);
    }
    if (result.position !== batchLast!.position) positionsKept = false;
    copied.count += batch.length;
    copied.next = result.nextExpectedRevision;
    copied.head = batchLast!.hash ?? null;
    events += batch.length;
    options.onCopied?.(events);
    batch = [];
  };
  for await (const page of readAllPages(source, { pageSize: 1024 })) {
    for (const e of page) {
      if (e.stream !== batchStream || batch.length >= batchSize) {
        await flush();
        batchStream = e.stream;
      }
      let copied = streams.get(e.stream);
      if (copied === undefined) streams.set(e.stream, (copied = { count: 0, next: 'no_stream', head: null }));
      // a source stream's revisions are dense from 0: anything else would not survive the copy unseen
      const want = copied.count + batch.length;
      if (e.revision !== streamRevision(want)) {
        throw new MigrateError('migrate-mismatch', `stream "${e.stream}": the source's event ${e.id} has revision ${e.revision}, expected ${want}`);
      }
      batchLast = e;
      batch.push(newEventOf(e));
    }
  }
  await flush();
  await verifyCopy(source, target, streams, events);
  let chainHeads = 0;
  for (const c of streams.values()) if (c.head !== null) chainHeads++;
  return { format: 'steerlog-store-migration', version: 1, streams: streams.size, events, chainHeads, appends, positions: positionsKept ? 'kept' : 'renumbered', verified: true };
};

/**
 * Every copied stream read back from both stores side by side, page by page: the same events in the same order, and
 * nothing after them on either side; then the target's whole log holds exactly the events copied.
 */
const verifyCopy = async (source: EventStore, target: EventStore, streams: ReadonlyMap<string, Copied>, events: number): Promise<void> => {
  const mismatch = (stream: string, what: string): MigrateError =>
    new MigrateError('migrate-mismatch', `stream "${stream}" in the target differs from the source after the copy: ${what} (did something write to either store meanwhile?)`);
  for (const [stream, copied] of streams) {
    const a = eventsOf(source, stream);
    const b = eventsOf(target, stream);
    let n = 0;
    let head: string | null = null;
    try {
      for (;;) {
      const [x, y] = await Promise.all([a.next(), b.next()]);
      if (x.done === true && y.done === true) break;
      if (x.done === true || y.done === true) throw mismatch(stream, `the ${x.done === true ? 'target' : 'source'} has more events (${n} equal before)`);
      if (verbatim(x.value) !== verbatim(y.value)) throw mismatch(stream, `revision ${x.value.revision} (id ${x.value.id}) is not the same event`);
      head = x.value.hash ?? null;
      n++;
      }
    } finally {
      await Promise.all([a.return(undefined), b.return(undefined)]);
    }
    if (n !== copied.count) throw mismatch(stream, `the source now has ${n} events, ${copied.count} were copied`);
    if (head !== copied.head) throw mismatch(stream, 'the chain head is not the one copied');
  }
  let total = 0;
  for await (const page of readAllPages(target, { pageSize: 4096 })) total += page.length;
  if (total !== events) throw new MigrateError('migrate-mismatch', `the target holds ${total} events after the copy, ${events} were copied`);
};

/** A stream's events one at a time, read in pages. */
async function* eventsOf(store: EventStore, stream: string): AsyncGenerator<RecordedEvent> {
  for await (const page of readStreamPages(store, stream, { pageSize: 1024 })) yield* page;
}
