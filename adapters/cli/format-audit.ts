import type { AuditReport } from '../../domain/audit.js';

const list = (ids: readonly string[]): string => (ids.length === 0 ? '(empty)' : ids.join(', '));

/** An audit report whose errors may also come from a reader of another format (their codes are strings). */
export type PrintableAuditReport = Omit<AuditReport, 'errors'> & { readonly errors: readonly { readonly seq: number | null; readonly code: string; readonly message: string }[] };

/** The human audit report: verdict, turn timeline, pending lists, queue, message classes, consumed work. */
export const formatAuditReport = (r: PrintableAuditReport): string => {
  const out: string[] = [];
  out.push(`session ${r.stream}: ${r.events} event${r.events === 1 ? '' : 's'}, ${r.ok ? 'valid' : 'INVALID'}`);
  for (const e of r.errors) out.push(`  error [${e.code}] ${e.message}${r.ok ? '' : ' (nothing past it was applied)'}`);
  out.push('', 'turns:');
  if (r.turns.length === 0) out.push('  (none)');
  for (const t of r.turns) {
    const span = t.endSeq === null ? `seq ${t.startSeq}–…` : `seq ${t.startSeq}–${t.endSeq}`;
    out.push(`  turn ${t.turn}  ${span}  ${t.reason ?? 'open'}  ${t.steps} step${t.steps === 1 ? '' : 's'}  claimed: ${list(t.claimed)}`);
    // attempts per step: each failed model request, and whether the request-error step retried it
    for (const f of t.failedRequests ?? []) {
      out.push(`    step ${f.step} attempt ${f.attempt} failed at seq ${f.seq}: ${f.code}${f.status !== undefined ? ` (HTTP ${f.status})` : ''}, ${f.retried ? 'retried' : 'not retried'}`);
    }
  }
  out.push('', 'messages:');
  if (r.messages.length === 0) out.push('  (none)');
  for (const m of r.messages) out.push(`  seq ${m.seq}  ${m.class.padEnd(8)}  ${m.id}`);
  out.push('', 'pending:', `  next-turn: ${list(r.inbox.nextTurn)}`, `  next-step: ${list(r.inbox.nextStep)}`);
  if (r.queue.length > 0) out.push('  queue: ' + r.queue.map((q) => `${q.id} (${q.placement})`).join(', '));
  if (r.lineage) {
    const depth = r.lineage.delegationDepth === null ? '' : `, depth ${r.lineage.delegationDepth}`;
    out.push('', `parent: ${r.lineage.parentSession} (${r.lineage.origin ?? 'fork'}${depth})`);
  }
  if (r.children) {
    out.push('', 'children:');
    for (const c of r.children) {
      out.push(`  ${c.childSessionId}  ${c.mode ?? 'unknown mode'}`);
      for (const e of c.epochs) out.push(`    epoch ${e.epoch}  seq ${e.startSeq}–${e.endSeq ?? '…'}  ${e.stopReason ?? 'open'}`);
      if (c.reports.length > 0) out.push(`    reports at seq ${c.reports.map((m) => m.seq).join(', ')}`);
      if (c.settlements.length > 0) out.push(`    settlements at seq ${c.settlements.map((m) => m.seq).join(', ')}`);
    }
  }
  const cw = r.consumedWork;
  out.push(
    '',
    'consumed work:',
    `  last accounting turn: ${cw.endTurn === null ? 'none' : `turn ${cw.endTurn} (turn/end at seq ${cw.endSeq})`}`,
    `  unrun work canceled after it: ${cw.droppedUnrun ? 'yes' : 'no'}`,
    '',
  );
  return out.join('\n');
};
