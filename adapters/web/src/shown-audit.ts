import type { ActorAction } from '../../../domain/actor-actions.js';
import type { AuditReport } from '../../../domain/audit.js';
import type { AuditInput, SessionAudit } from '../../../host/session-audit.js';
import { auditHead, type SessionAuditHead } from '../../../host/session-audit-rows.js';
import { consoleClient } from './api.js';
import { heldRows, pagedRows, type RowSource } from './row-pages.js';

/** The fold the view shows: its head and its long lists, held (a short session) or fetched a page at a time. */
export interface ShownAudit {
  readonly head: SessionAuditHead;
  readonly messages: RowSource<AuditReport['messages'][number]>;
  readonly inputs: RowSource<AuditInput>;
  readonly actions: RowSource<ActorAction>;
}

/** A whole fold, its lists held. */
export const shownWhole = (a: SessionAudit): ShownAudit => ({ head: auditHead(a), messages: heldRows(a.report.messages), inputs: heldRows(a.inputs), actions: heldRows(a.actions) });

/** A long session's fold: its head, and its lists fetched from the same fold (at the head's seq) as they come into view. */
export const fetchLongAudit = async (sessionId: string, at: number | undefined, message: string | undefined): Promise<ShownAudit> => {
  const head = await consoleClient.fetchAuditHead(sessionId, at, message);
  return {
    head,
    messages: pagedRows(head.counts.messages, (from, to) => consoleClient.fetchAuditRows(sessionId, head.at, 'messages', from, to).then((p) => p.rows)),
    inputs: pagedRows(head.counts.inputs, (from, to) => consoleClient.fetchAuditRows(sessionId, head.at, 'inputs', from, to).then((p) => p.rows)),
    actions: pagedRows(head.counts.actions, (from, to) => consoleClient.fetchAuditRows(sessionId, head.at, 'actions', from, to).then((p) => p.rows)),
  };
};

