import * as E from 'fp-ts/lib/Either.js';
import { hasPending } from '../domain/inbox/inbox-state.js';
import { parseEvent } from '../domain/parse-event.js';
import { initialSessionState, stepSession, type SessionState } from '../domain/session-fold.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import { createSessionVerifier } from '../formats/chain/verify-session.js';

/** Why a session stays in the live store. */
export type KeptReason =
  /** Its last event is not before the cutoff. */
  | 'recent'
  /** A turn is open at the end of its log (running, or a crash). */
  | 'open-turn'
  /** Input is pending at the end of its log. */
  | 'pending-work'
  /** Its log does not fold (an invalid event). */
  | 'invalid'
  /** Its hash chain is not `verified` (unchained, partly chained, broken): an archive must be provable. */
  | 'chain-not-verified'
  /** It is ended, but its parent or one of its children (session/created's parentSession) is still live and not ended. */
  | 'family-not-ended';

/** One session of the store as the archive selection sees it. */
export interface SessionEnd {
  readonly session: string;
  readonly events: number;
  /** Its last event (seq, time). */
  readonly lastSeq: number;
  readonly lastTime: number;
  readonly parent: string | null;
  /** null: ended (on its own); otherwise why it stays. */
  readonly kept: KeptReason | null;
}

/** Reads one session once: folds it (open turn, pending input, validity) and verifies its chain. */
export const sessionEnd = async (store: EventStore, session: string, before: number): Promise<SessionEnd> => {
  const verifier = createSessionVerifier(session);
  let state: SessionState = initialSessionState();
  let invalid = false;
  let events = 0;
  let lastTime = 0;
  for await (const r of store.read(session)) {
    const raw = envelopeOfRecorded(r);
    verifier.push(raw);
    events++;
    lastTime = raw.time;
    if (invalid) continue;
    const parsed = parseEvent(raw, { expectedSeq: state.nextSeq });
    const step = E.isLeft(parsed) ? parsed : stepSession(state, parsed.right);
    if (E.isLeft(step)) invalid = true;
    else state = step.right.state;
  }
  const kept: KeptReason | null = invalid
    ? 'invalid'
    : verifier.result().status !== 'verified'
      ? 'chain-not-verified'
      : state.turns.openTurn
        ? 'open-turn'
        : hasPending(state.inbox)
          ? 'pending-work'
          : lastTime >= before
            ? 'recent'
            : null;
  return { session, events, lastSeq: events - 1, lastTime, parent: state.created?.parentSession ?? null, kept };
};

/**
 * Which sessions of the store are ended as of `before` (epoch ms), whole families at a time. A session is ended when
 * its log is valid, its chain verified, no turn is open and nothing is pending at its end, and its last event is
 * older than `before`. Families move together: a session whose parent is still in the store is archived only with
 * its parent, and a parent only with every child the store holds — so an archive never leaves a live child without
 * its parent's log, nor a live parent whose children are gone. A parent that is no longer in the store (archived
 * earlier) does not hold its children back.
 */
export const selectEnded = async (store: EventStore, before: number): Promise<{ ended: SessionEnd[]; kept: SessionEnd[] }> => {
  const order: string[] = [];
  const seen = new Set<string>();
  for await (const page of readAllPages(store)) {
    for (const e of page) {
      if (!seen.has(e.stream)) {
        seen.add(e.stream);
        order.push(e.stream);
      }
    }
  }
  const all = new Map<string, SessionEnd>();
  for (const s of order) all.set(s, await sessionEnd(store, s, before));
  const candidate = new Set([...all.values()].filter((s) => s.kept === null).map((s) => s.session));
  const children = new Map<string, string[]>();
  for (const s of all.values()) if (s.parent !== null && all.has(s.parent)) children.set(s.parent, [...(children.get(s.parent) ?? []), s.session]);
  for (let changed = true; changed; ) {
    changed = false;
    for (const id of [...candidate]) {
      const s = all.get(id)!;
      const parentHolds = s.parent !== null && all.has(s.parent) && !candidate.has(s.parent);
      const childHolds = (children.get(id) ?? []).some((c) => !candidate.has(c));
      if (parentHolds || childHolds) {
        candidate.delete(id);
        changed = true;
      }
    }
  }
  const ended: SessionEnd[] = [];
  const kept: SessionEnd[] = [];
  for (const s of all.values()) {
    if (candidate.has(s.session)) ended.push(s);
    else kept.push(s.kept === null ? { ...s, kept: 'family-not-ended' } : s);
  }
  return { ended, kept };
};
