import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent, SessionCreatedData } from '../domain/events.js';
import { modelMessageOf, type ModelMessage } from '../domain/model-messages.js';
import { parseEvent } from '../domain/parse-event.js';
import { envelopeOfRecorded } from './ports/recorded-envelope.js';
import type { ResumeFacts } from '../domain/resume-facts.js';
import type { SessionState } from '../domain/session-fold.js';
import { RuntimeError } from './errors.js';
import type { EventStore } from './ports/event-store.js';
import { isFoldSnapshotSource } from './ports/fold-snapshots.js';
import { foldRange, SNAPSHOT_EVERY, usableBelow } from './session-range.js';

/**
 * Loading a session for a resume without holding (or folding) its whole log: the fold state and resume facts come
 * from the latest fold snapshot whose claim the log confirms (runtime/session-range.ts), and only the events from
 * that snapshot on are read and kept — from the start of the turn open at the snapshot, when one is, because a crash
 * repair closes that turn from its own events. A session without a usable snapshot near its end (none, or the last
 * one far below it) is folded from the best one there is, the fold writes its snapshots, and the window is read
 * again from the latest: the events held are then at most about two snapshot intervals plus the open turn. See docs/store-jsonl.md, "Fold snapshots".
 */

/** A session loaded from a snapshot: the events from `base` on, the state and facts after the last one. */
export interface LoadedWindow {
  /** The seq of `events[0]`: the events before it are durable in the store and not held. */
  readonly base: number;
  /** The events `[base, end)`, parsed. */
  readonly events: readonly LogEvent[];
  readonly state: SessionState;
  readonly facts: ResumeFacts;
  /** The session's `session/created` data (the fold keeps it). */
  readonly header: SessionCreatedData;
  /** The chain hash of the last event of the log (the head a resumed log continues from). */
  readonly head: string;
}

/**
 * The session as a window, or undefined when it must be loaded whole (`loadSession`): a store that keeps no fold
 * snapshots, a session with sub-agent events (a parent's runs are derived from its whole log), or an event without
 * a chain hash in the window (the chain's head of an unchained log is computed over all of it). Reads in the clear:
 * a session with sealed content has no snapshots (runtime/session-range.ts), and a runtime with encryption loads
 * whole. Throws `session-not-found` for an empty stream, `session-corrupt` for an event that does not parse or fold.
 */
export const loadSessionWindow = async (store: EventStore, sessionId: string, again = true): Promise<LoadedWindow | undefined> => {
  if (!isFoldSnapshotSource(store)) return undefined;
  // the last snapshot alone (every one only when it is not usable, for the next usable one below it)
  const last = await store.loadFoldSnapshotsNear(sessionId, { from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER });
  const latest = usableBelow(last) ?? (last.length > 0 ? usableBelow(await store.loadFoldSnapshots(sessionId)) : undefined);
  let from = 0;
  if (latest !== undefined) {
    const open = latest.state.turns.openTurn;
    from = open !== null ? Math.min(open.startSeq, latest.snapshot.seq + 1) : latest.snapshot.seq + 1;
  }
  let read = await foldRange(store, sessionId, { from, to: Number.MAX_SAFE_INTEGER }, null, { keepSteps: false });
  // a refused snapshot (the fold started lower) may have named another open turn: its window starts at that turn
  const open = read.state.turns.openTurn;
  if (open !== null && open.startSeq < from) {
    from = open.startSeq;
    read = await foldRange(store, sessionId, { from, to: Number.MAX_SAFE_INTEGER }, null, { keepSteps: false });
  }
  if (read.state.nextSeq === 0) throw new RuntimeError('session-not-found', `no session ${sessionId} in the store`);
  // folded far (no snapshot near the end): the fold wrote its snapshots; the window is read again from the latest one
  if (again && read.events.length > 2 * SNAPSHOT_EVERY && !read.facts.subagents) return loadSessionWindow(store, sessionId, false);
  if (read.facts.subagents || read.state.created === null) return undefined;
  if (from > 0 && read.events.some((e) => e.hash === undefined)) return undefined;
  // the head: the last event's hash, or (no event after the snapshot) the hash its confirmed claim names
  const head = read.events.length > 0 ? read.events.at(-1)!.hash : !read.refused ? latest?.snapshot.hash : undefined;
  if (head === undefined) return undefined;
  return { base: read.state.nextSeq - read.events.length, events: read.events, state: read.state, facts: read.facts, header: read.state.created, head };
};

/**
 * The model's surface (user, assistant and tool-result messages, in log order) of the events before `base`: what
 * an agent resumed from a fold snapshot reads before its first model request. Only those events are parsed.
 */
export const readSurfaceBefore = async (store: EventStore, sessionId: string, base: number): Promise<ModelMessage[]> => {
  const out: ModelMessage[] = [];
  if (base <= 0) return out;
  let seq = 0;
  for await (const r of store.read(sessionId, { maxCount: base })) {
    if (SURFACE_TYPES.has(r.type)) {
      const parsed = parseEvent(envelopeOfRecorded(r), { expectedSeq: seq });
      if (E.isLeft(parsed)) throw new RuntimeError('session-corrupt', `session ${sessionId}: ${parsed.left.message}`, { cause: parsed.left });
      const m = modelMessageOf(parsed.right);
      if (m) out.push(m);
    }
    seq++;
  }
  return out;
};

const SURFACE_TYPES: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result']);
