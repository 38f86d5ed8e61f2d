import { chainInputOf, GENESIS_HASH, type ChainedFields, type ChainHashFn } from '../domain/event-chain.js';
import type { ChainHeadData, LogEvent } from '../domain/events.js';
import { sha256ChainHash } from './chain-hash.js';
import type { SessionLogOptions } from './session-log-types.js';

/** What the chain reads of its session log's options: the stream, the digest and the signer. */
export type SessionChainOptions = Pick<SessionLogOptions, 'stream' | 'hashOf' | 'signer'>;

/**
 * A session log's hash chain: its head (the chain hash of the last event), the hash of the next event linked to it,
 * and the signed head a full checkpoint appends as a `chain/head` event.
 */
export class SessionChain {
  readonly #opts: SessionChainOptions;
  readonly #hashOf: ChainHashFn;
  /** The chain hash of the last event (recomputed for events stored before the chain existed). */
  #head: string;

  /** `initial`: the events the log starts from (a resumed session); `head`: the stored head, when they are not the whole log. */
  constructor(opts: SessionChainOptions, initial: readonly LogEvent[], head?: string) {
    this.#opts = opts;
    this.#hashOf = opts.hashOf ?? sha256ChainHash;
    if (head !== undefined) {
      this.#head = head;
      return;
    }
    // a resumed log continues its chain; a log stored before the chain existed gets one from here on, whose first
    // link covers the unchained prefix as it is now
    head = GENESIS_HASH;
    for (const e of initial) head = e.hash ?? this.#hashOf(chainInputOf(opts.stream, e, head));
    this.#head = head;
  }

  /** The chain hash of the last event (GENESIS_HASH for an empty log). */
  get head(): string {
    return this.#head;
  }

  /**
   * The chain hash of `event`, the next one, linked to the head (which does not move). Throws for what RFC 8785
   * cannot serialize, e.g. a lone surrogate.
   */
  nextHash(event: ChainedFields): string {
    return this.#hashOf(chainInputOf(this.#opts.stream, event, this.#head));
  }

  /** The event whose chain hash is `hash` was appended: it is the head now. */
  advance(hash: string): void {
    this.#head = hash;
  }

  /**
   * The data of a signed `chain/head` for `last`, the event the head hashes: null without a signer, without an event,
   * or when `last` is a `chain/head` already.
   */
  signedHead(last: LogEvent | undefined): ChainHeadData | null {
    const signer = this.#opts.signer;
    if (!signer || !last || last.type === 'chain/head') return null;
    const claim = { stream: this.#opts.stream, seq: last.seq, hash: this.#head };
    return { seq: claim.seq, hash: claim.hash, keyId: signer.keyId, signature: signer.sign(claim) };
  }
}
