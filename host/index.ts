/** The Host's rules (`steerlog/host`): the transport-free Host, its wire schemas, errors and the ownership port. */
export * from './schemas.js';
export { Host } from './host.js';
export type { HostOptions, CallContext, CallResult, HostSignal } from './host-types.js';
export { HostError, isHostError } from './errors.js';
export { largestImageBytes, bodyLimitFor, base64Length, PROMPT_ROOM_BYTES, type PromptLimits } from './prompt.js';
export { DEFAULT_DURABLE_TIMEOUT_MS } from './durable-wait.js';
export { MirrorStream, encodeCursor, decodeCursor, type MirrorStreamOptions, type FrameSink, type StreamCursor } from './mirror-stream.js';
export { LiveSession, type Admission } from './live-session.js';
export { localOwnership, type SessionOwnership, type SessionOwner, type AcquireResult } from './ports/ownership.js';
export { canonicalTimeZone } from './time-zone.js';
export { principalActor, promptSource, type Principal } from './actor.js';
