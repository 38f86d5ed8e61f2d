import { createAuditor, type AuditReport } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { messageFates, type MessageFate } from '../../domain/message-fate.js';

/** One row of the console's input list: a message id, its source kind, a preview and the last thing that happened to it. */
export interface AuditInput {
  readonly id: string;
  readonly source: string;
  readonly preview: string;
  readonly last: MessageFate['entries'][number]['kind'] | null;
}

/** What the console's audit view shows of a session folded up to one seq. */
export interface SessionAudit {
  readonly sessionId: string;
  /** seq of the log's last event. */
  readonly lastSeq: number;
  /** The seq the log was folded up to (inclusive). */
  readonly at: number;
  /** The audit report of the events up to `at`: the same derivation as `steerlog audit --json`. */
  readonly report: AuditReport;
  /** Both pending lists at `at`, with previews. */
  readonly pending: { readonly nextTurn: readonly AuditInput[]; readonly nextStep: readonly AuditInput[] };
  /** Every message id the log mentions up to `at`, in order of first appearance. */
  readonly inputs: readonly AuditInput[];
  /** When asked for one id: everything that happened to it up to `at`. */
  readonly message?: MessageFate | null;
}

/** Options of {@link auditSession}. */
export interface AuditSessionOptions {
  /** Fold up to and including this seq. @defaultValue the last event */
  readonly at?: number;
  /** Also answer "what happened to this input?" for this message id. @defaultValue none */
  readonly messageId?: string;
}

/**
 * Folds a session's log up to a seq for the console: the audit report through the same auditor the CLI's `audit`
 * runs (each event as its JSONL envelope), plus the per-message fates of the session fold.
 */
export const auditSession = (sessionId: string, events: readonly LogEvent[], options: AuditSessionOptions = {}): SessionAudit => {
  const lastSeq = events.length - 1;
  const at = Math.max(-1, Math.min(lastSeq, options.at ?? lastSeq));
  const prefix = events.slice(0, at + 1);
  const auditor = createAuditor(sessionId);
  for (const e of prefix) {
    auditor.push(JSON.stringify({ seq: e.seq, id: e.id, time: e.time, type: e.type, data: e.data, ...(e.ignorable ? { ignorable: true } : {}) }));
  }
  const report = auditor.report();
  const { fates } = messageFates(prefix.slice(0, report.events));
  const input = (f: MessageFate): AuditInput => ({ id: f.id, source: f.source, preview: f.preview, last: f.entries.at(-1)?.kind ?? null });
  const byId = (id: string): AuditInput => {
    const f = fates.get(id);
    return f ? input(f) : { id, source: 'unknown', preview: '', last: null };
  };
  return {
    sessionId,
    lastSeq,
    at,
    report,
    pending: { nextTurn: report.inbox.nextTurn.map(byId), nextStep: report.inbox.nextStep.map(byId) },
    inputs: [...fates.values()].map(input),
    ...(options.messageId !== undefined ? { message: fates.get(options.messageId) ?? null } : {}),
  };
};
