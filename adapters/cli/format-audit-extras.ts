import type { AuditReport } from '../../domain/audit.js';
import type { AuditChain, AuditOutput } from '../../audit/audit-extras.js';
import { formatVerification } from './verification-text.js';

/** The chain lines of the human audit report. */
export const formatAuditChain = (report: AuditReport, chain: AuditChain): string =>
  `\nchain:\n  ${formatVerification({ stream: report.stream, events: chain.chained + chain.unchained, ...chain, signatures: null, anchor: null, ok: false })
    .replace(/^session \S+: /, '')
    .trimEnd()}\n`;

/** The human lines for inputs that never entered the model (canceled, rejected, dropped, pending). */
export const formatOtherFates = (out: AuditOutput): string => {
  const others = out.messages.filter((m) => m.fate.fate !== 'entered');
  if (others.length === 0) return '';
  return `\ninputs that did not enter the model:\n${others.map((m) => `  seq ${m.fate.admitted?.seq ?? '?'}  ${m.fate.fate.padEnd(8)}  ${m.id}${m.fate.decided ? ` (at seq ${m.fate.decided.seq})` : ''}`).join('\n')}\n`;
};

/** Who did it, for a human: `by alice (user)`, or `(no actor recorded)` for an event that names none. */
export const byActor = (a: { readonly actor: string | null; readonly actorKind: string | null }): string =>
  a.actor === null ? '(no actor recorded)' : `by ${a.actor}${a.actorKind === null ? '' : ` (${a.actorKind})`}`;

/** The human lines for every admission and control action, each with its actor. */
export const formatActions = (out: AuditOutput): string => {
  if (out.actions.length === 0) return '';
  const what = (a: AuditOutput['actions'][number]): string => a.id ?? (a.turn !== null ? `turn ${a.turn}` : '');
  return `\nactions:\n${out.actions.map((a) => `  seq ${a.seq}  ${a.kind.padEnd(8)}  ${what(a)}${what(a) === '' ? '' : '  '}${byActor(a)}`).join('\n')}\n`;
};
