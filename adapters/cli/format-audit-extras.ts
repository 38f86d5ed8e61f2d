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
  return `${OTHER_FATES_HEAD}${others.map(otherFateLine).join('\n')}\n`;
};

/** The line that opens the inputs that never entered the model (after a blank line). */
export const OTHER_FATES_HEAD = '\ninputs that did not enter the model:\n';

/** The human line (without its newline) of an input that never entered the model. */
export const otherFateLine = (m: AuditOutput['messages'][number]): string =>
  `  seq ${m.fate.admitted?.seq ?? '?'}  ${m.fate.fate.padEnd(8)}  ${m.id}${m.fate.decided ? ` (at seq ${m.fate.decided.seq})` : ''}`;

/** Who did it, for a human: `by alice (user)`, or `(no actor recorded)` for an event that names none. */
export const byActor = (a: { readonly actor: string | null; readonly actorKind: string | null }): string =>
  a.actor === null ? '(no actor recorded)' : `by ${a.actor}${a.actorKind === null ? '' : ` (${a.actorKind})`}`;

/** The human lines for every admission and control action, each with its actor. */
export const formatActions = (out: AuditOutput): string => {
  if (out.actions.length === 0) return '';
  return `${ACTIONS_HEAD}${out.actions.map(actionLine).join('\n')}\n`;
};

/** The line that opens the actions (after a blank line). */
export const ACTIONS_HEAD = '\nactions:\n';

/** The human line (without its newline) of one admission or control action, with its actor. */
export const actionLine = (a: AuditOutput['actions'][number]): string => {
  const what = a.id ?? (a.turn !== null ? `turn ${a.turn}` : '');
  return `  seq ${a.seq}  ${a.kind.padEnd(8)}  ${what}${what === '' ? '' : '  '}${byActor(a)}`;
};
