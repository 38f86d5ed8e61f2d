import type { EventStore } from '../runtime/ports/event-store.js';
import { verifySession, type SessionVerification, type VerifyOptions } from '../formats/chain/verify-session.js';
import { listStreams, storeEnvelopes } from './log-sources.js';
import { resolveFileFormat, type FormatOption, type LogFormat } from './log-format.js';
import { verifyFile, type VerifyFileKey } from './verify-file.js';

/** A head kept outside the log, as `verify --anchor <seq>:<hash>` takes it (and `verify --head` prints it). */
export interface ChainAnchor {
  readonly seq: number;
  readonly hash: string;
}

/** Parses `<seq>:<64 hex digits>`; null when the text is not an anchor. */
export const parseChainAnchor = (text: string): ChainAnchor | null => {
  const m = /^(\d+):([0-9a-f]{64})$/.exec(text);
  return m ? { seq: Number(m[1]), hash: m[2]! } : null;
};

/** What {@link verifyLog} reads: one log file, or sessions of an opened store (`'all'`: every session it holds). */
export type VerifySource =
  | { readonly kind: 'file'; readonly path: string; readonly format?: FormatOption }
  | { readonly kind: 'store'; readonly store: EventStore; readonly sessions: readonly string[] | 'all' };

/** Options of {@link verifyLog}. */
export interface VerifyLogOptions {
  /** The public keys signed heads are checked with. @defaultValue [] (signatures are not checked) */
  readonly publicKeys?: readonly VerifyFileKey[];
  /** A head kept elsewhere that the log must still hold. @defaultValue none */
  readonly anchor?: ChainAnchor;
  /** Told once per event read (a progress display). @defaultValue none */
  readonly onEvent?: () => void;
}

/** Every session's verification, the format the file was read as, and the verdict (every session verified). */
export interface VerifyLogResult {
  readonly kind: 'verified';
  readonly ok: boolean;
  readonly format: LogFormat;
  readonly sessions: readonly SessionVerification[];
}

/** A session named by id that the store does not hold (a store source with explicit ids). */
export interface VerifyLogMissing {
  readonly kind: 'no-such-session';
  readonly session: string;
}

/**
 * The verify use case: recomputes each session's hash chain and reports the first broken link; with public keys,
 * checks the signed chain heads and reports truncation; with an anchor, checks the log still holds that head. A
 * long steerlog file is checked on several cores (`verifyFile`); a harness log has no steerlog chain and is
 * reported unchained, never verified. A session id the store does not hold stops it (`no-such-session`).
 */
export function verifyLog(source: VerifySource & { readonly kind: 'file' }, options?: VerifyLogOptions): Promise<VerifyLogResult>;
export function verifyLog(source: VerifySource, options?: VerifyLogOptions): Promise<VerifyLogResult | VerifyLogMissing>;
export async function verifyLog(source: VerifySource, options: VerifyLogOptions = {}): Promise<VerifyLogResult | VerifyLogMissing> {
  const publicKeys = options.publicKeys ?? [];
  const verify: VerifyOptions = { verifiers: publicKeys.map((k) => k.verifier), ...(options.anchor ? { anchor: options.anchor } : {}), ...(options.onEvent ? { onEvent: options.onEvent } : {}) };
  const results: SessionVerification[] = [];
  if (source.kind === 'store') {
    const all = source.sessions === 'all';
    for (const s of all ? await listStreams(source.store) : source.sessions) {
      const v = await verifySession(s, storeEnvelopes(source.store, s), verify);
      if (v.status === 'empty' && !all) return { kind: 'no-such-session', session: s };
      results.push(v);
    }
    return { kind: 'verified', ok: results.every((r) => r.ok), format: 'steerlog', sessions: results };
  }
  const format = await resolveFileFormat(source.path, source.format ?? 'auto');
  results.push(
    format === 'dsh'
      ? // loaded only for a harness log: verify's start-up stays free of the harness reader (and of zod); every event is unchained
        await verifySession(null, (await import('../formats/dsh/dsh-source.js')).openDshLog(source.path).envelopes, verify)
      : // a long log is checked on several cores (verify-file.ts), with the same result
        await verifyFile(source.path, { publicKeys, ...(options.anchor ? { anchor: options.anchor } : {}), ...(options.onEvent ? { onEvent: options.onEvent } : {}) }),
  );
  return { kind: 'verified', ok: results.every((r) => r.ok), format, sessions: results };
}
