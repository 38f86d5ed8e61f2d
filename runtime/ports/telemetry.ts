import type { LogEvent } from '../../domain/events.js';
import type { StoreOperation } from './store-operations.js';

/**
 * The telemetry port: what the runtime tells a telemetry exporter about its sessions. Telemetry is a projection of
 * the log, so the port gets the log itself — each session's history when it goes live here, then every event as it
 * is appended — and derives and exports what it wants (see docs/observability.md; the OpenTelemetry exporter is
 * `createOtelTelemetry` in steerlog's adapters). Calls are synchronous and contained: a throwing port is logged and
 * never fails an append.
 */
export interface SessionTelemetry {
  /**
   * A session went live in this runtime (created, resumed or forked) with the events its log already holds: folded,
   * not exported again (a past session's trace is `steerlog trace`'s).
   */
  follow(sessionId: string, history: readonly LogEvent[]): void;
  /**
   * One event appended to a live session's log, in order. `dataJson` is `JSON.stringify(event.data)` when the
   * runtime made it already (the string its store writes; absent for sealed content, whose stored form differs): an
   * exporter that serializes events reuses it instead of serializing the data again. @defaultValue dataJson: absent
   */
  observe(sessionId: string, event: LogEvent, dataJson?: string): void;
  /** The session's agent was disposed: it is no longer followed. */
  forget(sessionId: string): void;
  /**
   * A store operation of this runtime (each write-behind append; the store's own fsync batches when it tells of
   * them), for `db.*` spans. @defaultValue none: not told
   */
  storeOperation?(operation: StoreOperation): void;
  /**
   * Does this exporter send message content (text, tool arguments and results)? A runtime that encrypts content
   * refuses such a port: sealed content never leaves in plaintext. @defaultValue false
   */
  readonly capturesContent?: boolean;
}
