import type { AuditReport } from '../../domain/audit.js';
import type { ChildEpoch, ChildRecord } from '../../domain/children/index.js';

const list = (ids: readonly string[]): string => (ids.length === 0 ? '(empty)' : ids.join(', '));

/** An audit report whose errors may also come from a reader of another format (their codes are strings). */
export type PrintableAuditReport = Omit<AuditReport, 'errors'> & { readonly errors: readonly { readonly seq: number | null; readonly code: string; readonly message: string }[] };

/** The human audit report: verdict, turn timeline, pending lists, queue, message classes, consumed work. */
export const formatAuditReport = (r: PrintableAuditReport): string => {
  const out: string[] = [auditReportHead(r)];
  if (r.turns.length === 0) out.push('  (none)\n');
  for (const t of r.turns) out.push(...turnTextPieces(t));
  out.push('\nmessages:\n');
  if (r.messages.length === 0) out.push('  (none)\n');
  for (const m of r.messages) out.push(`${messageLine(m)}\n`);
  out.push(auditReportTail(r));
  return out.join('');
};

/** The human report's first lines, up to its `turns:` line (each line ends in a newline). */
export const auditReportHead = (r: PrintableAuditReport): string => {
  const out: string[] = [];
  out.push(`session ${r.stream}: ${r.events} event${r.events === 1 ? '' : 's'}, ${r.ok ? 'valid' : 'INVALID'}`);
  for (const e of r.errors) out.push(`  error [${e.code}] ${e.message}${r.ok ? '' : ' (nothing past it was applied)'}`);
  out.push('', 'turns:', '');
  return out.join('\n');
};

/** One turn's lines with their newlines, in pieces whose join is the text (a turn of many claims: its ids a few at a time). */
export function* turnTextPieces(t: AuditReport['turns'][number]): Generator<string> {
  const span = t.endSeq === null ? `seq ${t.startSeq}–…` : `seq ${t.startSeq}–${t.endSeq}`;
  const head = `  turn ${t.turn}  ${span}  ${t.reason ?? 'open'}  ${t.steps} step${t.steps === 1 ? '' : 's'}  claimed: `;
  const claimed = t.claimed;
  if (claimed.length === 0) yield `${head}(empty)`;
  else {
    let piece = head;
    for (let i = 0; i < claimed.length; i++) {
      piece += i === 0 ? claimed[i]! : `, ${claimed[i]!}`;
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
      }
    }
    yield piece;
  }
  // attempts per step: each failed model request, and whether the request-error step retried it
  let failures = '\n';
  for (const f of t.failedRequests ?? []) {
    failures += `    step ${f.step} attempt ${f.attempt} failed at seq ${f.seq}: ${f.code}${f.status !== undefined ? ` (HTTP ${f.status})` : ''}, ${f.retried ? 'retried' : 'not retried'}\n`;
  }
  yield failures;
}

/** Pieces of a turn's text are cut once they reach this many characters. */
const PIECE_CHARS = 64 * 1024;

/** One entered message's line (without its newline). */
export const messageLine = (m: AuditReport['messages'][number]): string => `  seq ${m.seq}  ${m.class.padEnd(8)}  ${m.id}`;

/** The human report's lines after its messages: pending lists, queue, lineage, children, consumed work (from its blank line on). */
export const auditReportTail = (r: PrintableAuditReport): string => {
  const out = auditReportPending(r);
  if (r.children) {
    out.push('', 'children:');
    for (const c of r.children) {
      out.push(childLine(c));
      for (const e of c.epochs) out.push(epochLine(e));
      if (c.reports.length > 0) out.push(`${REPORTS_AT}${c.reports.map((m) => m.seq).join(', ')}`);
      if (c.settlements.length > 0) out.push(`${SETTLEMENTS_AT}${c.settlements.map((m) => m.seq).join(', ')}`);
    }
  }
  out.push(...auditReportConsumed(r));
  return out.join('\n');
};

/** The tail's lines before its children: its blank line, the pending lists, the queue, the lineage. */
export const auditReportPending = (r: PrintableAuditReport): string[] => {
  const out: string[] = [];
  out.push('', 'pending:', `  next-turn: ${list(r.inbox.nextTurn)}`, `  next-step: ${list(r.inbox.nextStep)}`);
  if (r.queue.length > 0) out.push('  queue: ' + r.queue.map((q) => `${q.id} (${q.placement})`).join(', '));
  if (r.lineage) {
    const depth = r.lineage.delegationDepth === null ? '' : `, depth ${r.lineage.delegationDepth}`;
    out.push('', `parent: ${r.lineage.parentSession} (${r.lineage.origin ?? 'fork'}${depth})`);
  }
  return out;
};

/** A child's first line in the tail: its id and mode. */
export const childLine = (c: Pick<ChildRecord, 'childSessionId' | 'mode'>): string => `  ${c.childSessionId}  ${c.mode ?? 'unknown mode'}`;

/** A child's epoch in the tail. */
export const epochLine = (e: ChildEpoch): string => `    epoch ${e.epoch}  seq ${e.startSeq}–${e.endSeq ?? '…'}  ${e.stopReason ?? 'open'}`;

/** What starts a child's line of report seqs (joined by `, `), and of settlement seqs. */
export const REPORTS_AT = '    reports at seq ';
export const SETTLEMENTS_AT = '    settlements at seq ';

/** The tail's lines after its children: consumed work, and the report's last newline. */
export const auditReportConsumed = (r: PrintableAuditReport): string[] => {
  const cw = r.consumedWork;
  return [
    '',
    'consumed work:',
    `  last accounting turn: ${cw.endTurn === null ? 'none' : `turn ${cw.endTurn} (turn/end at seq ${cw.endSeq})`}`,
    `  unrun work canceled after it: ${cw.droppedUnrun ? 'yes' : 'no'}`,
    '',
  ];
};
