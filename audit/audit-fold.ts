import { basename, extname } from 'node:path';
import { createAuditor, type AuditorOptions, type AuditReport } from '../domain/audit.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import { pastLimit, type AuditLimit } from './audit-limit.js';
import { readLineBatches } from './read-lines.js';

/**
 * Streams an envelope log (one JSON envelope per line) through the auditor, memory flat in the log's length. (The
 * fold alone; `auditLog` runs `auditFileOnePass`, which also gives the extras.)
 */
export const auditFile = async (file: string, limit?: AuditLimit, options?: AuditorOptions): Promise<AuditReport> => {
  const auditor = createAuditor(basename(file, extname(file)), options);
  outer: for await (const lines of readLineBatches(file)) {
    for (const line of lines) {
      if (limit && line.trim() !== '' && pastLimit(safeJson(line), limit)) break outer;
      auditor.push(line);
    }
  }
  return auditor.report();
};

/** Streams a session from a store through the auditor (the fold alone); undefined when the store has no such session. */
export const auditStream = async (store: EventStore, stream: string, limit?: AuditLimit, options?: AuditorOptions): Promise<AuditReport | undefined> => {
  const auditor = createAuditor(stream, options);
  let any = false;
  for await (const e of store.read(stream)) {
    any = true;
    const envelope = envelopeOfRecorded(e);
    if (pastLimit(envelope, limit)) break;
    auditor.push(JSON.stringify(envelope));
  }
  return any ? auditor.report() : undefined;
};

/**
 * A JSONL store's stream file as its store's reader gives it: the session it holds (its header line) and its
 * events as envelope lines. The store adapter reads its own file format; the audit folds what it gives.
 */
export interface StreamFileLines {
  readonly stream: string;
  readonly lines: AsyncIterable<string>;
}

/** How a JSONL store's own stream file is recognised and read (the store adapter knows its format). */
export interface StreamFileReader {
  /** Does the file start with a JSONL store's stream header line? */
  isStreamFile(file: string): Promise<boolean>;
  /** The session the file holds and its committed events as envelope lines (damage is refused, a store error). */
  read(file: string): Promise<StreamFileLines>;
}

/** The fold of a stream file's events (its report only: a store's raw file carries no extras). */
export const auditStreamFileLines = async (file: StreamFileLines): Promise<AuditReport> => {
  const auditor = createAuditor(file.stream);
  for await (const line of file.lines) auditor.push(line);
  return auditor.report();
};

const safeJson = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return null;
  }
};
