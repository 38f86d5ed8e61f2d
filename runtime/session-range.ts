import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../domain/events.js';
import { parseEvent } from '../domain/parse-event.js';
import { initialSessionState, stepSession, type SessionState, type SessionStep } from '../domain/session-fold.js';
import { initialResumeFacts, resumeFactsFromJson, stepResumeFacts, type ResumeFacts } from '../domain/resume-facts.js';
import { SESSION_FOLD_VERSION, sessionStateFromJson, sessionStateToJson } from '../domain/session-state-snapshot.js';
import { createKeyring, openEnvelopeNow } from './content-opener.js';
import { RuntimeError } from './errors.js';
import type { EventStore } from './ports/event-store.js';
import { isFoldSnapshotSource, type FoldSnapshot } from './ports/fold-snapshots.js';
import type { KeyStore } from './ports/key-store.js';
import { readStreamPages } from './ports/paged-reads.js';
import { envelopeOfRecorded } from './ports/recorded-envelope.js';

/**
 * Reading a range of a session without reading its whole log: the fold starts at the nearest fold snapshot below
 * the range (runtime/ports/fold-snapshots.ts) whose claim the log confirms, or at seq 0, and reads only from there to
 * the end of the range. Snapshots are taken at every {@link SnapshotOptions.every}-th event the fold passes and kept
 * beside the stream, so the next read of a deeper range starts near it. See docs/store-jsonl.md, "Fold snapshots".
 */

/** Options of {@link foldRange}, with their defaults. */
export interface SnapshotOptions {
  /** A snapshot is taken after every event whose seq + 1 is a multiple of this (default 512). */
  readonly every?: number;
  /** Keep what each event of the range did to the fold (`FoldedRange.steps`); false leaves it empty. @defaultValue true */
  readonly keepSteps?: boolean;
}

/** The default distance between two checkpoints, in events. */
export const SNAPSHOT_EVERY = 512;

/** What {@link foldRange} found. */
export interface FoldedRange {
  /** The events of the range `[from, to)` (fewer when the log ends first), parsed, sealed content opened. */
  readonly events: readonly LogEvent[];
  /** What each of them did to the fold (its `messageClass`, notifications, …), in the same order. */
  readonly steps: readonly SessionStep[];
  /** The fold's state after the last event of the range (the state before `from` when the range is empty). */
  readonly state: SessionState;
  /** The resume facts (domain/resume-facts.ts) after the same event. */
  readonly facts: ResumeFacts;
  /** The seq the fold started at (0, or one past the snapshot it used). */
  readonly foldedFrom: number;
  /** A snapshot whose claim the log did not confirm was met (it was dropped; the fold started lower). */
  readonly refused: boolean;
  /**
   * The seq of the last fold snapshot the store keeps for the session once this fold is done (-1: none), when the
   * fold knows it without another read: it read to the log's end (or was given every snapshot) and wrote nothing,
   * or appended (the store answers where its snapshots end). Undefined otherwise (a read that ended inside the log
   * among snapshots it did not load, snapshots replaced whole, a store without snapshots).
   */
  readonly lastSnapshot?: number;
}

/** A snapshot that decodes, with its fold state and resume facts (not yet checked against the log). */
export interface UsableSnapshot {
  readonly snapshot: FoldSnapshot;
  readonly state: SessionState;
  readonly facts: ResumeFacts;
}

/** The JSON a snapshot keeps: the fold state's, and the resume facts under `resume`. */
const snapshotJson = (state: SessionState, facts: ResumeFacts): unknown => ({ ...sessionStateToJson(state), resume: facts });

/** The snapshot of the fold's `state` and `facts` after `event` (its seq, id and hash): what a fold takes at a checkpoint. */
export const checkpointSnapshot = (event: { readonly seq: number; readonly id: string; readonly hash?: string | undefined }, state: SessionState, facts: ResumeFacts): FoldSnapshot => ({
  seq: event.seq,
  id: event.id,
  ...(event.hash !== undefined ? { hash: event.hash } : {}),
  version: SESSION_FOLD_VERSION,
  state: snapshotJson(state, facts),
});

/**
 * The greatest usable snapshot below `from` (every snapshot when `from` is omitted): same fold version, a state and
 * resume facts that decode. Its claim is not checked here: a fold from it checks the event at its seq.
 */
export const usableBelow = (snapshots: readonly FoldSnapshot[], from = Number.POSITIVE_INFINITY): UsableSnapshot | undefined => {
  for (let i = snapshots.length - 1; i >= 0; i--) {
    const s = snapshots[i]!;
    if (s.seq >= from || s.version !== SESSION_FOLD_VERSION) continue;
    const state = sessionStateFromJson(s.state);
    const facts = resumeFactsFromJson((s.state as { resume?: unknown } | null)?.resume);
    if (state !== undefined && facts !== undefined && state.nextSeq === s.seq + 1) return { snapshot: s, state, facts };
  }
  return undefined;
};

/**
 * The events `[from, to)` of a session with what each did to the session fold, reading the store from the nearest
 * snapshot below `from` (checked: the event at its seq must carry its id and hash, else it is refused and the fold
 * starts from seq 0, and the store's snapshots of the stream are written again from this fold). Sealed content is
 * opened with `keys`. The snapshots the fold took are written when the store lacks them: appended
 * (`appendFoldSnapshots`) when they all lie past the stream's last one and none was refused, else with the stream's
 * others, replaced whole. Snapshots are written only for a log without sealed content (a fold state holds pending
 * messages, which would be stored in the clear). Throws `session-corrupt` when an event does not parse or fold.
 */
export const foldRange = async (
  store: EventStore,
  sessionId: string,
  range: { readonly from: number; readonly to: number },
  keys: KeyStore | null = null,
  options: SnapshotOptions = {},
): Promise<FoldedRange> => {
  const every = options.every ?? SNAPSHOT_EVERY;
  const source = isFoldSnapshotSource(store) ? store : undefined;
  // only the snapshots this fold needs: the last below `from` and the ones it passes (all of them only when that
  // last one is not usable, to start from the next usable one below, or when they must be written again)
  let kept: Kept = { snapshots: source === undefined ? [] : await source.loadFoldSnapshotsNear(sessionId, range), all: source === undefined };
  let start = usableBelow(kept.snapshots, range.from);
  if (start === undefined && source !== undefined && kept.snapshots.some((s) => s.seq < range.from)) {
    kept = { snapshots: await source.loadFoldSnapshots(sessionId), all: true };
    start = usableBelow(kept.snapshots, range.from);
  }
  const keepSteps = options.keepSteps ?? true;
  const attempt = await foldFrom(store, sessionId, range, keys, every, start, keepSteps, kept.snapshots);
  if (attempt !== 'refused') return finish(store, sessionId, range, kept, attempt, false);
  // the snapshot lied about its event: drop every snapshot of the stream and fold from the start
  const again = await foldFrom(store, sessionId, range, keys, every, undefined, keepSteps, kept.snapshots);
  if (again === 'refused') throw new Error('unreachable: a fold from seq 0 checks no claim');
  return finish(store, sessionId, range, { snapshots: [], all: true }, again, true);
};

/** The snapshots a fold was given: every one of the stream (`all`), or only those near its range. */
interface Kept {
  readonly snapshots: readonly FoldSnapshot[];
  readonly all: boolean;
}

interface Attempt {
  readonly events: LogEvent[];
  readonly steps: SessionStep[];
  readonly state: SessionState;
  readonly facts: ResumeFacts;
  readonly foldedFrom: number;
  readonly taken: FoldSnapshot[];
  readonly sealed: boolean;
  /** Seqs of kept snapshots the fold passed whose claim the event there does not confirm (dropped when written). */
  readonly liars: ReadonlySet<number>;
  /** The seq after the last event read (below `range.to` when the log ended first). */
  readonly end: number;
}

const finish = async (store: EventStore, sessionId: string, range: { readonly to: number }, kept: Kept, attempt: Attempt, refused: boolean): Promise<FoldedRange> => {
  const usable = (s: FoldSnapshot): boolean => s.version === SESSION_FOLD_VERSION && !attempt.liars.has(s.seq);
  const known = new Map<number, FoldSnapshot>();
  for (const s of kept.snapshots) if (usable(s)) known.set(s.seq, s);
  // written only when the fold took a snapshot the store lacks (or refused one): a read among known ones writes
  // nothing. Every snapshot the fold took or passed is among the kept ones (the near ones hold the fold's range).
  const fresh = attempt.taken.filter((s) => known.get(s.seq)?.id !== s.id);
  // only snapshots past the last one of the stream (the kept ones are all of them, or the fold read to the log's end
  // and passed every one above `from`), none refused: they are appended, the others are neither read nor written
  const lastKept = kept.snapshots.reduce((max, s) => Math.max(max, s.seq), -1);
  const toEnd = kept.all || attempt.end < range.to;
  const onlyPast = !refused && known.size === kept.snapshots.length && toEnd && fresh.every((s) => s.seq > lastKept);
  // where the store's snapshots end after this fold, when known without reading them again
  let lastSnapshot: number | undefined;
  if (fresh.length > 0 && onlyPast && !attempt.sealed && isFoldSnapshotSource(store) && store.appendFoldSnapshots !== undefined) {
    const answer: unknown = await store.appendFoldSnapshots(sessionId, fresh);
    // a store written before the answer was asked for resolves to nothing: unknown then
    lastSnapshot = typeof answer === 'number' ? answer : undefined;
  } else if ((fresh.length > 0 || refused || known.size < kept.snapshots.length) && !attempt.sealed && isFoldSnapshotSource(store)) {
    const bySeq = new Map<number, FoldSnapshot>();
    // the near ones are a part of the stream's snapshots: the others are read now, to be written back with them
    for (const s of kept.all ? kept.snapshots : await store.loadFoldSnapshots(sessionId)) if (usable(s)) bySeq.set(s.seq, s);
    for (const s of attempt.taken) bySeq.set(s.seq, s);
    await store.saveFoldSnapshots(sessionId, [...bySeq.values()].sort((a, b) => a.seq - b.seq));
  } else if (toEnd && isFoldSnapshotSource(store)) {
    // nothing written (none taken past the kept ones, or sealed content): the kept ones reach the stream's last
    lastSnapshot = lastKept;
  }
  return { events: attempt.events, steps: attempt.steps, state: attempt.state, facts: attempt.facts, foldedFrom: attempt.foldedFrom, refused, ...(lastSnapshot !== undefined ? { lastSnapshot } : {}) };
};

const corrupt = (sessionId: string, cause: Error): RuntimeError => new RuntimeError('session-corrupt', `session ${sessionId}: ${cause.message}`, { cause });

/** One fold from `start` (or seq 0) to `range.to`; 'refused' when the event at the snapshot's seq is not the one it claims. */
const foldFrom = async (
  store: EventStore,
  sessionId: string,
  range: { readonly from: number; readonly to: number },
  keys: KeyStore | null,
  every: number,
  start: UsableSnapshot | undefined,
  keepSteps: boolean,
  kept: readonly FoldSnapshot[],
): Promise<Attempt | 'refused'> => {
  // every kept snapshot the fold passes is checked against the event at its seq (a liar is dropped, not only one used)
  const claims = new Map<number, FoldSnapshot>();
  for (const s of kept) claims.set(s.seq, s);
  const liars = new Set<number>();
  const keyring = createKeyring(keys);
  const firstRead = start === undefined ? 0 : start.snapshot.seq;
  let state = start === undefined ? initialSessionState() : start.state;
  let facts = start === undefined ? initialResumeFacts : start.facts;
  const events: LogEvent[] = [];
  const steps: SessionStep[] = [];
  const taken: FoldSnapshot[] = [];
  let sealed = false;
  let seq = firstRead;
  const want = range.to - firstRead;
  if (want > 0) {
    for await (const page of readStreamPages(store, sessionId, { from: BigInt(firstRead), maxCount: want })) {
      for (const r of page) {
        if (start !== undefined && seq === firstRead) {
          // the claim: the event the snapshot was taken after
          if (r.id !== start.snapshot.id || r.hash !== start.snapshot.hash) return 'refused';
          seq++;
          continue;
        }
        const claim = claims.get(seq);
        if (claim !== undefined && (claim.id !== r.id || claim.hash !== r.hash)) liars.add(seq);
        const raw = envelopeOfRecorded(r);
        const openedNow = openEnvelopeNow(raw, keyring);
        const opened = openedNow instanceof Promise ? await openedNow : openedNow;
        if (opened !== raw) sealed = true;
        // the store's recorded data is deep-frozen: used as is, checked without a copy (zod only for a refusal)
        const parsed = parseEvent(opened, { expectedSeq: seq, shared: true });
        if (E.isLeft(parsed)) throw corrupt(sessionId, parsed.left);
        const step = stepSession(state, parsed.right);
        if (E.isLeft(step)) throw corrupt(sessionId, Object.assign(step.left, { seq }));
        state = step.right.state;
        facts = stepResumeFacts(facts, parsed.right);
        if (seq >= range.from) {
          events.push(parsed.right);
          if (keepSteps) steps.push(step.right);
        }
        if ((seq + 1) % every === 0) taken.push(checkpointSnapshot({ seq, id: r.id, hash: r.hash }, state, facts));
        seq++;
      }
    }
    // a snapshot past the end of the log (a shortened or replaced stream) confirms nothing
    if (start !== undefined && seq === firstRead) return 'refused';
  }
  return { events, steps, state, facts, foldedFrom: start === undefined ? 0 : firstRead + 1, taken, sealed, liars, end: seq };
};
