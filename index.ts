/**
 * steerlog's public API. The PostgreSQL and EventStoreDB stores (and the PostgreSQL checkpoint store) are subpaths
 * (`steerlog/postgres`, `steerlog/eventstoredb`), so that importing steerlog never loads their drivers (optional
 * peer dependencies); `openStore` loads them on demand. test/package/module-graph.test.ts checks it.
 */
export * from './domain/index.js';
export * from './runtime/ports/event-store.js';
export * from './runtime/ports/store-errors.js';
export * from './runtime/ports/stream-deletion.js';
export * from './runtime/ports/paged-reads.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './adapters/store/memory/memory-event-store.js';
export * from './runtime/ports/model.js';
export * from './runtime/ports/clock.js';
export * from './runtime/ports/head-signer.js';
export * from './runtime/ports/key-store.js';
export { ContentSealer, stripSealed, type EncryptionOptions, type SealerSeed } from './runtime/content-sealer.js';
export { eraseKeys, type EraseOptions, type EraseResult, type ErasedSession } from './runtime/erase.js';
export { loadSession, type LoadedSession } from './runtime/load-session.js';
export { createKeyring, openEnvelope, openEnvelopes, type Keyring, type KeyState } from './runtime/content-opener.js';
export { MemoryKeyStore, type KeyRecord } from './adapters/keys/memory-key-store.js';
export { FileKeyStore, type FileKeyStoreOptions } from './adapters/keys/file-key-store.js';
export { openKeyStore, defaultKeyStoreSpec, type KeyStoreSpec } from './adapters/keys/open-key-store.js';
export * from './runtime/ports/recorded-envelope.js';
export { canonicalJson, sha256ChainHash } from './runtime/chain-hash.js';
export * from './runtime/errors.js';
export * from './runtime/logger.js';
export {
  enter,
  reject,
  retry,
  type AgentHooks,
  type HookName,
  type PreStepListener,
  type TurnStoppingListener,
  type RequestErrorContext,
  type RequestErrorListener,
  type RetryDecision,
} from './runtime/hooks.js';
export { retryPolicy, isRetryableFailure, abortableSleep, RETRYABLE_CODES, type RetryPolicy, type RetryPolicyOptions } from './runtime/retry-policy.js';
export type { Tool, ToolContext, ToolOutcome } from './runtime/tools.js';
export type { LateToolResults } from './runtime/tool-runner.js';
export { ToolResultCode, type ToolErrorFacts } from './runtime/tool-outcomes.js';
export { Agent, type AgentOptions } from './runtime/agent.js';
export type { AgentInbox, InputOptions, WakeOptions, DurableReceipt, QueueEdits, QueueEditRefusal } from './runtime/agent-types.js';
export { eventSizeBytes, assertValidStreamId, MAX_STREAM_ID_BYTES, DEFAULT_MAX_EVENT_BYTES } from './runtime/ports/store-validation.js';
export { SessionLog } from './runtime/session-log.js';
export type { SessionLogOptions, AppendOptions } from './runtime/session-log-types.js';
export { createRuntime, type Runtime, type RuntimeOptions, type CreateSessionOptions, type ChildRunClosing } from './runtime/runtime.js';
export type { FoldSnapshotOptions } from './runtime/live-snapshots.js';
export { LoopSlices, type LoopGate, type LoopSlicesOptions } from './runtime/loop-slices.js';
export { ScriptedModel, echoModel, type ScriptStep, type ScriptedResponse, type ScriptedChunk } from './adapters/model/scripted/scripted-model.js';
export { openRuntime, type OpenRuntimeOptions, type OpenedRuntime } from './adapters/open-runtime.js';
export {
  openStore,
  DEFAULT_STORE_SPEC,
  InvalidStoreSpecError,
  isInvalidStoreSpecError,
  StoreDriverMissingError,
  isStoreDriverMissingError,
  STORE_DRIVER_PACKAGES,
  type StoreSpec,
} from './adapters/store/open-store.js';
export { openJsonlEventStore, JsonlEventStore, type JsonlEventStoreOptions, type JsonlDurability } from './adapters/store/jsonl/index.js';
export { MemoryCheckpointStore } from './adapters/checkpoints/memory-checkpoint-store.js';
export { FileCheckpointStore, type FileCheckpointStoreOptions } from './adapters/checkpoints/file-checkpoint-store.js';
export {
  ed25519Signer,
  ed25519Verifier,
  loadSigner,
  loadVerifier,
  keyIdOf,
  SigningKeyError,
  isSigningKeyError,
  SIGNING_KEY_ENV,
  type HeadVerifier,
} from './formats/chain/ed25519.js';
export { verifySession, createSessionVerifier, type SessionVerification, type VerifyOptions, type SessionVerifier } from './formats/chain/verify-session.js';
export { combineSegments, type VerifiedSegment } from './formats/chain/verification-result.js';
export * from './formats/dsh/index.js';
export * from './runtime/children/index.js';
export {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  ArchiveError,
  isArchiveError,
  type ArchiveErrorCode,
  type ArchivedSession,
  type ArchiveHeader,
} from './formats/archive/archive-format.js';
export { archiveSessions, type ArchiveSessionsOptions, type ArchiveOutput, type ArchivedSessionResult } from './audit/archive-sessions.js';
export { selectEnded, type SessionEnd, type KeptReason } from './audit/archive-selection.js';
export { migrateStore, MigrateError, isMigrateError, type MigrateErrorCode, type MigrateStoreOptions, type MigrateReport } from './audit/migrate-store.js';
export { ArchiveEventStore, openArchiveEventStore } from './adapters/archive/archive-event-store.js';
export { type ArchiveDurability } from './formats/archive/write-archive.js';
// telemetry: the live exporter (the OpenTelemetry SDK is loaded only when it is created), the trace of a stored session
export * from './runtime/ports/telemetry.js';
export { createOtelTelemetry, TelemetryUnavailableError, isTelemetryUnavailableError, type ExportScheduling, type OtelTelemetry, type OtelTelemetryOptions } from './adapters/telemetry/otel-telemetry.js';
export { postOtlpJson, otlpTracesUrl, OtlpExportError, isOtlpExportError, type PostOtlpOptions } from './adapters/telemetry/otlp-http.js';
export type { OtlpProtocol } from './adapters/telemetry/otlp-exporter.js';
export { traceSession, TraceLogInvalidError, isTraceLogInvalidError, type TraceSessionOptions, type TraceSessionResult } from './audit/trace-session.js';
export { diffSessions, turnSummaries, normalizedEvent, type SessionDiff, type TurnComparison, type TurnSummary } from './audit/session-diff.js';
export { stepContext, parseStepRef, StepNotFoundError, isStepNotFoundError, type StepContext, type EnteredInput } from './audit/step-context.js';
export { replayCheck, type ReplayCheckOptions, type ReplayCheckResult } from './adapters/replay/replay-check.js';
export { type ReplayDivergence } from './adapters/replay/event-compare.js';
export { NotReplayableError, isNotReplayableError } from './adapters/replay/recorded-log.js';
export { replaySession, replayBoundary, ReplayPointError, isReplayPointError, type ReplayPoint, type ReplaySessionOptions, type ReplaySessionResult } from './adapters/replay/replay-from.js';
