import { chainStatus, type ChainBreak, type ChainCheckState, type ChainHashFn, type ChainStatus } from '../../domain/event-chain.js';
import type { HeadVerifier } from './ed25519.js';

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

/**
 * A log's verification from what its verifiers found: one verifier over the whole log, or one per segment when a
 * long log is checked on several cores (each link needs only the hash stored on the event before it, so segments
 * can be checked side by side and their findings combined in order).
 */

/**
 * What one verifier found over its part of a log (plain data: it crosses threads). A log checked in segments is
 * the in-order combination of its segments' findings (`combineSegments`), exactly what one verifier over the whole
 * log finds.
 */
export interface VerifiedSegment {
  /** The stream the hashes were computed for; null while the first event of the log is not read yet. */
  readonly stream: string | null;
  /** The event this segment follows (`VerifyOptions.startsAfter`); null for the log's first segment. */
  readonly startsAfter: { readonly seq: number; readonly hash: string } | null;
  readonly chain: ChainCheckState;
  readonly failure: UnreadableEvent | HeadMismatch | null;
  /** Position after the last event taken (the count of events from the log's start). */
  readonly count: number;
  readonly heads: number;
  readonly lastSignedSeq: number | null;
  readonly lastSignedHeadSeq: number | null;
  readonly signatureProblem: SignatureProblem | null;
  /** The recomputed hash at the anchor's seq, when this segment holds it. */
  readonly anchorHash: string | null;
}

/** A chain check continuing after the (chained) event at `seq` whose hash is `hash`. */
export const continuedChainCheck = (after: { readonly seq: number; readonly hash: string }): ChainCheckState => ({
  next: after.seq + 1,
  prev: after.hash,
  unchained: 0,
  // counts the event it follows: a chain has begun, so an event without a hash after it is a stripped hash
  chained: 1,
  break: null,
  head: { seq: after.seq, hash: after.hash },
});

/**
 * The verification of a whole log from its segments' findings, in log order (one segment: a whole log). A segment
 * after a break or an unreadable event is not looked at: a single verifier would have stopped there.
 */
export const combineSegments = (segments: readonly VerifiedSegment[], stream: string | null, options: VerifyOptions = {}): SessionVerification => {
  let all: VerifiedSegment | undefined = segments[0];
  if (all === undefined) throw new Error('combineSegments: no segment');
  for (const next of segments.slice(1)) {
    if (all.failure || all.chain.break) break;
    const head = all.chain.head;
    if (next.startsAfter === null || head === null || next.startsAfter.seq !== head.seq || next.startsAfter.hash !== head.hash) {
      throw new Error(`combineSegments: a segment starts after seq ${next.startsAfter?.seq ?? '-'}, the one before it ends at seq ${head?.seq ?? '-'}`);
    }
    const signedBefore: boolean = all.signatureProblem !== null;
    all = {
      stream: all.stream ?? next.stream,
      startsAfter: all.startsAfter,
      chain: {
        next: next.chain.next,
        prev: next.chain.prev,
        unchained: all.chain.unchained + next.chain.unchained,
        // less the event the segment follows, which its chain check counts (continuedChainCheck)
        chained: all.chain.chained + next.chain.chained - 1,
        break: next.chain.break,
        head: next.chain.head,
      },
      failure: next.failure,
      count: next.count,
      heads: all.heads + next.heads,
      // after the first signature problem nothing more is signed (as one verifier stops counting there)
      lastSignedSeq: signedBefore || next.lastSignedSeq === null ? all.lastSignedSeq : next.lastSignedSeq,
      lastSignedHeadSeq: signedBefore || next.lastSignedHeadSeq === null ? all.lastSignedHeadSeq : next.lastSignedHeadSeq,
      signatureProblem: all.signatureProblem ?? next.signatureProblem,
      anchorHash: all.anchorHash ?? next.anchorHash,
    };
  }
  return verificationOf(all, stream, options);
};

/** The verification a verifier's findings amount to (its status, break, head, signatures and anchor). */
export const verificationOf = (found: VerifiedSegment, stream: string | null, options: VerifyOptions): SessionVerification => {
  const verifiers = options.verifiers ?? [];
  const { chain: state, failure, heads, lastSignedSeq, lastSignedHeadSeq, signatureProblem, anchorHash, count } = found;
  const name = found.stream;
  {
    const f = failure as UnreadableEvent | HeadMismatch | null;
    const status: SessionVerification['status'] = f?.kind === 'unreadable' ? 'unreadable' : f ? 'broken' : chainStatus(state);
    const brk = state.break ?? f;
    let problem = signatureProblem;
    if (verifiers.length > 0 && problem === null && brk === null) {
      if (lastSignedHeadSeq === null) problem = { kind: 'no-signed-head' };
      else if (state.next - 1 > lastSignedHeadSeq) {
        problem = { kind: 'unsigned-tail', lastSignedSeq: lastSignedSeq!, events: state.next - 1 - lastSignedHeadSeq };
      }
    }
    let anchor: AnchorCheck | null = null;
    if (options.anchor) {
      const { seq, hash } = options.anchor;
      anchor = { seq, hash, verdict: anchorHash === null ? 'missing' : anchorHash === hash ? 'found' : 'mismatch' };
    }
    // a partly chained log is not "verified": its unchained prefix may be old, or may have had its hashes stripped
    const chainOk = brk === null && status === 'verified';
    return {
      stream: name ?? stream ?? 'unknown',
      events: count,
      status,
      chained: state.chained,
      unchained: state.unchained,
      break: brk,
      head: brk === null ? state.head : null,
      signatures: verifiers.length > 0 ? { heads, lastSignedSeq, problem } : null,
      anchor,
      ok: chainOk && problem === null && (anchor === null || anchor.verdict === 'found'),
    };
  }
};

