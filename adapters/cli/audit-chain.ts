import type { AuditReport } from '../../domain/audit.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { verifySession, type SessionVerification } from '../chain/verify-session.js';
import { fileEnvelopes, storeEnvelopes } from './log-sources.js';
import { formatVerification } from './verify-command.js';

/** The chain part of an audit: what `verify` says about the same log. */
export type AuditChain = Pick<SessionVerification, 'status' | 'chained' | 'unchained' | 'break' | 'head'>;

const summary = (v: SessionVerification): AuditChain => ({ status: v.status, chained: v.chained, unchained: v.unchained, break: v.break, head: v.head });

/** Verifies the chain of a JSONL log file (a second streaming pass). */
export const auditFileChain = async (file: string): Promise<AuditChain> => summary(await verifySession(null, fileEnvelopes(file)));

/** Verifies the chain of a session stream in a store (a second streaming pass). */
export const auditStreamChain = async (store: EventStore, stream: string): Promise<AuditChain> => summary(await verifySession(stream, storeEnvelopes(store, stream)));

/** Does the chain make the audit fail? A broken or unreadable chain does; an unchained (older) log does not. */
export const chainFails = (chain: AuditChain): boolean => chain.status === 'broken' || chain.status === 'unreadable';

/** The chain lines of the human audit report. */
export const formatAuditChain = (report: AuditReport, chain: AuditChain): string =>
  `\nchain:\n  ${formatVerification({ stream: report.stream, events: chain.chained + chain.unchained, ...chain, signatures: null, anchor: null, ok: false })
    .replace(/^session \S+: /, '')
    .trimEnd()}\n`;
