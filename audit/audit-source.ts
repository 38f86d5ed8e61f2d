import type { DshErrorCode, DshLogError } from '../formats/dsh/dsh-errors.js';
import type { DshSummary } from '../formats/dsh/dsh-source.js';

/** Where a log that is not steerlog's own came from, as the audit reports it (the audit's extras and the harness reader share it). */

/** A reader's refusal as the audit reports it: `seq` is the report's seq (harness seq + 1) when the line had one. */
export interface SourceError {
  readonly seq: number | null;
  readonly code: DshErrorCode;
  readonly message: string;
}

/** What `audit` says about where a log came from, when it is not steerlog's own: the harness summary and its refusal. */
export type AuditSource = DshSummary & { readonly error: SourceError | null };

/** The reader's refusal, in the audit's terms. */
export const sourceErrorOf = (e: DshLogError): SourceError => ({ seq: e.seq === null ? null : e.seq + 1, code: e.code, message: `harness log: ${e.message}` });
