import { pipe, type OperatorFunction } from 'rxjs';
import { isKnownEvent, type InboxSplicedData, type LogEvent } from '../../domain/events.js';
import { appendOne, emptyAppendList, type AppendList } from '../../domain/append-list.js';
import type { UserMessage } from '../../domain/message.js';
import { emptyPersistentSet, persistentSetAdd, persistentSetHas, type PersistentSet } from '../../domain/persistent-set.js';
import { queueView as domainQueueView, type QueueItem } from '../../domain/queue-view.js';
import type { SessionState } from '../../domain/session-fold.js';
import { fromFrames, sessionSteps, type SessionFrame } from './session-steps.js';

/**
 * One row of the queue snapshot. A row with `claimed: true` is a steering item that a claim already took from
 * next-step but whose durable `user/message` is not in the log yet (placement stays `'steering'`).
 */
export interface QueueViewItem extends QueueItem {
  readonly claimed?: true;
}

/**
 * The complete queue snapshot after `seq` (last wins). `items` is built when first read (then kept), so folding a
 * log through `queueView()` costs O(1) per event however long the queue is; reading every snapshot costs what the
 * rows cost.
 */
export interface QueueSnapshot {
  readonly seq: number;
  readonly items: readonly QueueViewItem[];
}

/** Options of the `queueView()` operator. */
export interface QueueViewOptions {
  /**
   * Keep a claimed steering item visible (`claimed: true`) until its `user/message` is in the log, or its turn
   * ends without one, so a UI hands the bubble over without a gap (a queue that drops the row at claim shows the
   * message nowhere until its user/message). `false` gives the plain frames (domain `queueView` after every splice).
   * @defaultValue true
   */
  readonly gaplessHandoff?: boolean;
  /**
   * The session fold's state before the first event the operator sees (a log followed from the middle: an agent
   * resumed from a fold snapshot), with no turn open. @defaultValue the state before seq 0
   */
  readonly from?: SessionState;
}

/** The pending rows with the claimed steering rows awaiting their user/message put between next-turn and next-step. */
const rowsOf = (pending: readonly QueueItem[], handoff: readonly UserMessage[]): readonly QueueViewItem[] => {
  if (handoff.length === 0) return pending;
  const firstStep = pending.findIndex((item) => item.placement !== 'queued');
  const cut = firstStep < 0 ? pending.length : firstStep;
  return [
    ...pending.slice(0, cut),
    ...handoff.map((message): QueueViewItem => ({ id: message.id, placement: 'steering', message, claimed: true })),
    ...pending.slice(cut),
  ];
};

const isClaim = (splice: InboxSplicedData): boolean => splice.removedCount !== undefined && splice.outcome !== 'canceled';

/**
 * Frames → the complete queue snapshot: one snapshot after every splice (a claim that touches both lists gives two),
 * plus, with the gapless handoff, one when a claimed steering row retires — at its `user/message`, or at the
 * `turn/end` of a turn that never wrote it.
 *
 * Rows: next-turn items (`queued`), then claimed steering rows awaiting their `user/message` (`steering`,
 * `claimed: true`, in claim order — they were at the head of next-step), then next-step items (`steering` for a
 * user source, else `context`). The pending part is exactly the domain's `queueView` of the folded inbox.
 */
export const queueFrames = (options: QueueViewOptions = {}): OperatorFunction<SessionFrame, QueueSnapshot> =>
  fromFrames<QueueSnapshot>(() => {
    const gapless = options.gaplessHandoff ?? true;
    // The claimed steering rows awaiting their user/message: every row claimed since the handoff was last cleared,
    // in claim order (append-only), less those retired (by position), so that claiming, retiring and capturing the
    // rows for a snapshot cost O(1) per row however many are waiting (a copy per retirement would be quadratic in
    // the size of a step's claim).
    let claimedRows = emptyAppendList<UserMessage>();
    let retired = emptyPersistentSet();
    let waiting = 0;
    /** The position in `claimedRows` of each row still waiting, by id. */
    const positionOf = new Map<string, number>();
    const retire = (id: string): boolean => {
      const at = positionOf.get(id);
      if (at === undefined) return false;
      positionOf.delete(id);
      retired = persistentSetAdd(retired, String(at));
      waiting--;
      return true;
    };
    // A snapshot is lazy: its rows are built when first read, from the persistent inbox and handoff it captured, so
    // a consumer that keeps only the latest snapshot (last wins) pays O(1) per splice instead of O(pending).
    const snapshot = (seq: number, frame: SessionFrame): QueueSnapshot => {
      const inbox = frame.step.state.inbox;
      const rows = claimedRows;
      const gone = retired;
      const none = waiting === 0;
      let items: readonly QueueViewItem[] | null = null;
      return {
        seq,
        get items(): readonly QueueViewItem[] {
          return (items ??= rowsOf(domainQueueView(inbox), none ? [] : waitingRows(rows, gone)));
        },
      };
    };
    return (frame, emit) => {
      const { event } = frame;
      if (!isKnownEvent(event)) return; // an ignorable event of an unknown type changes no list
      switch (event.type) {
        case 'agent/inbox/spliced': {
          const splice = event.data;
          if (gapless) {
            if (waiting > 0) for (const m of splice.inserted) retire(m.id);
            if (splice.target === 'next-step' && isClaim(splice)) {
              for (const n of frame.step.notifications) {
                if (n.type !== 'agent/inbox/claimed' || n.message.source.kind !== 'user') continue;
                positionOf.set(n.message.id, claimedRows.length);
                claimedRows = appendOne(claimedRows, n.message);
                waiting++;
              }
            }
          }
          emit(snapshot(event.seq, frame));
          return;
        }
        case 'user/message': {
          if (waiting === 0 || !retire(event.data.id)) return;
          emit(snapshot(event.seq, frame));
          return;
        }
        case 'turn/end':
        case 'session/end-seed':
          if (waiting === 0) return;
          claimedRows = emptyAppendList();
          retired = emptyPersistentSet();
          waiting = 0;
          positionOf.clear();
          emit(snapshot(event.seq, frame));
          return;
        default:
          return;
      }
    };
  });

/** The rows of `rows` not retired, in claim order. */
const waitingRows = (rows: AppendList<UserMessage>, retired: PersistentSet): readonly UserMessage[] => {
  const out: UserMessage[] = [];
  const items = rows.shared;
  for (let i = 0; i < rows.length; i++) if (!persistentSetHas(retired, String(i))) out.push(items[i]!);
  return out;
};

/** Session events → the complete queue snapshot after every splice (last wins), with the gapless steering handoff. */
export const queueView = (options: QueueViewOptions = {}): OperatorFunction<LogEvent, QueueSnapshot> =>
  pipe(sessionSteps(options.from), queueFrames(options));
