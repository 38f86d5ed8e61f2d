import { pipe, type OperatorFunction } from 'rxjs';
import type { ConsumedWork } from '../../domain/consumed-work.js';
import { isKnownEvent, type InboxNotification, type LogEvent } from '../../domain/events.js';
import type { MessageClass } from '../../domain/history-classification.js';
import type { UserMessage } from '../../domain/message.js';
import type { TurnRecord } from '../../domain/turns.js';
import { fromFrames, sessionSteps, type SessionFrame } from './session-steps.js';

// ---- history classification ------------------------------------------------------------------------------------
/** A durable user/message and the class history shows it with (docs/protocol.md §6). */
export interface ClassifiedMessage {
  readonly seq: number;
  readonly message: UserMessage;
  readonly class: MessageClass;
}

/** Frames → each user/message's class, as the fold decides it. */
export const classificationFrames = (): OperatorFunction<SessionFrame, ClassifiedMessage> =>
  fromFrames<ClassifiedMessage>(() => (frame, emit) => {
    const { event } = frame;
    if (frame.step.messageClass !== undefined && isKnownEvent(event) && event.type === 'user/message') {
      emit({ seq: event.seq, message: event.data, class: frame.step.messageClass });
    }
  });

/** Session events → each user/message's class as it is decided. */
export const historyClassification = (): OperatorFunction<LogEvent, ClassifiedMessage> => pipe(sessionSteps(), classificationFrames());

// ---- consumed work ---------------------------------------------------------------------------------------------
/** The consumed-work summary (docs/protocol.md §5) as of `seq`. */
export interface ConsumedWorkUpdate extends ConsumedWork {
  readonly seq: number;
}

/** Frames → the consumed-work summary each time it changes (a new accounting turn/end, or a drop of unrun work). */
export const consumedWorkFrames = (): OperatorFunction<SessionFrame, ConsumedWorkUpdate> =>
  fromFrames<ConsumedWorkUpdate>(() => (frame, emit) => {
    const before = frame.before.consumed;
    const after = frame.step.state.consumed;
    if (before.end === after.end && before.droppedUnrun === after.droppedUnrun) return;
    emit({ seq: frame.event.seq, ...(after.end ? { end: after.end } : {}), droppedUnrun: after.droppedUnrun });
  });

/** Session events → the consumed-work summary each time it changes. */
export const consumedWork = (): OperatorFunction<LogEvent, ConsumedWorkUpdate> => pipe(sessionSteps(), consumedWorkFrames());

// ---- turn timeline ---------------------------------------------------------------------------------------------
/** One entry of the turn timeline: a turn started, a step started, or a turn ended (with the claimed ids). */
export type TurnTimelineEntry =
  | { readonly kind: 'turn-started'; readonly seq: number; readonly turn: number }
  | { readonly kind: 'step-started'; readonly seq: number; readonly turn: number; readonly step: number }
  | { readonly kind: 'turn-ended'; readonly seq: number; readonly record: TurnRecord & { readonly claimed: readonly string[] } };

/** Frames → turn starts, step starts and turn ends (with the ids each turn claimed), in log order. */
export const turnTimelineFrames = (): OperatorFunction<SessionFrame, TurnTimelineEntry> =>
  fromFrames<TurnTimelineEntry>(() => (frame, emit) => {
    const { event } = frame;
    const turns = frame.step.state.turns;
    if (event.type === 'turn/start' && turns.openTurn) emit({ kind: 'turn-started', seq: event.seq, turn: turns.openTurn.turn });
    else if (event.type === 'step/start' && turns.openTurn && turns.openStep !== null) {
      emit({ kind: 'step-started', seq: event.seq, turn: turns.openTurn.turn, step: turns.openStep });
    } else if (frame.step.closedTurn) emit({ kind: 'turn-ended', seq: event.seq, record: frame.step.closedTurn });
  });

/** Session events → the turn timeline. */
export const turnTimeline = (): OperatorFunction<LogEvent, TurnTimelineEntry> => pipe(sessionSteps(), turnTimelineFrames());

// ---- notifications ---------------------------------------------------------------------------------------------
/** Frames → the live notifications the log implies (inserted / claimed / discarded), in commit order. */
export const notificationFrames = (): OperatorFunction<SessionFrame, InboxNotification> =>
  fromFrames<InboxNotification>(() => (frame, emit) => {
    for (const n of frame.step.notifications) emit(n);
  });

/** Session events → the derived notification stream (equal to what the live Inbox emitted). */
export const notifications = (): OperatorFunction<LogEvent, InboxNotification> => pipe(sessionSteps(), notificationFrames());
