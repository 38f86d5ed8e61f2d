import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type EventStore,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamRevision,
  type SubscribeAllOptions,
  type SubscribeOptions,
  type SubscriptionMessage,
} from '../../runtime/ports/event-store.js';
import { optionalEventFields, type RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { StoreClosedError, StoreIoError } from '../../runtime/ports/store-errors.js';
import { assertValidStreamId, DEFAULT_MAX_EVENT_BYTES } from '../../runtime/ports/store-validation.js';
import { allSource, catchUpThenLive, streamSource } from '../store/shared/catch-up.js';
import { ChangeNotifier } from '../store/shared/change-notifier.js';
import type { ArchivedSession, ArchiveHeader } from '../../formats/archive/archive-format.js';
import { readArchiveManifest, scanArchive } from '../../formats/archive/read-archive.js';

const recorded = (stream: string, position: number, e: RawEnvelope): RecordedEvent => ({
  stream,
  revision: streamRevision(e.seq),
  position: globalPosition(position),
  id: e.id,
  time: e.time,
  type: e.type,
  data: e.data,
  ...optionalEventFields(e),
});

/**
 * An archive file as a read-only EventStore (the `archive:<file>` store spec), so `audit`, `verify`, `why`,
 * `sessions` and `export` read archived sessions as they read a live store. The whole file is checked when it is
 * opened (openArchiveEventStore); every read streams it again, checking as it goes. Revisions are the sessions'
 * seqs; global positions are the events' order in the archive (0, 1, …), not their positions in the store they
 * came from. `append` rejects with `store-io`; subscriptions deliver what the archive holds, `caught-up`, then end
 * when the store is closed.
 */
export class ArchiveEventStore implements EventStore {
  readonly #file: string;
  readonly #sessions: ReadonlyMap<string, { readonly entry: ArchivedSession; readonly first: number }>;
  readonly #notifier = new ChangeNotifier();
  #closed = false;
  /** The archive's header: when it was written and the cutoff it was written with. */
  readonly header: ArchiveHeader;

  /** @internal use openArchiveEventStore */
  constructor(file: string, header: ArchiveHeader, sessions: readonly ArchivedSession[]) {
    this.#file = file;
    this.header = header;
    const map = new Map<string, { entry: ArchivedSession; first: number }>();
    let first = 0;
    for (const entry of sessions) {
      map.set(entry.session, { entry, first });
      first += entry.events;
    }
    this.#sessions = map;
  }

  /** Archives accept no events; this is the portable bound the port asks every store to state. */
  get maxEventBytes(): number {
    return DEFAULT_MAX_EVENT_BYTES;
  }

  /** The sessions the archive holds (its manifest), in file order. */
  get sessions(): readonly ArchivedSession[] {
    return [...this.#sessions.values()].map((s) => s.entry);
  }

  append(stream: string): Promise<AppendResult> {
    return Promise.reject(new StoreIoError('append', { cause: new Error(`${this.#file} is an archive: read-only (stream ${stream})`) }));
  }

  async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    assertValidStreamId(stream);
    const s = this.#sessions.get(stream);
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (!s || max <= 0) return;
    const backwards = options.direction === 'backwards';
    const from = Number(options.from ?? (backwards ? s.entry.events - 1 : 0));
    const picked: RecordedEvent[] = [];
    let count = 0;
    for await (const item of scanArchive(this.#file)) {
      if (item.kind === 'end' && item.entry.session === stream) break;
      if (item.kind !== 'event' || item.session !== stream) continue;
      const seq = item.envelope.seq;
      const e = recorded(stream, s.first + seq, item.envelope);
      if (backwards) {
        if (seq <= from) picked.push(e);
      } else if (seq >= from) {
        yield e;
        if (++count >= max) return;
      }
    }
    if (backwards) yield* picked.reverse().slice(0, max);
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    assertValidStreamId(stream);
    return catchUpThenLive(streamSource(this, stream, options.from), this.#notifier, null, options.signal);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    const after = options.after === undefined ? -1 : Number(options.after);
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    let position = -1;
    let count = 0;
    if (max <= 0) return;
    for await (const item of scanArchive(this.#file)) {
      if (item.kind !== 'event') continue;
      position++;
      if (position <= after) continue;
      yield recorded(item.session, position, item.envelope);
      if (++count >= max) return;
    }
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    return catchUpThenLive(allSource(this), this.#notifier, options.after ?? null, options.signal);
  }

  async revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    this.#assertOpen();
    assertValidStreamId(stream);
    const s = this.#sessions.get(stream);
    return s ? streamRevision(s.entry.head.seq) : 'no_stream';
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#notifier.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreClosedError();
  }
}

/**
 * Opens an archive file as a read-only store, after reading it whole once: a damaged, truncated or foreign file
 * rejects with an ArchiveError (`archive-corrupt`) naming the line and session; a missing one with `store-io`.
 */
export const openArchiveEventStore = async (file: string): Promise<ArchiveEventStore> => {
  try {
    const { header, sessions } = await readArchiveManifest(file);
    return new ArchiveEventStore(file, header, sessions);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw new StoreIoError('open', { cause: e });
    throw e;
  }
};
