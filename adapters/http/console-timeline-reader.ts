import type { LogEvent } from '../../domain/events.js';
import { sessionTimeline, type SessionTimeline } from '../../audit/session-timeline.js';
import type { DerivedCacheSource } from '../../runtime/ports/derived-cache.js';

/** The name of the console's timeline cache beside a stream. */
export const TIMELINE_CACHE_NAME = 'console-timeline';
/** The cache's version: a cache of another version is derived again (raise it whenever `sessionTimeline`'s answer changes). */
export const TIMELINE_CACHE_VERSION = 1;
const FORMAT = 'steerlog-console-timeline';

/**
 * Where the timeline a reader serves came from, once it was checked against the log: `log` (derived from the log's
 * events), `confirmed` (a cache whose timeline equals the log's own derivation), `replaced` (a cache that did not:
 * the log's derivation replaced it, and the reader serves that since).
 */
export type TimelineCheck = 'log' | 'confirmed' | 'replaced';

/** The stored event at a seq, as a cache's claim is checked against it. */
export interface StoredClaim {
  readonly id: string;
  readonly hash?: string;
  /** Whether it is the stream's last event. */
  readonly last: boolean;
}

/** How a {@link createTimelineReader} keeps timelines of stored sessions across restarts. */
export interface TimelineCacheOptions {
  /** Where the cache lives beside the stream (a JSONL store's `derived/`). */
  readonly cache: DerivedCacheSource;
  /** The stored event at `seq` of the session, read from the store; null when there is none. */
  readonly storedAt: (sessionId: string, seq: number) => Promise<StoredClaim | null>;
  /** Whether the session's events come from the store (it is not live on this host): only those are cached. */
  readonly stored: (sessionId: string) => boolean;
  /** Runs the load and check of a cache ahead of the long reads of logs. @defaultValue runs it as it comes */
  readonly first?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** A session's timeline, derived once per length of its log, and how it was checked. */
export interface TimelineReader {
  /** The session's timeline (`sessionTimeline` of its events); null: no such session. */
  (sessionId: string): Promise<SessionTimeline | null>;
  /**
   * Resolves once the timeline this reader serves for the session was checked against the log's events (a cache's
   * after the log was read and derived again); `log` when it was never read from a cache.
   */
  checked(sessionId: string): Promise<TimelineCheck>;
}

interface Held {
  readonly n: number;
  readonly lastId: string;
  readonly timeline: SessionTimeline;
  /** A cache's, until its check ends: served as it is meanwhile. */
  readonly pending: boolean;
  readonly check: Promise<TimelineCheck>;
}

interface CacheHeader {
  readonly format: string;
  readonly version: number;
  readonly sessionId: string;
  readonly events: number;
  readonly last: { readonly id: string; readonly hash?: string };
  readonly digest: string;
}

const isHeader = (v: unknown, sessionId: string): v is CacheHeader => {
  if (typeof v !== 'object' || v === null) return false;
  const h = v as Record<string, unknown>;
  const last = h.last as Record<string, unknown> | null | undefined;
  return (
    h.format === FORMAT &&
    h.version === TIMELINE_CACHE_VERSION &&
    h.sessionId === sessionId &&
    Number.isSafeInteger(h.events) &&
    (h.events as number) > 0 &&
    typeof last === 'object' &&
    last !== null &&
    typeof last.id === 'string' &&
    (last.hash === undefined || typeof last.hash === 'string') &&
    typeof h.digest === 'string'
  );
};

/**
 * A session's timeline, derived once per length of its log: the whole timeline, its summaries, turn pages and input
 * look-ups are all read from that one derivation. The last `keep` sessions' timelines are held.
 *
 * With `cache`, a stored session's timeline is also kept beside its stream (a header line: the events it was derived
 * from — how many, the last one's id and chain hash, SHA-256 of their stored bytes — then the timeline's JSON), so
 * the first request after a restart does not wait for a read of the whole log: the cache is served when the last
 * stored event is the one it names and the stored bytes of its events still hash to its digest (an edited store
 * file does not). It is served only until the log has been read: the reader reads and derives it at once, in the
 * background, and {@link TimelineReader.checked} says whether the derivation equals the cache (`confirmed`) or
 * replaced it (`replaced`: a cache file edited, or from a build that derives otherwise).
 */
export const createTimelineReader = (
  eventsOf: (sessionId: string) => Promise<readonly LogEvent[]>,
  options: { readonly keep?: number; readonly cache?: TimelineCacheOptions | null } = {},
): TimelineReader => {
  const keep = options.keep ?? 4;
  const cacheOptions = options.cache ?? null;
  const held = new Map<string, Held>();
  const deriving = new Map<string, Promise<SessionTimeline | null>>();
  const hold = (sessionId: string, entry: Held) => {
    held.delete(sessionId);
    held.set(sessionId, entry);
    while (held.size > keep) held.delete(held.keys().next().value!);
  };

  /**
   * Keeps `timeline` (derived from `events`) beside the stream. Its JSON (megabytes for a long session) is written out
   * after the answers that wait for the timeline have gone: a macrotask later, not on their way.
   */
  const save = async (sessionId: string, events: readonly LogEvent[], timeline: SessionTimeline): Promise<void> => {
    if (cacheOptions === null || !cacheOptions.stored(sessionId)) return;
    await new Promise((resolve) => setImmediate(resolve));
    const text = JSON.stringify(timeline);
    const n = events.length;
    const last = events[n - 1]!;
    const digest = await cacheOptions.cache.storedDigest(sessionId, n);
    if (digest === null) return;
    const header: CacheHeader = { format: FORMAT, version: TIMELINE_CACHE_VERSION, sessionId, events: n, last: { id: last.id, ...(last.hash !== undefined ? { hash: last.hash } : {}) }, digest };
    await cacheOptions.cache.saveDerived(sessionId, TIMELINE_CACHE_NAME, `${JSON.stringify(header)}\n${text}`);
  };

  /** The cached timeline, when its claim holds against the store; null otherwise (missing, damaged, stale, edited). */
  const load = async (sessionId: string): Promise<{ n: number; lastId: string; timeline: SessionTimeline; text: string } | null> => {
    if (cacheOptions === null) return null;
    const raw = await cacheOptions.cache.loadDerived(sessionId, TIMELINE_CACHE_NAME);
    if (raw === null) return null;
    const nl = raw.indexOf('\n');
    if (nl < 0) return null;
    let header: unknown;
    try {
      header = JSON.parse(raw.slice(0, nl));
    } catch {
      return null;
    }
    if (!isHeader(header, sessionId)) return null;
    const claim = await cacheOptions.storedAt(sessionId, header.events - 1);
    if (claim === null || !claim.last || claim.id !== header.last.id || claim.hash !== header.last.hash) return null;
    if ((await cacheOptions.cache.storedDigest(sessionId, header.events)) !== header.digest) return null;
    const text = raw.slice(nl + 1);
    try {
      return { n: header.events, lastId: header.last.id, timeline: JSON.parse(text) as SessionTimeline, text };
    } catch {
      return null;
    }
  };

  /** Reads the log and derives it; the cache served meanwhile is kept when it equals that derivation. */
  const confirm = async (sessionId: string, cached: { n: number; lastId: string; timeline: SessionTimeline; text: string }): Promise<TimelineCheck> => {
    let events: readonly LogEvent[];
    try {
      events = await eventsOf(sessionId);
    } catch {
      held.delete(sessionId);
      return 'replaced';
    }
    const same = events.length >= cached.n && events[cached.n - 1]!.id === cached.lastId && JSON.stringify(sessionTimeline(sessionId, events.slice(0, cached.n))) === cached.text;
    if (same && events.length === cached.n) {
      hold(sessionId, { n: cached.n, lastId: cached.lastId, timeline: cached.timeline, pending: false, check: Promise.resolve('confirmed') });
      return 'confirmed';
    }
    const check: TimelineCheck = same ? 'confirmed' : 'replaced';
    if (events.length === 0) {
      held.delete(sessionId);
      return check;
    }
    const timeline = sessionTimeline(sessionId, events);
    hold(sessionId, { n: events.length, lastId: events.at(-1)!.id, timeline, pending: false, check: Promise.resolve(check) });
    void save(sessionId, events, timeline);
    return check;
  };

  const derive = async (sessionId: string): Promise<SessionTimeline | null> => {
    const last = held.get(sessionId);
    // a cache is served as it is while the log is read to check it
    if (last?.pending) return last.timeline;
    if (last === undefined && cacheOptions !== null && cacheOptions.stored(sessionId)) {
      const cached = await (cacheOptions.first ?? ((work) => work()))(() => load(sessionId));
      if (cached !== null) {
        let settle!: (c: TimelineCheck) => void;
        const check = new Promise<TimelineCheck>((resolve) => (settle = resolve));
        hold(sessionId, { n: cached.n, lastId: cached.lastId, timeline: cached.timeline, pending: true, check });
        // after this answer: the read it waits for is shared with the view's other reads of the log
        setImmediate(() => void confirm(sessionId, cached).then(settle));
        return cached.timeline;
      }
    }
    const events = await eventsOf(sessionId);
    if (events.length === 0) return null;
    const lastId = events.at(-1)!.id;
    if (last && last.n === events.length && last.lastId === lastId) return last.timeline;
    const timeline = sessionTimeline(sessionId, events);
    hold(sessionId, { n: events.length, lastId, timeline, pending: false, check: Promise.resolve('log') });
    void save(sessionId, events, timeline);
    return timeline;
  };

  // requests that arrive while a session's timeline is derived share that derivation
  const reader = (sessionId: string): Promise<SessionTimeline | null> => {
    const running = deriving.get(sessionId);
    if (running) return running;
    const next = derive(sessionId).finally(() => deriving.delete(sessionId));
    deriving.set(sessionId, next);
    return next;
  };
  reader.checked = async (sessionId: string): Promise<TimelineCheck> => held.get(sessionId)?.check ?? 'log';
  return reader;
};
