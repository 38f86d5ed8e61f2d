import { open, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isChainHash } from '../domain/event-chain.js';
import { ed25519Verifier, type HeadVerifier } from '../formats/chain/ed25519.js';
import { combineSegments, type VerifiedSegment } from '../formats/chain/verification-result.js';
import { createSessionVerifier, streamOfFirstEvent, type SessionVerification, type VerifyOptions } from '../formats/chain/verify-session.js';
import { fileEnvelopeBatches } from './log-sources.js';
import { lineValue } from './read-lines.js';
import { startWorkerTask, workerMode, type WorkerTask } from './worker-task.js';

/**
 * `verify` of one JSONL log file, on several cores when it is long. Each link of the chain needs only the hash stored
 * on the event before it, so the file is cut into byte ranges at lines, each range is verified on its own thread
 * starting after the stored hash of the event just before it, and the findings are combined in order
 * (`combineSegments`): the first range's verifier checks the event each cut follows, so the combination is exactly
 * what one verifier reading the whole file finds — the first broken link, the counts, the signed heads, the anchor.
 */

/**
 * A public key that checks signed heads, parsed once: its PEM text and where it came from, which the workers are sent
 * (each parses them once), and this thread's verifier of it. Made by {@link verifyFileKey}.
 */
export interface VerifyFileKey {
  readonly pem: string;
  /** Where the key came from (its file), named by a `SigningKeyError`. */
  readonly where: string;
  /** This thread's verifier of `pem`. */
  readonly verifier: HeadVerifier;
}

/** Parses a PEM public key for {@link verifyFile}; a `SigningKeyError` naming `where` when it is not an Ed25519 public key. */
export const verifyFileKey = (pem: string, where: string): VerifyFileKey => ({ pem, where, verifier: ed25519Verifier(pem, where) });

/** Options of {@link verifyFile}. */
export interface VerifyFileOptions {
  /** The public keys that check signed heads (this thread uses their verifiers, the workers their PEM texts). @defaultValue none */
  readonly publicKeys?: readonly VerifyFileKey[];
  /** A head kept outside the log; the log must contain it. @defaultValue none */
  readonly anchor?: VerifyOptions['anchor'];
  /** Called after each verified event (on this thread; a worker's events are reported in batches). */
  readonly onEvent?: () => void;
  /** Most ranges (threads, this one included). @defaultValue the machine's cores, at most 4 */
  readonly segments?: number;
  /** Least bytes a range holds: a worker's start costs about what checking a few megabytes does. @defaultValue 8 MiB */
  readonly minSegmentBytes?: number;
  /** `STEERLOG_CHAIN_THREAD=0` keeps the check on this thread, `=1` cuts whatever the size. @defaultValue process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** The workers' compiled entry. @defaultValue verify-segment-entry.js beside this module */
  readonly entry?: URL;
  /** Told how many byte ranges the file is verified in (1: on this thread alone). @defaultValue none */
  readonly onRanges?: (ranges: number) => void;
  /** Told when a worker failed and its range was verified on this thread instead. @defaultValue none */
  readonly onWorkerFailure?: (error: unknown) => void;
}

/** What a segment's worker is given. */
export interface SegmentTask {
  readonly file: string;
  readonly start: number;
  /** Exclusive; none: to the file's end. */
  readonly end: number | undefined;
  readonly stream: string;
  readonly startsAfter: { readonly seq: number; readonly hash: string };
  readonly publicKeys: readonly { readonly pem: string; readonly where: string }[];
  readonly anchor: VerifyOptions['anchor'] | null;
}

const ENTRY = new URL('./verify-segment-entry.js', import.meta.url);
const MIB = 1024 * 1024;

/** The verification of a JSONL log file: the same as `verifySession(null, fileEnvelopes(file), …)`, sooner on several cores. */
export const verifyFile = async (file: string, options: VerifyFileOptions = {}): Promise<SessionVerification> => {
  const verify: VerifyOptions = {
    verifiers: (options.publicKeys ?? []).map((k) => k.verifier),
    ...(options.anchor ? { anchor: options.anchor } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  };
  const entry = fileURLToPath(options.entry ?? ENTRY);
  const plan = await planSegments(file, entry, options);
  options.onRanges?.(plan === null ? 1 : plan.cuts.length + 1);
  if (plan === null) return (await verifyRange(file, 0, undefined, null, null, verify)).result;
  const { stream, cuts } = plan;
  // a worker is sent the keys' texts (a verifier cannot be sent) and parses them itself, once
  const publicKeys = (options.publicKeys ?? []).map(({ pem, where }) => ({ pem, where }));
  const task = (i: number): SegmentTask => ({
    file,
    start: cuts[i - 1]!.end,
    end: cuts[i]?.end,
    stream,
    startsAfter: cuts[i - 1]!.after,
    publicKeys,
    anchor: options.anchor ?? null,
  });
  const onProgress = (events: number): void => {
    for (let i = 0; i < events; i++) options.onEvent?.();
  };
  const workers: WorkerTask<VerifiedSegment>[] = [];
  try {
    for (let i = 1; i <= cuts.length; i++) workers.push(startWorkerTask<VerifiedSegment>(entry, task(i), { onProgress, resourceLimits: { maxYoungGenerationSizeMb: 4 } }));
    const first = await verifyRange(file, 0, cuts[0]!.end, null, null, verify);
    const segments: VerifiedSegment[] = [first.segment];
    for (let i = 1; i <= cuts.length; i++) {
      // the first broken link is before this range: a single verifier would not have read it
      const last = segments[segments.length - 1]!;
      if (last.failure || last.chain.break) break;
      // a worker that fails (it could not start, ran out of memory…) costs time, never the answer
      const t = task(i);
      const found = await workers[i - 1]!.result.catch(async (e: unknown) => {
        options.onWorkerFailure?.(e);
        return (await verifyRange(file, t.start, t.end, stream, t.startsAfter, verify)).segment;
      });
      segments.push(found);
    }
    return combineSegments(segments, null, verify);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
};

/** Verifies the lines of `file[start, end)` on this thread. */
export const verifyRange = async (
  file: string,
  start: number,
  end: number | undefined,
  stream: string | null,
  startsAfter: SegmentTask['startsAfter'] | null,
  options: VerifyOptions,
): Promise<{ readonly segment: VerifiedSegment; readonly result: SessionVerification }> => {
  const verifier = createSessionVerifier(stream, { ...options, ...(startsAfter ? { startsAfter } : {}) });
  reading: for await (const batch of fileEnvelopeBatches(file, { start, ...(end !== undefined ? { end } : {}) })) {
    for (const raw of batch) if (!verifier.push(raw)) break reading;
  }
  return { segment: verifier.segment(), result: verifier.result() };
};

/** Where a long file is cut: after each cut's line (`end`: the byte after its `\n`), the chain continues from `after`. */
interface SegmentPlan {
  readonly stream: string;
  readonly cuts: readonly { readonly end: number; readonly after: { readonly seq: number; readonly hash: string } }[];
}

/**
 * The cuts of a long file, or null to verify it on this thread: a short file, one core, no compiled worker entry
 * (running from sources), a first event that cannot be read, or no line near a cut that can carry one (a cut is
 * made only after a line that is one chained event: a JSON object with an integer seq and a well-formed hash).
 */
const planSegments = async (file: string, entry: string, options: VerifyFileOptions): Promise<SegmentPlan | null> => {
  const mode = workerMode(options.env ?? process.env, entry);
  if (mode === 'off') return null;
  const forced = mode === 'forced';
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const most = options.segments ?? Math.min(availableParallelism(), 4);
    const parts = forced ? Math.max(2, most) : Math.min(most, Math.floor(size / (options.minSegmentBytes ?? 8 * MIB)));
    if (parts < 2) return null;
    const first = await nonBlankLineFrom(fh, 0, size);
    const firstPiece = first?.text.split('\r').find((p) => p.trim() !== '');
    const stream = firstPiece === undefined ? null : streamOfFirstEvent(lineValue(firstPiece));
    if (stream === null) return null;
    const cuts: { end: number; after: { seq: number; hash: string } }[] = [];
    for (let i = 1; i < parts; i++) {
      const line = await nonBlankLineFrom(fh, Math.floor((size * i) / parts), size);
      if (line === null || line.end >= size || line.end <= (cuts[cuts.length - 1]?.end ?? 0) || line.text.includes('\r')) continue;
      const raw = lineValue(line.text) as { seq?: unknown; hash?: unknown } | string;
      if (typeof raw !== 'object' || raw === null || !Number.isSafeInteger(raw.seq) || !isChainHash(raw.hash)) continue;
      cuts.push({ end: line.end, after: { seq: raw.seq as number, hash: raw.hash } });
    }
    return cuts.length === 0 ? null : { stream, cuts };
  } finally {
    await fh.close();
  }
};

const NEWLINE = 0x0a;
const CHUNK = 64 * 1024;

/** The first line that starts at or after byte `from` and is not blank: its text (without `\n` or a `\r` before it) and the byte after its `\n`. */
const nonBlankLineFrom = async (fh: FileHandle, from: number, size: number): Promise<{ text: string; end: number } | null> => {
  // a line starts at 0 or just after a \n
  let start = from === 0 ? 0 : await newlineFrom(fh, from - 1, size);
  if (start < 0) return null;
  if (from > 0) start++;
  while (start < size) {
    const nl = await newlineFrom(fh, start, size);
    const end = nl < 0 ? size : nl;
    const bytes = Buffer.alloc(end - start);
    for (let got = 0; got < bytes.length; ) {
      const { bytesRead } = await fh.read(bytes, got, bytes.length - got, start + got);
      if (bytesRead === 0) return null; // the file shrank under us: verify on this thread, which reports what it finds
      got += bytesRead;
    }
    const text = bytes.toString('utf8', 0, bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length);
    if (text.trim() !== '') return { text, end: nl < 0 ? size : nl + 1 };
    if (nl < 0) return null;
    start = nl + 1;
  }
  return null;
};

/** The offset of the first `\n` at or after `from`, or -1. */
const newlineFrom = async (fh: FileHandle, from: number, size: number): Promise<number> => {
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let pos = from; pos < size; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, size - pos), pos);
    if (bytesRead === 0) break;
    const i = buf.subarray(0, bytesRead).indexOf(NEWLINE);
    if (i >= 0) return pos + i;
    pos += bytesRead;
  }
  return -1;
};
