/** Reading the harness's own session logs (plain JSONL or zstd frames) as steerlog sessions. */
export { openDshLog, type DshLog, type DshLogOptions, type DshSummary } from './dsh-source.js';
export { DshLogError, isDshLogError, DSH_ERROR_CODES, type DshErrorCode, type DshWhere } from './dsh-errors.js';
export { DSH_EVENT_MAP, DSH_IGNORED_TYPES } from './dsh-map.js';
export type { TornTail } from './zstd-frames.js';
export type { DshBoundary } from './dsh-boundary.js';
export type { DshAnswer, DshRoute, DshStep } from './dsh-steps.js';
