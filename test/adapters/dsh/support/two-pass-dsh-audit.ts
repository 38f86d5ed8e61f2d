import { createAuditor, type AuditReport } from '../../../../domain/audit.js';
import { auditExtras, type AuditExtras } from '../../../../audit/audit-extras.js';
import { pastLimit, type AuditLimit } from '../../../../audit/audit-limit.js';
import { untilRefusal } from '../../../../audit/dsh-audit.js';
import { sourceErrorOf } from '../../../../audit/audit-source.js';
import { openDshLog } from '../../../../formats/dsh/dsh-source.js';

/**
 * The reference for the one-pass harness audit: what `audit --format dsh` did before it read the file once — the
 * fold's pass (each envelope pushed as its JSON text), then the extras' pass over a second opening of the file.
 */
export const twoPassDshAudit = async (file: string, limit?: AuditLimit): Promise<{ readonly report: AuditReport; readonly extras: AuditExtras }> => {
  const log = openDshLog(file);
  const read = untilRefusal(log.envelopes);
  const auditor = createAuditor(file);
  for await (const envelope of read.envelopes) {
    if (pastLimit(envelope, limit)) break;
    auditor.push(JSON.stringify(envelope));
  }
  const folded = auditor.report();
  const refusal = read.error();
  const report =
    folded.errors.length === 0 || (refusal && folded.events === 0)
      ? { ...folded, errors: [] }
      : { ...folded, errors: folded.errors.map((e) => (e.seq === null ? e : { ...e, message: `${e.message} (${e.seq === 0 ? 'the harness header' : `harness seq ${e.seq - 1}`})` })) };
  // nothing read: the refusal, not the fold's empty-log complaint, says why
  const error = refusal && report.errors.length === 0 ? sourceErrorOf(refusal) : null;
  const source = { ...log.summary(), error };
  const second = untilRefusal(openDshLog(file).envelopes);
  return { report, extras: { ...(await auditExtras(null, second.envelopes, limit)), source } };
};
