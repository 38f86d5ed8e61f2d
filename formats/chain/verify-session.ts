import {
  evolveChainCheck,
  initialChainCheck,
  type ChainCheckState,
  type ChainedFields,
} from '../../domain/event-chain.js';
import { isChainHash } from '../../domain/event-chain.js';
import { sha256ChainHash } from '../../runtime/chain-hash.js';
import {
  continuedChainCheck,
  verificationOf,
  type HeadMismatch,
  type SessionVerification,
  type SignatureProblem,
  type UnreadableEvent,
  type VerifiedSegment,
  type VerifyOptions,
} from './verification-result.js';

export type { AnchorCheck, HeadMismatch, SessionVerification, SignatureProblem, UnreadableEvent, VerifyOptions } from './verification-result.js';

const BAD_HASH = 'hash is not 64 hex digits';

const readFields = (raw: unknown, position: number): ChainedFields | UnreadableEvent => {
  const bad = (reason: string): UnreadableEvent => ({ kind: 'unreadable', seq: position, reason });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('not a JSON object');
  const e = raw as Record<string, unknown>;
  if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq)) return bad('seq is not an integer');
  if (typeof e.id !== 'string') return bad('id is not a string');
  if (typeof e.time !== 'number') return bad('time is not a number');
  if (typeof e.type !== 'string') return bad('type is not a string');
  if (!('data' in e)) return bad('data is missing');
  if (e.ignorable !== undefined && e.ignorable !== true) return bad('ignorable is neither true nor absent');
  if (e.metadata !== undefined && (typeof e.metadata !== 'object' || e.metadata === null || Array.isArray(e.metadata))) return bad('metadata is not an object');
  // a malformed hash string is found when its link does not hold (see push): a hash equal to the recomputed one is well formed
  if (e.hash !== undefined && (typeof e.hash !== 'string' || e.hash.length !== 64)) return bad(BAD_HASH);
  return raw as ChainedFields;
};

/** The stream a log's first event names: a session/created's sessionId, else 'unknown'. */
const streamNameOf = (first: ChainedFields): string => {
  const sid = first.type === 'session/created' ? (first.data as { sessionId?: unknown } | null)?.sessionId : undefined;
  return typeof sid === 'string' ? sid : 'unknown';
};

/**
 * The stream a verifier with no stream given names a log after, from the log's first event (raw); null when that
 * event cannot be read (the verifier then stops at it).
 */
export const streamOfFirstEvent = (raw: unknown): string | null => {
  const fields = readFields(raw, 0);
  return 'kind' in fields ? null : streamNameOf(fields);
};

const asHeadClaim = (data: unknown): { seq: number; hash: string; keyId: string; signature: string } | null => {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  return typeof d.seq === 'number' && typeof d.hash === 'string' && typeof d.keyId === 'string' && typeof d.signature === 'string'
    ? { seq: d.seq, hash: d.hash, keyId: d.keyId, signature: d.signature }
    : null;
};

/** An incremental verifier: push each raw event in log order, then read the result. */
export interface SessionVerifier {
  /** Checks one raw event (a parsed JSON envelope); returns false once a link failed (later events are ignored). */
  push(raw: unknown): boolean;
  result(): SessionVerification;
  /** What the verifier found so far, to combine with the segments after it (`combineSegments`). */
  segment(): VerifiedSegment;
}


/**
 * Verifies one session's chain as it streams by (memory flat in the log's length): recomputes every hash, stops at
 * the first broken link, checks every chain/head against the chain (and, given keys, its signature), and the anchor.
 * `stream` is the session's stream id; `null` takes it from the first event (a session/created's sessionId).
 */
export const createSessionVerifier = (stream: string | null, options: VerifyOptions = {}): SessionVerifier => {
  const hashOf = options.hashOf ?? sha256ChainHash;
  const verifiers = options.verifiers ?? [];
  let name = stream;
  const after = options.startsAfter ?? null;
  // a later segment continues a chain that has begun (its first event is chained: see verify-segments.ts)
  let state: ChainCheckState = after ? continuedChainCheck(after) : initialChainCheck();
  let failure: UnreadableEvent | HeadMismatch | null = null;
  let heads = 0;
  let lastSignedSeq: number | null = null;
  let lastSignedHeadSeq: number | null = null;
  let signatureProblem: SignatureProblem | null = null;
  let anchorHash: string | null = null;
  let count = after ? after.seq + 1 : 0;

  const push = (raw: unknown): boolean => {
    if (failure || state.break) return false;
    const fields = readFields(raw, count);
    if ('kind' in fields) {
      failure = fields;
      return false;
    }
    name ??= streamNameOf(fields);
    const before = state.head;
    const checked = evolveChainCheck(state, name, fields, hashOf);
    if (checked.break) {
      // unreadable before broken, as if readFields had checked every hex digit first
      if (fields.hash !== undefined && !isChainHash(fields.hash)) failure = { kind: 'unreadable', seq: count, reason: BAD_HASH };
      else state = checked;
      return false;
    }
    state = checked;
    count++;
    options.onEvent?.();
    if (options.anchor && fields.seq === options.anchor.seq) anchorHash = state.head!.hash;
    if (fields.type === 'chain/head') {
      heads++;
      const claim = asHeadClaim(fields.data);
      if (!claim || !before || claim.seq !== before.seq || claim.hash !== before.hash) {
        failure = { kind: 'head-mismatch', seq: fields.seq, claimed: { seq: claim?.seq ?? -1, hash: claim?.hash ?? '' }, actual: before };
        return false;
      }
      if (verifiers.length > 0 && signatureProblem === null) {
        const verifier = verifiers.find((v) => v.keyId === claim.keyId);
        if (!verifier) signatureProblem = { kind: 'unknown-key', seq: fields.seq, keyId: claim.keyId };
        else if (!verifier.verify({ stream: name, seq: claim.seq, hash: claim.hash }, claim.signature)) {
          signatureProblem = { kind: 'bad-signature', seq: fields.seq, keyId: claim.keyId };
        } else {
          lastSignedSeq = claim.seq;
          lastSignedHeadSeq = fields.seq;
        }
      }
    }
    return true;
  };

  const segment = (): VerifiedSegment => ({
    stream: name,
    startsAfter: after,
    chain: state,
    failure,
    count,
    heads,
    lastSignedSeq,
    lastSignedHeadSeq,
    signatureProblem,
    anchorHash,
  });
  return { push, result: () => verificationOf(segment(), stream, options), segment };
};

/** `createSessionVerifier` over a whole (async) iterable of raw events. */
export const verifySession = async (
  stream: string | null,
  events: AsyncIterable<unknown> | Iterable<unknown>,
  options: VerifyOptions = {},
): Promise<SessionVerification> => {
  const verifier = createSessionVerifier(stream, options);
  for await (const raw of events) if (!verifier.push(raw)) break;
  return verifier.result();
};
