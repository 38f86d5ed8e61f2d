import * as E from 'fp-ts/lib/Either.js';
import { parseEvent } from '../domain/parse-event.js';
import { createSpanDeriver, type SpanDeriverOptions } from '../projections/telemetry/derive-spans.js';
import { otlpTraceRequest, type OtlpTraceRequest } from '../projections/telemetry/otlp-json.js';
import { traceIdOf } from '../projections/telemetry/span-ids.js';
import type { DerivedSpan } from '../projections/telemetry/span-types.js';

/**
 * `steerlog trace`: a stored session (or any session log) as an OpenTelemetry trace. The spans are the pure
 * derivation of projections/telemetry (the same one the live runtime exports), encoded as an OTLP/JSON
 * `ExportTraceServiceRequest`; where it goes (stdout, an OTLP/HTTP endpoint) is the caller's.
 */

/** A log `trace` cannot derive spans from: an event that does not parse, or one the session fold refuses. */
export class TraceLogInvalidError extends Error {
  readonly code = 'trace-log-invalid' as const;
  constructor(
    /** The seq of the refused event (its position when its own seq is unusable). */
    readonly seq: number,
    reason: string,
  ) {
    super(`the log is invalid at seq ${seq}: ${reason}`);
    this.name = 'TraceLogInvalidError';
  }
}
/** Is this a {@link TraceLogInvalidError}? (by its stable `code`) */
export const isTraceLogInvalidError = (e: unknown): e is TraceLogInvalidError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'trace-log-invalid';

/** Options of {@link traceSession}. */
export interface TraceSessionOptions {
  /**
   * The redaction hook for content (message text, tool arguments and results); sealed or erased content never reaches
   * it. @defaultValue none: no content is exported
   */
  readonly content?: SpanDeriverOptions['content'];
  /** Also export the spans still open at the end of the log (marked `steerlog.span.open`). @defaultValue true */
  readonly includeOpen?: boolean;
  /** The version the OTLP scope names (steerlog's). @defaultValue none */
  readonly scopeVersion?: string;
}

/** What {@link traceSession} derived. */
export interface TraceSessionResult {
  /** The session id (null for a log without `session/created`). */
  readonly sessionId: string | null;
  /** The trace id every span carries. */
  readonly traceId: string;
  readonly spans: readonly DerivedSpan[];
  /** The spans as an OTLP/JSON `ExportTraceServiceRequest`. */
  readonly request: OtlpTraceRequest;
}

/**
 * Derives the trace of one session from its envelopes (untrusted JSON values, seq 0 first). Throws
 * {@link TraceLogInvalidError} at the first event that does not parse or that the session fold refuses: a trace is
 * never exported from a log that is not valid up to its end.
 */
export const traceSession = async (envelopes: AsyncIterable<unknown> | Iterable<unknown>, options: TraceSessionOptions = {}): Promise<TraceSessionResult> => {
  const deriver = createSpanDeriver(options.content !== undefined ? { content: options.content } : {});
  const spans: DerivedSpan[] = [];
  let seq = 0;
  for await (const raw of envelopes) {
    const parsed = parseEvent(raw, { expectedSeq: seq });
    if (E.isLeft(parsed)) throw new TraceLogInvalidError(seq, parsed.left.message);
    const pushed = deriver.push(parsed.right);
    if (E.isLeft(pushed)) throw new TraceLogInvalidError(seq, pushed.left.message);
    for (const s of pushed.right) spans.push(s);
    seq++;
  }
  if (options.includeOpen ?? true) for (const s of deriver.openSpans()) spans.push(s);
  const sessionId = deriver.sessionId();
  const request = otlpTraceRequest(spans, {
    ...(options.scopeVersion !== undefined ? { scopeVersion: options.scopeVersion } : {}),
    ...(sessionId !== null ? { resource: { 'steerlog.session.id': sessionId } } : {}),
  });
  return { sessionId, traceId: traceIdOf(sessionId ?? ''), spans, request };
};
