import { createAuditor } from '../domain/audit.js';
import type { AuditReport } from '../domain/audit.js';
import type { Keyring } from '../runtime/content-opener.js';
import type { RawEnvelope } from '../runtime/ports/recorded-envelope.js';
import { auditOutput, createExtrasCollector, type AuditChain, type AuditOutput } from './audit-extras.js';
import type { AuditLimit } from './audit-limit.js';

/**
 * The audit of one session's log advanced envelope by envelope, for a reader that holds the log in memory and moves
 * forward through it (the console's scrubber): at any point `output()` is exactly what `steerlog audit --json`
 * prints of the envelopes pushed so far — the fold's report, the hash chain's verification, each input's fate,
 * the times, the sealed content, the actions — from the same fold and the same collector as `audit --store`.
 */
export interface LogAudit {
  /** Folds and verifies the next envelope of the log (in seq order). */
  push(envelope: RawEnvelope): void;
  /** The fold's report so far (what `AuditOutput` is built from). */
  report(): AuditReport;
  /** What `audit --json` prints of the envelopes pushed so far; `at`: the `--at` limit to report (null: none). */
  output(at?: AuditLimit | null): Promise<AuditOutput>;
  /** The hash chain's verification so far (`output().chain`, without building the rest of the output). */
  chain(): Promise<AuditChain>;
}

/**
 * A fresh {@link LogAudit} of the session `stream`; `keyring` (null: none) says which sealed payloads are readable.
 * The envelopes must be lossless JSON (a live log's and a store's are): the fold reads each one as the JSON value it
 * is (`pushValue`), exactly as it would read the line that writes it.
 */
export const createLogAudit = (stream: string, keyring: Keyring | null = null): LogAudit => {
  const collector = createExtrasCollector(stream, undefined, keyring);
  const auditor = createAuditor(stream, { onFactRecords: collector.factRecords, claimRecords: true });
  return {
    push(envelope) {
      collector.verify(envelope);
      // as a value, not written out as a line and parsed back (the console's 10k-turn audit spent most of its time
      // there); a fresh envelope object for the auditor to own, its fields the stored envelope's own
      auditor.pushValue({ ...envelope });
    },
    report: () => auditor.report(),
    async output(at = null) {
      const extras = await collector.result();
      // a copy: the collector keeps appending to its list as the audit moves on
      return auditOutput(auditor.report(), { ...extras, actions: [...extras.actions] }, at);
    },
    chain: async () => (await collector.result()).chain,
  };
};
