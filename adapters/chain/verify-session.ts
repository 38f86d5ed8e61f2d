import {
  evolveChainCheck,
  initialChainCheck,
  type ChainBreak,
  type ChainCheckState,
  type ChainedFields,
  type ChainHashFn,
  type ChainStatus,
} from '../../domain/event-chain.js';
import { isChainHash } from '../../domain/event-chain.js';
import { sha256ChainHash } from '../../runtime/chain-hash.js';
import type { HeadVerifier } from './ed25519.js';
import { continuedChainCheck, verificationOf, type VerifiedSegment } from './verification-result.js';

/** A link that cannot even be read: not JSON, or an envelope without the fields the chain covers. */
export interface UnreadableEvent {
  readonly kind: 'unreadable';
  readonly seq: number;
  readonly reason: string;
}

/** What is wrong with the signed heads. */
export type SignatureProblem =
  /** No chain/head at all, while a public key was given. */
  | { readonly kind: 'no-signed-head' }
  /** A chain/head whose signature does not verify with the key it names. */
  | { readonly kind: 'bad-signature'; readonly seq: number; readonly keyId: string }
  /** A chain/head signed by a key that was not given. */
  | { readonly kind: 'unknown-key'; readonly seq: number; readonly keyId: string }
  /** Events after the last signed head: not covered by any signature (a session still running, a crash, or events added without the key). */
  | { readonly kind: 'unsigned-tail'; readonly lastSignedSeq: number; readonly events: number };

/** A chain/head that claims a seq or hash the chain does not have (checked with or without keys). */
export interface HeadMismatch {
  readonly kind: 'head-mismatch';
  readonly seq: number;
  readonly claimed: { readonly seq: number; readonly hash: string };
  readonly actual: { readonly seq: number; readonly hash: string } | null;
}

/** An externally kept head (from `steerlog verify --head`) checked against the log. */
export interface AnchorCheck {
  readonly seq: number;
  readonly hash: string;
  /** found: the log has it; missing: the log ends before it (a truncated tail); mismatch: another hash at that seq. */
  readonly verdict: 'found' | 'missing' | 'mismatch';
}

/** The verification of one session's chain. */
export interface SessionVerification {
  readonly stream: string;
  readonly events: number;
  readonly status: ChainStatus | 'unreadable';
  readonly chained: number;
  readonly unchained: number;
  /** The first link that does not hold. */
  readonly break: ChainBreak | UnreadableEvent | HeadMismatch | null;
  /** The last verified event: what `verify --head` prints. */
  readonly head: { readonly seq: number; readonly hash: string } | null;
  /** Present when public keys were given. */
  readonly signatures: {
    readonly heads: number;
    readonly lastSignedSeq: number | null;
    readonly problem: SignatureProblem | null;
  } | null;
  readonly anchor: AnchorCheck | null;
  /** The chain is verified (every event hashed, every link holds), signatures (if checked) and anchor (if given) fine. */
  readonly ok: boolean;
}

/** What to check beyond the chain itself. */
export interface VerifyOptions {
  /** Public keys that check chain/head signatures; none: signatures are not checked. @defaultValue [] */
  readonly verifiers?: readonly HeadVerifier[];
  /** A head kept outside the log; the log must contain it. @defaultValue none */
  readonly anchor?: { readonly seq: number; readonly hash: string };
  /** @defaultValue SHA-256 over RFC 8785 JSON */
  readonly hashOf?: ChainHashFn;
  /** Called after each event (progress). */
  readonly onEvent?: () => void;
  /**
   * Verify a later segment of the log: the events pushed follow the event at `seq` whose hash is `hash`, which
   * another verifier checked (see verify-segments.ts). The verifier's positions, seqs and the first link then
   * continue from there. @defaultValue none: the events pushed start the log
   */
  readonly startsAfter?: { readonly seq: number; readonly hash: string };
}

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
