import type { AuditReport } from '../domain/audit.js';
import type { SessionAudit } from './session-audit.js';

/** The long lists of a {@link SessionAudit} a console may read a page at a time. */
export const AUDIT_LISTS = ['messages', 'inputs', 'actions'] as const;

/** One of {@link AUDIT_LISTS}: `messages` (the report's classified messages), `inputs`, `actions`. */
export type AuditList = (typeof AUDIT_LISTS)[number];

/** Whether `x` names one of {@link AUDIT_LISTS}. */
export const isAuditList = (x: unknown): x is AuditList => (AUDIT_LISTS as readonly unknown[]).includes(x);

/**
 * A {@link SessionAudit} without its long lists (the report's turns and messages, the inputs, the actions), with how
 * many rows each holds: what a console needs to open a long session, the rows coming a page at a time.
 */
export interface SessionAuditHead extends Omit<SessionAudit, 'report' | 'inputs' | 'actions' | 'audit'> {
  readonly report: Omit<AuditReport, 'turns' | 'messages'>;
  readonly counts: { readonly turns: number; readonly messages: number; readonly inputs: number; readonly actions: number };
}

/** `a` without its long lists ({@link SessionAuditHead}). */
export const auditHead = (a: SessionAudit): SessionAuditHead => {
  const { report, inputs, actions, audit: _whole, ...rest } = a;
  const { turns, messages, ...reportRest } = report;
  return { ...rest, report: reportRest, counts: { turns: turns.length, messages: messages.length, inputs: inputs.length, actions: actions.length } };
};

/** A page of one of an audit's long lists: rows `from` on, of `total`, at seq `at`. */
export interface AuditRowsPage<L extends AuditList = AuditList> {
  readonly sessionId: string;
  readonly at: number;
  readonly list: L;
  readonly total: number;
  readonly from: number;
  readonly rows: L extends 'messages' ? AuditReport['messages'] : L extends 'inputs' ? SessionAudit['inputs'] : SessionAudit['actions'];
}

/** Rows `from` to `to` (exclusive, clamped) of list `list` of `a`. */
export const auditRows = <L extends AuditList>(a: SessionAudit, list: L, from: number, to: number): AuditRowsPage<L> => {
  const all: readonly unknown[] = list === 'messages' ? a.report.messages : list === 'inputs' ? a.inputs : a.actions;
  const lo = Math.max(0, Math.min(all.length, Math.floor(from)));
  const hi = Math.max(lo, Math.min(all.length, Math.floor(to)));
  return { sessionId: a.sessionId, at: a.at, list, total: all.length, from: lo, rows: all.slice(lo, hi) as unknown as AuditRowsPage<L>['rows'] };
};
