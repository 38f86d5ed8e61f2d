import { createAuditor, isDshLogError, openDshLog, type AuditReport, type DshLogError, type DshSummary } from '../../index.js';

/** Audits a harness session log in code (the region below is quoted in docs/audit.md). */
export const auditHarnessLog = async (file: string): Promise<{ report: AuditReport; summary: DshSummary; refusal: DshLogError | null }> => {
  let refusal: DshLogError | null = null;
  // #region harness-log
  const log = openDshLog(file); // plain JSONL or zstd frames, told apart by the magic number
  const auditor = createAuditor(file);
  try {
    for await (const envelope of log.envelopes) auditor.push(JSON.stringify(envelope));
  } catch (e) {
    if (!isDshLogError(e)) throw e; // the file could not be read at all
    refusal = e; // e.code, e.line, e.seq (the harness's), e.byteOffset (a bad frame): nothing past it was read
  }
  const report = auditor.report(); // its seqs are the harness's + 1: seq 0 is the header, read as session/created
  const summary = log.summary(); // what was ignored ({type, count}[]), frames, a torn tail the file ends with
  // #endregion harness-log
  return { report, summary, refusal };
};
