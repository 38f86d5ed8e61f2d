import { basename, extname } from 'node:path';
import { createAuditor, type Auditor, type AuditorOptions, type AuditReport } from '../domain/audit.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import { isLosslessJson } from '../domain/json.js';
import { auditExtras, createExtrasCollector, type ActionSink, type AuditExtras, type ExtrasCollector } from './audit-extras.js';
import { pastLimit, type AuditLimit } from './audit-limit.js';
import { startChainThread, type ChainThreadOptions } from './chain-thread.js';
import { fileEnvelopes, storeEnvelopes } from './log-sources.js';
import { LOG_BATCH_BYTES, readLineBatches } from './read-lines.js';
import type { Keyring } from '../runtime/content-opener.js';

/** The fold's report and the extras, from one pass over the log. */
export interface AuditPass {
  readonly report: AuditReport;
  readonly extras: AuditExtras;
}

/**
 * What a streaming caller takes as the audit decides it instead of the result holding it: the fold's closed turns and
 * entered messages (`onTurn`, `onMessage`) and the extras' actions (`actions`).
 */
export interface AuditStreams extends AuditorOptions {
  /** Takes every action instead of `AuditExtras.actions`. @defaultValue undefined: the extras keep them */
  readonly actions?: ActionSink;
}

/** The fold's own options of a caller's streams (without the action sink, which is the extras'). */
export const foldOptions = ({ actions: _actions, ...fold }: AuditStreams): AuditorOptions => fold;

/**
 * `audit` of an envelope log file in one streaming pass: each line is read and `JSON.parse`d once, then checked by
 * the chain verifier and folded once (the session fold and the message facts in one step), instead of the fold's
 * pass (`auditFile`) followed by the extras' pass (`auditExtras`). The result is exactly theirs; in the two cases
 * where the extras' own line reading would see other lines than the fold's — a blank line inside the log (the fold
 * stops there, the extras skip it) or a carriage return inside a line (the extras' reader splits there) — the
 * extras are taken from their own pass after this one. On a large file the chain check runs on a worker thread
 * beside the fold (`startChainThread`, `chainThread` tunes it), with the same result.
 */
export const auditFileOnePass = async (
  file: string,
  limit?: AuditLimit,
  options: AuditStreams = {},
  onEvent?: () => void,
  keyring: Keyring | null = null,
  chainThread: ChainThreadOptions = {},
): Promise<AuditPass> => {
  // the chain check on a second core when the file is large enough for it to pay (else here, in the same pass)
  const thread = startChainThread(file, limit, chainThread);
  const collector = createExtrasCollector(null, onEvent, keyring, thread?.result, options.actions);
  try {
    return await onePass(file, limit, options.actions, onEvent, keyring, collector, createAuditor(basename(file, extname(file)), { ...foldOptions(options), onFactRecords: collector.factRecords, claimRecords: true }));
  } finally {
    await thread?.stop();
  }
};

const onePass = async (
  file: string,
  limit: AuditLimit | undefined,
  actions: ActionSink | undefined,
  onEvent: (() => void) | undefined,
  keyring: Keyring | null,
  collector: ExtrasCollector,
  auditor: Auditor,
): Promise<AuditPass> => {
  let blank = false;
  let ownPass = false;
  outer: for await (const lines of readLineBatches(file, { chunkBytes: LOG_BATCH_BYTES })) {
    for (const line of lines) {
      if (line.trim() === '') {
        auditor.push(line);
        blank = true;
        continue;
      }
      if (blank || line.includes('\r')) ownPass = true;
      let raw: unknown;
      let json = true;
      try {
        raw = JSON.parse(line);
      } catch {
        raw = line;
        json = false;
      }
      if (pastLimit(raw, limit)) break outer;
      collector.verify(raw);
      // after the chain check (which only reads it): the auditor freezes a valid event in place
      if (json) auditor.pushValue(raw);
      else auditor.push(line);
    }
  }
  const report = auditor.report();
  return { report, extras: ownPass ? await auditExtras(null, fileEnvelopes(file), limit, onEvent, keyring, actions) : await collector.result() };
};

/**
 * `audit --store` of one session in one read of the store: each event checked by the chain verifier and folded once
 * (`auditStream` then `auditExtras` read it twice). Undefined when the store has no such session. The fold reads each
 * envelope through its JSON text, the extras read the envelope itself: the two differ only for a value JSON text
 * cannot carry (-0, a non-finite number…), and then the extras are taken from their own pass after this one.
 */
export const auditStreamOnePass = async (
  store: EventStore,
  stream: string,
  limit?: AuditLimit,
  options: AuditStreams = {},
  onEvent?: () => void,
  keyring: Keyring | null = null,
): Promise<AuditPass | undefined> => {
  const collector = createExtrasCollector(stream, onEvent, keyring, undefined, options.actions);
  const auditor = createAuditor(stream, { ...foldOptions(options), onFactRecords: collector.factRecords, claimRecords: true });
  let any = false;
  let ownPass = false;
  for await (const e of store.read(stream)) {
    any = true;
    const envelope = envelopeOfRecorded(e);
    if (pastLimit(envelope, limit)) break;
    collector.verify(envelope);
    if (!ownPass && !(isLosslessJson(envelope.data) && (envelope.metadata === undefined || isLosslessJson(envelope.metadata)))) ownPass = true;
    auditor.push(JSON.stringify(envelope));
  }
  if (!any) return undefined;
  const report = auditor.report();
  return { report, extras: ownPass ? await auditExtras(stream, storeEnvelopes(store, stream), limit, onEvent, keyring, options.actions) : await collector.result() };
};
