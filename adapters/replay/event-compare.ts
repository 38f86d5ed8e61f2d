import type { LogEvent } from '../../domain/events.js';

/**
 * The comparison of a replay: a produced event equals the recorded one at the same position when its type, data,
 * `ignorable` flag and metadata are the same — with a `causationId` compared as the position of the event it names
 * (ids are fed from the recording, but positions are what the log's causal structure is), and without what a replay
 * does not reproduce: the event's id, time and hash, and `session/created`'s creation time.
 */

/** The first position where a produced log departs from the recorded one. */
export interface ReplayDivergence {
  /** The seq (in the recorded log) of the first event that differs. */
  readonly seq: number;
  /** The recorded event's type (else the produced one's). */
  readonly type: string;
  /** The recorded event there (null: the recording ends before it). */
  readonly recorded: LogEvent | null;
  /** The produced event there (null: the runtime produced none, and waited as `waiting` says). */
  readonly produced: LogEvent | null;
  /** What the runtime was waiting for when it produced nothing where the recording has an event. */
  readonly waiting?: string;
}

type Positions = ReadonlyMap<string, number>;

/**
 * Two JSON values are the same, whatever the order of their objects' keys: a sealed payload opened with its key is
 * restored in the sealer's key order, not necessarily the order the runtime writes.
 */
export const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => sameValue(v, (b as unknown[])[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra);
  return ka.length === Object.keys(rb).length && ka.every((k) => Object.hasOwn(rb, k) && sameValue(ra[k], rb[k]));
};

const positionsOf = (events: readonly LogEvent[]): Map<string, number> => new Map(events.map((e, i) => [e.id as string, i]));

/**
 * An event as the replay compares it: without its metadata when `metadata` is false, and without an answer's
 * `finishReason` when `finishReasons` is false (a log written before the runtime recorded them).
 */
export const comparable = (e: LogEvent, positions: Positions, metadata = true, finishReasons = true): unknown => {
  let data = e.data;
  if (e.type === 'session/created') {
    const { createdAt: _c, ...rest } = e.data as Record<string, unknown>;
    data = rest;
  }
  if (!finishReasons && e.type === 'assistant/message') {
    const { finishReason: _f, ...rest } = e.data as Record<string, unknown>;
    data = rest;
  }
  let meta: unknown = e.metadata;
  if (e.metadata?.causationId !== undefined) {
    const at = positions.get(e.metadata.causationId);
    meta = { ...e.metadata, causationId: at === undefined ? e.metadata.causationId : `#${at}` };
  }
  return { type: e.type, data, ignorable: e.ignorable === true, ...(metadata ? { metadata: meta ?? null } : {}) };
};

/**
 * Compares the events both logs have, incrementally: `next(produced)` checks only what it has not checked yet. A
 * recording that holds no metadata at all (written by the pure deciders, or by a writer that records no causation)
 * is compared without it; one that records no answer's finish reason while a turn of it ended `max-tokens` (written
 * before the runtime recorded them) is compared without them.
 */
export const divergenceFinder = (recorded: readonly LogEvent[]) => {
  const metadata = recorded.some((e) => e.metadata !== undefined);
  const finishReasons =
    recorded.some((e) => e.type === 'assistant/message' && (e.data as { finishReason?: string }).finishReason !== undefined) ||
    !recorded.some((e) => e.type === 'turn/end' && (e.data as { reason: { kind: string } }).reason.kind === 'max-tokens');
  const recordedAt = positionsOf(recorded);
  const producedAt = new Map<string, number>();
  let checked = 0;
  return (produced: readonly LogEvent[]): ReplayDivergence | null => {
    for (; checked < produced.length; checked++) {
      const p = produced[checked]!;
      producedAt.set(p.id, checked);
      const r = recorded[checked];
      if (!r) return { seq: (recorded.at(-1)?.seq ?? -1) + 1, type: p.type, recorded: null, produced: p };
      if (!sameValue(comparable(r, recordedAt, metadata, finishReasons), comparable(p, producedAt, metadata, finishReasons))) return { seq: r.seq, type: r.type, recorded: r, produced: p };
    }
    return null;
  };
};
