import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../../domain/events.js';
import { createSpanDeriver, type SpanDeriver } from '../../projections/telemetry/derive-spans.js';
import { createOperationSpanSources, type OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import type { ContentRedaction, DerivedSpan } from '../../projections/telemetry/span-types.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

/**
 * Following live sessions' logs into spans: each session folded by its own span derivation (the light, trusted fold:
 * the runtime's own events, validated as they were appended), each completed span handed to `emit`, each store
 * operation made a `db.*` span — a plain append's left unbuilt, a `StoreAppendSpan` the export queue converts or the
 * protobuf encoding writes straight from the operation. The same follower runs on the runtime's thread or on the
 * export worker, so both derive the same spans from the same events.
 * @internal
 */
export interface SpanFollower {
  /** A session went live with this history: folded, not emitted. */
  follow(sessionId: string, history: readonly LogEvent[]): void;
  /** One event appended to a live session's log, in order: the spans it completes are emitted. */
  observe(sessionId: string, event: LogEvent): void;
  /** The session is no longer followed: the spans it leaves open are emitted (closed at its last event, marked open). */
  forget(sessionId: string): void;
  /** A store operation: emitted as a `db.*` span. */
  storeOperation(op: StoreOperation): void;
  /** Forgets every session still followed (their open spans emitted). */
  forgetAll(): void;
}

/** Creates a {@link SpanFollower} that hands each span to `emit`; `content` is the redaction hook, if any. */
export const createSpanFollower = (emit: (span: OperationSpanSource) => void, content?: ContentRedaction): SpanFollower => {
  const derivers = new Map<string, SpanDeriver | null>();
  const deriverOf = (sessionId: string): SpanDeriver => createSpanDeriver({ sessionId, validate: false, ...(content !== undefined ? { content } : {}) });
  const push = (sessionId: string, event: LogEvent, exporting: boolean): void => {
    let d = derivers.get(sessionId);
    if (d === undefined) {
      // a session first seen mid-log cannot be folded (the fold starts at seq 0)
      d = event.seq === 0 ? deriverOf(sessionId) : null;
      derivers.set(sessionId, d);
    }
    if (d === null) return;
    const r = d.push(event);
    if (E.isLeft(r)) {
      derivers.set(sessionId, null);
      return;
    }
    if (exporting) for (const s of r.right) emit(s);
  };
  const operationSpan = createOperationSpanSources();
  const forget = (sessionId: string): void => {
    const d = derivers.get(sessionId);
    derivers.delete(sessionId);
    if (d) for (const s of d.openSpans()) emit(s);
  };
  return {
    follow: (sessionId, history) => {
      derivers.delete(sessionId);
      for (const e of history) push(sessionId, e, false);
    },
    observe: (sessionId, event) => push(sessionId, event, true),
    forget,
    storeOperation: (op) => emit(operationSpan(op)),
    forgetAll: () => {
      for (const id of [...derivers.keys()]) forget(id);
    },
  };
};
